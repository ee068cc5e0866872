// The `gpt` frontend: a workload file whose [workload] table says generator = "gpt" (Megatron-LM's GPT and
// Llama-style shapes, docs/datacenter.md). Its parameters are what the kernel or an experiment changes per run:
// the micro-batch and the rank of a tensor-, sequence- or context-parallel group.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/frontend.hpp"
#include "gpt.hpp"

namespace monet::plugins {
namespace {

class GptFrontend final : public WorkloadFrontend {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::frontend;
    i.name = "gpt";
    i.version = "1.0.0";
    i.summary = "Megatron-LM's GPT and Llama-style models generated from their dimensions (docs/datacenter.md)";
    i.description =
        "Reads a TOML workload file whose [workload] table says generator = \"gpt\" and gives hidden, layers, heads, "
        "seq_length, vocab, ffn_hidden, micro_batch, global_batch, tensor_parallel (one rank of a tensor-parallel "
        "group), sequence_parallel (that rank with Megatron's sequence parallelism), context_parallel (one rank of a "
        "context-parallel group) and Megatron's options for Llama-style models: num_query_groups, kv_channels, "
        "swiglu, bias_swiglu_fusion, normalization (LayerNorm, RMSNorm), add_bias_linear, position_embedding_type "
        "(learned_absolute, rope, alibi), embedding_layernorm, untie_embeddings_and_output_weights, attention_backend (unfused, flash). Operator "
        "and module names follow Megatron-core (\"layers.3.self_attention.linear_qkv\"). Chosen by the file's "
        "generator key; `batch` overrides micro_batch.";
    i.params = {ParamSpec::integer("batch", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("samples")
                    .with_doc("overrides the file's micro_batch; 0 keeps the file's"),
                ParamSpec::integer("tensor_parallel", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("chips")
                    .with_doc("overrides the file's tensor_parallel (the kernel sets it from [parallelism] tensor for "
                              "a step on a system of chips); 0 keeps the file's"),
                ParamSpec::boolean("sequence_parallel", false)
                    .with_doc("the rank with Megatron's sequence parallelism (norms, dropouts and residuals split "
                              "along the sequence; the kernel sets it from [parallelism] sequence_parallel); false "
                              "keeps the file's"),
                ParamSpec::integer("context_parallel", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("chips")
                    .with_doc("overrides the file's context_parallel (the kernel sets it from [parallelism] context); "
                              "0 keeps the file's")};
    return i;
  }
  explicit GptFrontend(const ParamValues& p)
      : overrides_{p.get_int("batch"), p.get_int("tensor_parallel"), p.get_bool("sequence_parallel"),
                   p.get_int("context_parallel")} {}

  [[nodiscard]] GraphPtr load(const std::filesystem::path& file) const override {
    return build_gpt(TomlDocument::parse_file(file), overrides_);
  }
  [[nodiscard]] GraphPtr load_document(const TomlDocument& doc) const override { return build_gpt(doc, overrides_); }

 private:
  GptOverrides overrides_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::GptFrontend)
