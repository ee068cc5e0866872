// The GPT generator of the TOML frontend (docs/datacenter.md): Megatron's parameter counts (Narayanan et al.
// SC'21, Table 1), forward MACs by hand, and the activation memory autodiff keeps per layer against Korthikanti
// et al. 2022 (34·s·b·h + 5·a·s²·b bytes, 16-bit activations, 1-byte dropout masks) with no, selective and full
// recomputation (the tables: docs/datacenter-validation.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/precision.hpp"
#include "monet/training/recompute.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

struct Dims {
  std::int64_t h, a, L, s = 2048, V = 51200, b = 1;
};

std::string gpt_toml(const Dims& d, const std::string& extra = "") {
  return "[workload]\ngenerator = \"gpt\"\nhidden = " + std::to_string(d.h) + "\nheads = " + std::to_string(d.a) +
         "\nlayers = " + std::to_string(d.L) + "\nseq_length = " + std::to_string(d.s) + "\nvocab = " +
         std::to_string(d.V) + "\nmicro_batch = " + std::to_string(d.b) + "\n" + extra;
}

class Gpt : public ::testing::Test {
 protected:
  GraphPtr load(const std::string& text) {
    const Registry& r = Registry::global();
    const PluginHandle* f = r.find(PluginKind::frontend, "gpt");
    return r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))->load(dir_.write("gpt.toml", text));
  }
  GraphPtr training(const std::string& text) {
    const Registry& r = Registry::global();
    const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
    return r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(*load(text), TrainingSettings{});
  }
  std::string fail(const std::string& text) {
    try {
      load(text);
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  }
  test::ScratchDir dir_;
};

// Narayanan et al. SC'21 Table 1 (docs/datacenter-validation.md#parameters-megatrons-table-1-exact): heads, hidden,
// layers and the published parameter count in billions. Their Eq. 2 (Ψ = 12·L·h²·(1 + 13/(12h) + (V+s)/(12·L·h)))
// leaves out the final LayerNorm's 2h.
TEST_F(Gpt, MegatronTable1ParameterCountsAreExact) {
  struct Row {
    std::int64_t a, h, L;
    double billions;
  };
  const Row rows[] = {{24, 2304, 24, 1.7},    {32, 3072, 30, 3.6},    {32, 4096, 36, 7.5},    {48, 6144, 40, 18.4},
                      {64, 8192, 48, 39.1},   {80, 10240, 60, 76.1},  {96, 12288, 80, 145.6}, {128, 16384, 96, 310.1},
                      {128, 20480, 105, 529.6}, {160, 25600, 128, 1008.0}};
  for (const Row& r : rows) {
    const std::int64_t h = r.h, L = r.L, s = 2048, V = 51200;
    const GraphPtr g = load(gpt_toml({h, r.a, L}));
    const std::int64_t eq2 = 12 * L * h * h + 13 * L * h + (V + s) * h;
    EXPECT_EQ(g->parameter_count(), eq2 + 2 * h) << r.billions;
    EXPECT_EQ(g->trainable_parameter_count(), g->parameter_count());
    EXPECT_DOUBLE_EQ(std::round(static_cast<double>(eq2) / 1e8) / 10, r.billions);
    // Forward MACs: per layer QKV 3sh², projection sh², MLP 8sh², scores and context 2s²h; logits shV.
    EXPECT_EQ(g->total_macs(), L * (12 * s * h * h + 2 * s * s * h) + s * h * V) << r.billions;
  }
}

TEST_F(Gpt, OneTrillionParametersWithoutOverflow) {
  const GraphPtr g = load(gpt_toml({25600, 160, 128}));
  EXPECT_EQ(g->parameter_count(), 1'008'038'758'400);  // 12Lh² + 13Lh + (V + s)h + 2h
  // The scores of one layer, b·a·s² bf16 = 160·2048²·2 bytes.
  EXPECT_EQ(g->find_tensor("layers.127.self_attention.core_attention.softmax")->bytes(), 160LL * 2048 * 2048 * 2);
  EXPECT_EQ(g->operators().size(), 4u + 128u * 22u + 2u);
}

