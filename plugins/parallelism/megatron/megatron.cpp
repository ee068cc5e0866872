// Megatron-LM's tensor parallelism for GPT (Shoeybi et al. 2019; Narayanan et al. SC'21 §2.3): each layer's
// attention and MLP are a column-parallel linear layer followed by a row-parallel one, so the forward pass
// all-reduces the row-parallel outputs (linear_proj, linear_fc2) and the backward pass all-reduces the gradient of
// the column-parallel inputs (linear_qkv, linear_fc1): Megatron's conjugate operators g and f. The word embedding
// is split by vocabulary (its lookup is all-reduced), and so are the logits: the cross-entropy all-reduces the
// row maximum, the target logit and the sum of exponentials (3 fp32 values per token), and the backward pass
// all-reduces the gradient of the output layer's input. Operators are recognised by Megatron-core's module names,
// which the `gpt` workload generator writes (docs/datacenter.md).
#include <string>
#include <string_view>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/util/error.hpp"

namespace monet::plugins {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class Megatron final : public ParallelismModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::parallelism;
    i.name = "megatron";
    i.version = "1.0.0";
    i.summary = "Megatron-LM's tensor-parallel collectives of a GPT layer (column- then row-parallel linear layers)";
    i.description =
        "For one rank of a tensor-parallel group of t: per micro-batch and layer, an all-reduce of the output of "
        "*.linear_proj and *.linear_fc2 in the forward pass and of the input gradient of *.linear_qkv and "
        "*.linear_fc1 in the backward pass (b*s*h elements each); an all-reduce of embedding.word_embeddings' "
        "output (vocabulary-parallel lookup); for output_layer (vocabulary-parallel logits), three all-reduces of "
        "one fp32 value per token in the forward pass (the cross-entropy's maximum, target logit and sum) and one of "
        "its input gradient in the backward pass. Operators are found by Megatron-core's module names, as the "
        "`gpt` workload generator writes them. Sequence parallelism is refused: the generator does not split norms "
        "and dropouts along the sequence yet.";
    return i;
  }
  explicit Megatron(const ParamValues& /*p*/) {}

  [[nodiscard]] TensorParallelPlan plan(const Graph& g, const ParallelLayout& layout) const override {
    if (layout.sequence_parallel) {
      throw UserError("megatron: sequence parallelism is not modelled yet (the gpt generator replicates norms and "
                      "dropouts on every rank instead of splitting them along the sequence)");
    }
    TensorParallelPlan plan;
    const Tensor* tokens = nullptr;
    for (const Tensor& t : g.tensors()) {
      if (t.role == TensorRole::input && !t.shape.empty()) {
        tokens = &t;
        break;
      }
    }
    if (tokens == nullptr) throw UserError("megatron: the step has no input tensor to take the micro-batch from");
    plan.micro_batch = tokens->shape.front();
    if (layout.tensor < 2) return plan;
    bool found = false;
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::forward) continue;
      auto bytes = [&](bool output) {
        for (const Operand& o : op.operands) {
          const Tensor& t = g.tensor(o.tensor);
          if (output == o.is_output() && (output || !t.is_parameter())) return static_cast<double>(t.bytes());
        }
        return 0.0;
      };
      const std::string& n = op.name;
      if (ends_with(n, ".linear_proj") || ends_with(n, ".linear_fc2") || n == "embedding.word_embeddings") {
        plan.comms.push_back({op.id, false, CollectiveKind::all_reduce, bytes(true)});
        found = true;
      } else if (ends_with(n, ".linear_qkv") || ends_with(n, ".linear_fc1")) {
        plan.comms.push_back({op.id, true, CollectiveKind::all_reduce, bytes(false)});
      } else if (n == "output_layer") {
        const double tokens_fp32 = static_cast<double>(tokens->elements()) * 4;
        for (int i = 0; i < 3; ++i) plan.comms.push_back({op.id, false, CollectiveKind::all_reduce, tokens_fp32});
        plan.comms.push_back({op.id, true, CollectiveKind::all_reduce, bytes(false)});
      }
    }
    if (!found) {
      throw UserError("megatron: tensor = " + std::to_string(layout.tensor) +
                      " but the step has no operator named like Megatron-core's row-parallel layers "
                      "(*.linear_proj, *.linear_fc2): generate the workload with the `gpt` generator");
    }
    return plan;
  }
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Megatron)