// Saved bytes of a training graph attributed to the layer whose operator produced them (its module prefix).
std::map<std::string, std::int64_t> saved_by_layer(const Graph& g, std::int64_t* stats = nullptr) {
  std::map<std::string, std::int64_t> out;
  for (const SavedStorage& s : training_memory(g).saved) {
    if (s.producer == kNone) continue;
    const Operator& op = g.op(s.producer);
    if (!op.module.starts_with("layers.")) continue;
    const std::string layer = op.module.substr(0, op.module.find('.', 7));
    out[layer] += s.bytes;
    const std::string& name = g.tensor(s.storage).name;
    if (stats && (name.ends_with(":mean") || name.ends_with(":rstd"))) *stats += s.bytes;
  }
  return out;
}

// `ln_stats` < 0: 16·s·b. autodiff also keeps each LayerNorm's fp32 mean and rstd per token (as Megatron's fused
// LayerNorm does): 2 norms × 2 × 4 bytes × s·b, which Korthikanti et al. leave out. Full recomputation
// recomputes them with the rest of the layer (0).
void expect_per_layer(const Graph& g, const Dims& d, std::int64_t korthikanti, std::int64_t ln_stats = -1) {
  std::int64_t stats = 0;
  const auto layers = saved_by_layer(g, &stats);
  ASSERT_EQ(layers.size(), static_cast<std::size_t>(d.L));
  if (ln_stats < 0) ln_stats = 16 * d.s * d.b;
  for (const auto& [name, bytes] : layers) EXPECT_EQ(bytes, korthikanti + ln_stats) << name;
  EXPECT_EQ(stats, d.L * ln_stats);
}

TEST_F(Gpt, SavedActivationsPerLayerAreKorthikantis) {
  for (const Dims& d : {Dims{64, 4, 3, 32, 100, 2}, Dims{96, 3, 2, 48, 64, 3}}) {
    const GraphPtr g = training(gpt_toml(d));
    const std::int64_t sbh = d.s * d.b * d.h, as2b = d.a * d.s * d.s * d.b;
    expect_per_layer(*g, d, 34 * sbh + 5 * as2b);
    // Selective recomputation (the attention core) keeps 34·s·b·h; full recomputation the layer input, 2·s·b·h.
    expect_per_layer(*apply_checkpointing(g, recompute_policy("selective", SourceLocation{"test"})), d, 34 * sbh);
    expect_per_layer(*apply_checkpointing(g, recompute_policy("full", SourceLocation{"test"})), d, 2 * sbh, 0);
  }
}

// The same at the size of Megatron's 1T model (h 25600, a 160, s 2048; two of its 128 layers, the bytes per
// layer do not depend on the count): 5,138,022,400 bytes per layer, 1,782,579,200 with selective recompute.
TEST_F(Gpt, SavedActivationsAtOneTrillionScale) {
  const Dims d{25600, 160, 2};
  const GraphPtr g = training(gpt_toml(d));
  expect_per_layer(*g, d, 5'138'022'400);
  expect_per_layer(*apply_checkpointing(g, recompute_policy("selective", SourceLocation{"test"})), d, 1'782'579'200);
}

// One rank of a tensor-parallel group (Megatron's column/row split, collectives left out): Korthikanti et al.'s
// per-GPU bytes per layer s·b·h·(10 + 24/t + 5·a·s/(h·t)), and their Figure 1's tensor-parallel activation memory
// to the printed digit: 22B (h 6144, a 64, L 48, t 8, p 1, b 4) 59.25 GiB; 175B (h 12288, a 96, L 96, t 8, p 8,
// v 3, b 1) 66.84 GiB; 530B (h 20480, a 128, L 105, t 8, p 35, v 3) 114.02 GiB; 1T (h 25600, a 160, L 128, t 8,
// p 64, v 1) 131.25 GiB. The bytes per layer come from the graph (two layers built); the layers on the first
// pipeline stage times its in-flight micro-batches, L · (1 + (p − 1)/(p·v)) for v > 1, is the 1F1B schedule's
// (docs/datacenter-validation.md#tensor-parallel-activation-memory-korthikanti-et-als-figure-1).
TEST_F(Gpt, TensorParallelRankMatchesKorthikantiFigure1) {
  struct Row {
    std::int64_t h, a, L, b, p, v;
    double gib;
  };
  for (const Row& r : {Row{6144, 64, 48, 4, 1, 1, 59.25}, Row{12288, 96, 96, 1, 8, 3, 66.84},
                       Row{20480, 128, 105, 1, 35, 3, 114.02}, Row{25600, 160, 128, 1, 64, 1, 131.25}}) {
    const std::int64_t t = 8, s = 2048;
    const Dims d{r.h, r.a, 2, s, 51200, r.b};
    const GraphPtr g = training(gpt_toml(d, "tensor_parallel = 8\n"));
    const std::int64_t sbh = s * r.b * r.h, as2b = r.a * s * s * r.b;
    const std::int64_t per_layer = 10 * sbh + 24 * sbh / t + 5 * as2b / t;
    expect_per_layer(*g, d, per_layer);
    const double in_flight = r.v > 1 ? 1.0 + static_cast<double>(r.p - 1) / static_cast<double>(r.p * r.v) : 1.0;
    const double gib = static_cast<double>(r.L * per_layer) * in_flight / (1024.0 * 1024.0 * 1024.0);
    EXPECT_DOUBLE_EQ(std::round(gib * 100) / 100, r.gib) << r.h;
  }
  // Per-rank parameters: the column-split QKV and fc1 (with their biases) and row-split projection and fc2 are
  // 1/t, their output biases and the norms are replicated; the word embeddings are split by vocabulary.
  const std::int64_t h = 64, L = 2, t = 4, V = 100, s = 32;
  const GraphPtr g = load(gpt_toml({h, 4, L, s, V, 1}, "tensor_parallel = 4\n"));
  EXPECT_EQ(g->parameter_count(), L * (12 * h * h / t + 7 * h / t + 6 * h) + V / t * h + s * h + 2 * h);
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 32, 100, 1}, "tensor_parallel = 8\n")),
              HasSubstr("tensor_parallel = 8 does not divide heads = 4"));
}

// Sequence parallelism (Korthikanti et al. 2022 §4.2.2): norms, dropouts and residuals hold S/t rows, and the
// column-parallel layers keep their sharded input (Megatron gathers it again in the backward pass), so every term
// of the tensor-parallel formula is divided by t: s·b·h/t·(34 + 5·a·s/h) per layer, 34·s·b·h/t with selective
// recomputation (Figure 1's "tensor + sequence parallel + selective" bars to the printed digit: 9.56, 12.35,
// 23.08 and 26.56 GiB), 2·s·b·h/t (the sharded layer input) with full recomputation. The LayerNorm statistics are
// split too (16·s·b/t).
TEST_F(Gpt, SequenceParallelRankMatchesKorthikanti) {
  struct Row {
    std::int64_t h, a, L, b, p, v;
    double gib;
  };
  const SourceLocation here{"test"};
  for (const Row& r : {Row{6144, 64, 48, 4, 1, 1, 9.56}, Row{12288, 96, 96, 1, 8, 3, 12.35},
                       Row{20480, 128, 105, 1, 35, 3, 23.08}, Row{25600, 160, 128, 1, 64, 1, 26.56}}) {
    const std::int64_t t = 8, s = 2048;
    const Dims d{r.h, r.a, 2, s, 51200, r.b};
    const GraphPtr g = training(gpt_toml(d, "tensor_parallel = 8\nsequence_parallel = true\n"));
    const std::int64_t sbh = s * r.b * r.h, as2b = r.a * s * s * r.b, stats = 16 * s * r.b / t;
    expect_per_layer(*apply_checkpointing(g, recompute_policy("none", here)), d, (34 * sbh + 5 * as2b) / t, stats);
    const GraphPtr selective = apply_checkpointing(g, recompute_policy("selective", here));
    expect_per_layer(*selective, d, 34 * sbh / t, stats);
    expect_per_layer(*apply_checkpointing(g, recompute_policy("full", here)), d, 2 * sbh / t, 0);
    const double in_flight = r.v > 1 ? 1.0 + static_cast<double>(r.p - 1) / static_cast<double>(r.p * r.v) : 1.0;
    const double gib = static_cast<double>(r.L * 34 * sbh / t) * in_flight / (1024.0 * 1024.0 * 1024.0);
    EXPECT_DOUBLE_EQ(std::round(gib * 100) / 100, r.gib) << r.h;
    // The gathers run again in the backward pass (no MACs): one per column-parallel layer, and the output layer's.
    int gathers = 0;
    for (const Operator& op : selective->operators()) gathers += op.phase == Phase::recompute && op.type == "AllGather";
    EXPECT_EQ(gathers, 2 * 2 + 1);
  }
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 30, 100, 1}, "tensor_parallel = 4\nsequence_parallel = true\n")),
              HasSubstr("tensor_parallel = 4 does not divide seq_length = 30"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 32, 100, 1}, "sequence_parallel = true\n")),
              HasSubstr("it needs tensor_parallel >= 2"));
}

// Context parallelism (Megatron-core's): a rank holds s/cp tokens and its queries attend to every key, so the
// tensor-parallel formula holds with s/cp for the token-wise terms and s/cp x s score rows: per layer
// (s/cp)·b·h·(10 + 24/t) + 5·a·(s/cp)·s·b/t, + 16·(s/cp)·b of LayerNorm statistics. The gathered keys and values are
// exchanged again in the backward pass, not kept. The cp ranks' forward MACs add up to the unsplit rank's exactly.
TEST_F(Gpt, ContextParallelRankSplitsTheSequence) {
  const SourceLocation here{"test"};
  const Dims d{64, 4, 2, 32, 100, 2};
  const std::int64_t t = 2, cp = 2, sl = d.s / cp, sbh = sl * d.b * d.h;
  const GraphPtr g = training(gpt_toml(d, "tensor_parallel = 2\ncontext_parallel = 2\n"));
  expect_per_layer(*apply_checkpointing(g, recompute_policy("none", here)), d,
                   sbh * 10 + sbh * 24 / t + 5 * d.a * sl * d.s * d.b / t, 16 * sl * d.b);
  expect_per_layer(*apply_checkpointing(g, recompute_policy("full", here)), d, 2 * sbh, 0);
  int exchanges = 0;
  const GraphPtr step = apply_checkpointing(g, recompute_policy("none", here));
  for (const Operator& op : step->operators()) {
    exchanges += op.phase == Phase::recompute && op.type == "AllGather";
  }
  EXPECT_EQ(exchanges, 2 * 2);  // keys and values of each layer
  auto forward_macs = [](const Graph& graph) {
    std::int64_t macs = 0;
    for (const Operator& op : graph.operators()) macs += op.phase == Phase::forward ? op.macs() : 0;
    return macs;
  };
  EXPECT_EQ(cp * forward_macs(*load(gpt_toml(d, "tensor_parallel = 2\ncontext_parallel = 2\n"))),
            forward_macs(*load(gpt_toml(d, "tensor_parallel = 2\n"))));
  // With sequence parallelism too, the rank's s/cp tokens are split again over the t ranks.
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 20, 100, 1}, "tensor_parallel = 4\ncontext_parallel = 2\nsequence_parallel = true\n")),
              HasSubstr("context_parallel = 2 x tensor_parallel = 4 = 8 does not divide seq_length = 20"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 33, 100, 1}, "context_parallel = 2\n")),
              HasSubstr("context_parallel = 2 does not divide seq_length = 33"));
}

// Llama 3 with Megatron's options for it (grouped-query attention, SwiGLU, RMSNorm, no linear biases, rotary
// positions, an untied output layer; Meta's config.json of each model): the parameter counts Hugging Face reports for
// Llama-3.1-8B, -70B and -405B, forward MACs by hand, and the bytes autodiff keeps per layer by hand.
std::string llama_toml(std::int64_t h, std::int64_t a, std::int64_t g, std::int64_t L, std::int64_t F, std::int64_t s,
                       std::int64_t V, const std::string& extra = "") {
  return "[workload]\ngenerator = \"gpt\"\nhidden = " + std::to_string(h) + "\nheads = " + std::to_string(a) +
         "\nnum_query_groups = " + std::to_string(g) + "\nlayers = " + std::to_string(L) + "\nffn_hidden = " +
         std::to_string(F) + "\nseq_length = " + std::to_string(s) + "\nvocab = " + std::to_string(V) +
         "\nswiglu = true\nnormalization = \"RMSNorm\"\nadd_bias_linear = false\nposition_embedding_type = \"rope\"\n"
         "untie_embeddings_and_output_weights = true\nhidden_dropout = 0\nattention_dropout = 0\n" + extra;
}

TEST_F(Gpt, Llama3ParameterCountsAreHuggingFaces) {
  struct Row {
    std::int64_t h, a, L, F, params;
  };
  for (const Row& r : {Row{4096, 32, 32, 14336, 8'030'261'248}, Row{8192, 64, 80, 28672, 70'553'706'496},
                       Row{16384, 128, 126, 53248, 405'853'388'800}}) {
    const std::int64_t s = 8192, V = 128256, g = 8, d = r.h / r.a;
    const GraphPtr g8 = load(llama_toml(r.h, r.a, g, r.L, r.F, s, V));
    EXPECT_EQ(g8->parameter_count(), r.params) << r.L;
    // Per layer: QKV s·h·(h + 2·g·d), projection s·h², SwiGLU MLP 3·s·h·F, scores and context 2·s²·h; logits s·h·V.
    EXPECT_EQ(g8->total_macs(), r.L * (s * r.h * (r.h + 2 * g * d) + s * r.h * r.h + 3 * s * r.h * r.F + 2 * s * s * r.h) +
                                    s * r.h * V)
        << r.L;
  }
}

// kv_channels (Megatron's): heads of d features whatever the hidden size. MaxText's 52 B model of 2023 (32 heads of
// 256 beside an embedding of 12,288; its MLP one 49,152-wide ReLU, no biases, RMS norms, the output layer through
// the embedding): per layer QKV h·3·a·d, projection a·d·h, MLP 2·h·F, two norms; the embedding and the final norm.
// Its MACs: QKV and projection 4·s·h·a·d, the MLP 2·s·h·F, scores and context 2·s²·a·d; logits s·h·V. A width that
// no longer divides is fine once kv_channels is given; a tensor split must still divide the heads.
TEST_F(Gpt, KvChannelsSetTheAttentionsWidth) {
  const std::int64_t h = 12288, a = 32, d = 256, L = 32, F = 49152, s = 1024, V = 32768;
  const std::string extra = "ffn_hidden = " + std::to_string(F) + "\nkv_channels = " + std::to_string(d) +
                            "\nnormalization = \"RMSNorm\"\nadd_bias_linear = false\nposition_embedding_type = \"rope\"\n";
  const GraphPtr g = load(gpt_toml({h, a, L, s, V}, extra));
  EXPECT_EQ(g->parameter_count(), L * (4 * h * a * d + 2 * h * F + 2 * h) + V * h + h);
  EXPECT_EQ(g->parameter_count(), 51'943'059'456);
  EXPECT_EQ(g->total_macs(), L * (4 * s * h * a * d + 2 * s * h * F + 2 * s * s * a * d) + s * h * V);
  // The default is hidden / heads: the same graph as without the key.
  EXPECT_EQ(load(gpt_toml({64, 4, 2}, "kv_channels = 16\n"))->total_macs(), load(gpt_toml({64, 4, 2}))->total_macs());
  EXPECT_NO_THROW(load(gpt_toml({100, 3, 2}, "kv_channels = 32\n")));
  EXPECT_THAT(fail(gpt_toml({100, 3, 2})), HasSubstr("(or give each head's width: kv_channels)"));
}

// BLOOM-176B (Megatron-DeepSpeed's options): ALiBi leaves out the position table, the embedding LayerNorm adds 2h;
// Hugging Face's bigscience/bloom counts 176,247,271,424 parameters. The forward MACs are a GPT's without positions.
TEST_F(Gpt, BloomParameterCountIsHuggingFaces) {
  const std::int64_t h = 14336, L = 70, s = 2048, V = 250880;
  const std::string bloom = "position_embedding_type = \"alibi\"\nembedding_layernorm = true\n";
  const GraphPtr g = load(gpt_toml({h, 112, L, s, V}, bloom));
  EXPECT_EQ(g->parameter_count(), L * (12 * h * h + 13 * h) + V * h + 2 * h + 2 * h);
  EXPECT_EQ(g->parameter_count(), 176'247'271'424);
  const GraphPtr small = load(gpt_toml({64, 4, 2}, bloom)), gpt = load(gpt_toml({64, 4, 2}));
  EXPECT_EQ(small->parameter_count(), gpt->parameter_count() - 2048 * 64 + 2 * 64);
  EXPECT_EQ(small->total_macs(), gpt->total_macs());
  EXPECT_THAT(fail(gpt_toml({64, 4, 2}, "position_embedding_type = \"sinusoidal\"\n")),
              HasSubstr("position_embedding_type"));
}

// Per layer: the layer's input, both norms' outputs and the residual (2·s·b·h bytes each), the rotated queries and
// the attention context (2·s·b·h/t each), the rotated keys (2·s·b·g·d/t), the values — a view of linear_qkv's output,
// which keeps all of it, 2·s·b·(h + 2·g·d)/t, as in PyTorch —, the softmax output (2·a·s²·b/t), linear_fc1's output
// (4·s·b·F/t: Megatron's fused SwiGLU keeps its input) and the SwiGLU's output (2·s·b·F/t), and one fp32 rstd per
// token and norm. Unfused (bias_swiglu_fusion = false, HF's LlamaMLP), silu(gate) is kept too: 2·s·b·F/t more. One
// rank of a tensor-parallel group holds a/t heads, g/t groups and F/t features.
TEST_F(Gpt, Llama3LayerKeepsWhatItsGradientsRead) {
  const std::int64_t h = 64, a = 8, g = 2, L = 2, F = 96, s = 16, V = 100, d = h / a;
  for (const std::int64_t t : {1, 2}) {
    const Dims dims{h, a, L, s, V, 1};
    const GraphPtr graph = training(llama_toml(h, a, g, L, F, s, V, "tensor_parallel = " + std::to_string(t) + "\n"));
    const std::int64_t sbh = s * h;
    const std::int64_t kept = 8 * sbh + 4 * sbh / t + 2 * s * (g / t) * d + 2 * s * (h + 2 * g * d) / t +
                              2 * (a / t) * s * s + 6 * s * F / t;
    expect_per_layer(*graph, dims, kept, 2 * 4 * s);
    const GraphPtr unfused = training(llama_toml(h, a, g, L, F, s, V, "tensor_parallel = " + std::to_string(t) +
                                                                          "\nbias_swiglu_fusion = false\n"));
    expect_per_layer(*unfused, dims, kept + 2 * s * F / t, 2 * 4 * s);
  }
  EXPECT_THAT(fail(llama_toml(64, 8, 3, 2, 96, 16, 100)), HasSubstr("num_query_groups = 3 does not divide heads = 8"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2}, "bias_swiglu_fusion = true\n")),
              HasSubstr("workload.bias_swiglu_fusion: fuses the SwiGLU activation, which this model does not have"));
  EXPECT_THAT(fail(llama_toml(64, 8, 2, 2, 96, 16, 100, "tensor_parallel = 4\n")),
              HasSubstr("tensor_parallel = 4 does not divide num_query_groups = 2"));
  std::string bad = llama_toml(64, 8, 2, 2, 96, 16, 100);
  bad.replace(bad.find("\"RMSNorm\""), 9, "\"BatchNorm\"");
  EXPECT_THAT(fail(bad), HasSubstr("RMSNorm"));
}

// attention_backend = "flash": one FlashAttention operator per layer. Its MACs are the causal triangle's (half of
// the unfused scores' and context's, 2·s²·h), its backward operator recomputes the scores and makes five products
// where the forward makes two (2.5x its MACs), and the layer keeps no s x s tensor: the rotated queries and keys,
// linear_qkv's output (through v), the output and one fp32 log-sum-exp per query and head instead of the
// softmax output. Its FF part keeps what the fused SwiGLU keeps (above).
TEST_F(Gpt, FlashAttentionKeepsNoScoresAndCountsTheCausalHalf) {
  const std::int64_t h = 64, a = 8, g = 2, L = 2, F = 96, s = 16, V = 100, d = h / a;
  const std::string flash = "attention_backend = \"flash\"\n";
  const GraphPtr unfused = load(llama_toml(h, a, g, L, F, s, V));
  const GraphPtr fused = load(llama_toml(h, a, g, L, F, s, V, flash));
  EXPECT_EQ(unfused->total_macs() - fused->total_macs(), L * s * s * h);
  const GraphPtr step = training(llama_toml(h, a, g, L, F, s, V, flash));
  std::int64_t forward = 0, backward = 0;
  for (const Operator& op : step->operators()) {
    if (op.type == "FlashAttention") forward += op.macs();
    if (op.type == "FlashAttention.grad") backward += op.macs();
  }
  EXPECT_EQ(forward, L * s * s * h);
  EXPECT_EQ(2 * backward, 5 * forward);
  const std::int64_t sbh = s * h;
  expect_per_layer(*step, Dims{h, a, L, s, V, 1},
                   8 * sbh + 4 * sbh + 2 * s * g * d + 2 * s * (h + 2 * g * d) + 6 * s * F + 4 * a * s, 2 * 4 * s);
  std::string bad = llama_toml(h, a, g, L, F, s, V, "attention_backend = \"fused\"\n");
  EXPECT_THAT(fail(bad), HasSubstr("flash"));
}

// [precision] preset = "fp8_hybrid" (Transformer Engine's FP8 linear layers) on a Llama layer with FlashAttention:
// linear_qkv, linear_proj, linear_fc1 and linear_fc2 multiply in fp8 -- their forward, input-gradient and
// weight-gradient operators, 12 per layer -- and read their inputs at 8 bits; the output layer (no Transformer
// Engine module in Megatron) and FlashAttention keep bf16. The inputs only those GEMMs read are kept in fp8: the two
// norms' outputs (s·h bytes each instead of 2·s·h) and the SwiGLU's output (s·F/t instead of 2·s·F/t). The
// attention's output stays bf16: FlashAttention's backward reads it too.
TEST_F(Gpt, Fp8LinearLayersMultiplyAndKeepTheirInputsInFp8) {
  const std::int64_t h = 64, a = 8, g = 2, L = 2, F = 96, s = 16, V = 100;
  for (const std::int64_t t : {1, 2}) {
    const GraphPtr step = training(llama_toml(h, a, g, L, F, s, V,
                                              "attention_backend = \"flash\"\ntensor_parallel = " + std::to_string(t) + "\n"));
    const GraphPtr bf16 = apply_precision(*step, *Precision::preset_named("mixed_bf16"));
    const GraphPtr fp8 = apply_precision(*step, *Precision::preset_named("fp8_hybrid"));
    std::int64_t narrowed = 0;
    for (const Operator& op : fp8->operators()) {
      if (!is_mac_kind(op.kind)) continue;
      const std::string& name = op.derived_from == kNone ? op.name : fp8->op(op.derived_from).name;
      const bool linear = name.find(".linear_") != std::string::npos;
      EXPECT_EQ(op.matmul_type().has_value(), linear) << op.name;
      if (!linear) continue;
      ++narrowed;
      EXPECT_EQ(*op.matmul_type(), ElementType::fp8);
      for (const Operand& o : op.operands) {
        if (!o.is_output()) {
          EXPECT_EQ(o.precision_bits, 8) << op.name;
        }
      }
    }
    EXPECT_EQ(narrowed, 12 * L);
    std::int64_t stats16 = 0, stats8 = 0;
    const auto kept16 = saved_by_layer(*bf16, &stats16), kept8 = saved_by_layer(*fp8, &stats8);
    ASSERT_EQ(kept16.size(), static_cast<std::size_t>(L));
    for (const auto& [layer, bytes] : kept16) EXPECT_EQ(bytes - kept8.at(layer), 2 * s * h + s * F / t) << layer;
    EXPECT_EQ(stats16, stats8);
  }
  // The choice is the precision's, not the workload's: Precision::weight_matmul.
  EXPECT_FALSE(Precision::preset_named("mixed_bf16")->weight_matmul.has_value());
}

TEST_F(Gpt, NoDropoutKeepsNoMasks) {
  const Dims d{64, 4, 2, 32, 100, 2};
  const GraphPtr g = training(gpt_toml(d, "hidden_dropout = 0\nattention_dropout = 0\n"));
  const std::int64_t sbh = d.s * d.b * d.h, as2b = d.a * d.s * d.s * d.b;
  // Without dropout: no masks (2·s·b·h + a·s²·b), and the context matmul reads the softmax output itself.
  expect_per_layer(*g, d, 32 * sbh + 2 * as2b);
}

TEST_F(Gpt, MistakesAreLocated) {
  EXPECT_THAT(fail(gpt_toml({100, 3, 2})), HasSubstr("gpt.toml:4:9: error: workload.heads: 3 heads do not divide hidden = 100"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 32, 100, 2}, "global_batch = 3\n")),
              HasSubstr("workload.global_batch: global_batch = 3 is not a multiple of micro_batch = 2"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2}, "hiden = 3\n")), HasSubstr("hiden"));
  EXPECT_THAT(fail("[workload]\ngenerator = \"gpt\"\nhidden = 64\n"), HasSubstr("layers"));
  EXPECT_THAT(fail("[workload]\ngenerator = \"bert\"\n"), HasSubstr("gpt"));
  EXPECT_THAT(fail(gpt_toml({64, 4, 2, 1 << 30, 100, 1 << 20})), HasSubstr("64-bit"));
  EXPECT_THAT(fail(gpt_toml({25600, 160, std::int64_t{1} << 35})), HasSubstr("workload.micro_batch: this configuration needs"));
  EXPECT_THAT(fail(gpt_toml({std::int64_t{1} << 50, 4, 2})), HasSubstr("workload.hidden: larger than 2^40"));
  try {
    (void)recompute_policy("partial", SourceLocation{"x.toml", 3, 13});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.toml:3:13: error: recompute = \"partial\": expected none, selective or full"));
  }
}

}  // namespace
}  // namespace monet
