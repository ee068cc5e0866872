// The GPT generator: Megatron-LM's GPT (pre-LayerNorm decoder, learned positions, output layer tied to the word
// embeddings) as a forward graph of monet's standard operators, so autodiff, checkpointing and every cost model
// treat it like an imported network. Layout [b, s, h]; operator and module names follow Megatron-core
// ("layers.3.self_attention.linear_qkv"), so checkpoint globs such as "layers.*" select whole layers.
//
// Per layer: input_layernorm, linear_qkv (one fused GEMM), split into q, k, v (views), scores = q·kᵀ with the
// 1/√d scale folded in (baddbmm's alpha), softmax (Megatron's fused scale + causal mask + softmax: only the
// output is kept), attention dropout, context = probs·v, linear_proj, hidden dropout, residual add,
// pre_mlp_layernorm, linear_fc1, GeLU, linear_fc2, hidden dropout, residual add. Then final_layernorm and the
// logits against the word-embedding table. Linear layers have biases, as Megatron's (the 13h term of the
// parameter count).
//
// Megatron's options for Llama-style models change the layer where they apply: num_query_groups (grouped-query
// attention: linear_qkv makes h + 2·g·d features, and the queries of a group share its key and value, without
// copies, as FlashAttention and TE do), swiglu (linear_fc1 makes 2·ffn features, silu(gate)·up; fused as Megatron's
// bias_swiglu_fusion, or as HF's LlamaMLP), normalization = "RMSNorm" (no bias, one statistic per token),
// add_bias_linear = false, position_embedding_type = "rope" (no position table; q and k rotated by Megatron's fused
// kernel), untie_embeddings_and_output_weights (output_layer has its own weight) and attention_backend = "flash"
// (one FlashAttention operator for the attention core). BLOOM's options (Megatron-DeepSpeed's):
// position_embedding_type = "alibi" (no position table) and embedding_layernorm (a LayerNorm after the
// embeddings). kv_channels sets each head's width d (hidden / heads by default): the queries, the context and
// linear_proj's input are then a·d wide, not h.
#include "gpt.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "monet/ir/generated_graph.hpp"
#include "monet/ir/ops.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

// RMSNorm per element: square, accumulate, scale by the token's rstd, scale by the weight (LayerNorm's 6 less the
// mean's two).
constexpr double kRmsNormOps = 4;

struct GptConfig {
  std::string name = "gpt";
  std::int64_t hidden = 0, layers = 0, heads = 0, seq = 0, vocab = 0, ffn = 0;
  std::int64_t micro_batch = 1, global_batch = 1;
  std::int64_t tensor = 1;  // the graph of one rank of a tensor-parallel group of this size (collectives left out)
  bool sequence_parallel = false;  // norms, dropouts and residuals split along the sequence over the t ranks
  std::int64_t context = 1;        // the graph of one rank of a context-parallel group: seq / context tokens
  double hidden_dropout = 0.1, attention_dropout = 0.1;
  ElementType dtype = ElementType::bf16;
  std::int64_t query_groups = 0;  // key/value heads; = heads without grouped-query attention
  std::int64_t kv_channels = 0;   // each head's width (Megatron's kv_channels; hidden / heads by default)
  bool swiglu = false, rms_norm = false, bias = true, rope = false, untied = false;
  bool alibi = false;           // position_embedding_type = "alibi" (BLOOM): no position table, a bias on the scores
  bool embedding_norm = false;  // Megatron-DeepSpeed's --embed-layernorm (BLOOM): a LayerNorm after the embeddings
  bool flash = false;  // attention_backend = "flash": one fused, causal attention operator
  bool swiglu_fusion = true;  // Megatron's bias_swiglu_fusion: one kernel that keeps only its input
};

GptConfig read_config(TableReader& w, const GptOverrides& o) {
  GptConfig c;
  c.name = w.string("name").value_or(c.name);
  (void)w.choice("generator", {"gpt"});
  c.hidden = w.required_integer("hidden", Bounds::at_least(1));
  c.layers = w.required_integer("layers", Bounds::at_least(1));
  c.heads = w.required_integer("heads", Bounds::at_least(1));
  c.seq = w.required_integer("seq_length", Bounds::at_least(1));
  c.vocab = w.required_integer("vocab", Bounds::at_least(1));
  // Bounded so that products of a few dimensions stay finite before the size check below.
  for (const auto* key : {"hidden", "layers", "heads", "seq_length", "vocab"}) {
    if (w.integer(key).value_or(1) > (std::int64_t{1} << 40)) w.fail(key, "larger than 2^40: not a model monet can count");
  }
  c.ffn = w.integer("ffn_hidden", Bounds{1.0, 1099511627776.0, false, false}).value_or(4 * c.hidden);
  c.query_groups = w.integer("num_query_groups", Bounds::at_least(1)).value_or(c.heads);
  // Megatron's kv_channels: each head's width, hidden / heads unless given (an attention narrower or wider than the
  // hidden size: the query, key and value projections and the context are heads x kv_channels wide).
  const std::optional<std::int64_t> kv_channels = w.integer("kv_channels", Bounds{1.0, 1099511627776.0, false, false});
  c.swiglu = w.boolean("swiglu").value_or(false);
  const std::optional<bool> fusion = w.boolean("bias_swiglu_fusion");
  c.swiglu_fusion = fusion.value_or(true);
  if (!c.swiglu && fusion) {
    w.fail("bias_swiglu_fusion", "fuses the SwiGLU activation, which this model does not have (swiglu = false)");
  }
  c.rms_norm = w.choice("normalization", {"LayerNorm", "RMSNorm"}).value_or("LayerNorm") == "RMSNorm";
  c.bias = w.boolean("add_bias_linear").value_or(true);
  const std::string positions =
      w.choice("position_embedding_type", {"learned_absolute", "rope", "alibi"}).value_or("learned_absolute");
  c.rope = positions == "rope", c.alibi = positions == "alibi";
  c.embedding_norm = w.boolean("embedding_layernorm").value_or(false);
  c.untied = w.boolean("untie_embeddings_and_output_weights").value_or(false);
  c.flash = w.choice("attention_backend", {"unfused", "flash"}).value_or("unfused") == "flash";
  c.micro_batch = w.integer("micro_batch", Bounds::at_least(1)).value_or(1);
  c.global_batch = w.integer("global_batch", Bounds::at_least(1)).value_or(c.micro_batch);
  // A split the file gives and the experiment overrides must agree: neither is ignored silently.
  auto split = [&](const char* key, std::int64_t override) {
    const std::optional<std::int64_t> given = w.integer(key, Bounds::at_least(1));
    if (given && override > 0 && *given != override) {
      w.fail(key, std::string(key) + " = " + std::to_string(*given) + " here, but the experiment generates the rank with " +
                      std::to_string(override) + " (the frontend's " + key + " parameter, set from [parallelism]): "
                      "remove the key or make them agree");
    }
    return override > 0 ? override : given.value_or(1);
  };
  c.tensor = split("tensor_parallel", o.tensor);
  c.sequence_parallel = w.boolean("sequence_parallel").value_or(false) || o.sequence_parallel;
  c.context = split("context_parallel", o.context);
  c.hidden_dropout = w.number("hidden_dropout", Bounds{0.0, 1.0, false, true}).value_or(c.hidden_dropout);
  c.attention_dropout = w.number("attention_dropout", Bounds{0.0, 1.0, false, true}).value_or(c.attention_dropout);
  if (auto d = w.string("dtype")) {
    auto e = parse_element_type(*d);
    if (!e) w.fail("dtype", "'" + *d + "' is not an element type; expected one of " + join(all_element_type_names()));
    c.dtype = *e;
  }
  if (!kv_channels && c.hidden % c.heads != 0) {
    w.fail("heads", std::to_string(c.heads) + " heads do not divide hidden = " + std::to_string(c.hidden) +
                        " (or give each head's width: kv_channels)");
  }
  c.kv_channels = kv_channels.value_or(c.hidden / c.heads);
  if (c.heads % c.query_groups != 0) {
    w.fail("num_query_groups", "num_query_groups = " + std::to_string(c.query_groups) + " does not divide heads = " +
                                   std::to_string(c.heads) + " (each group of queries shares one key and value head)");
  }
  for (const auto& [key, value] : {std::pair<const char*, std::int64_t>{"heads", c.heads}, {"ffn_hidden", c.ffn},
                                   {"vocab", c.vocab}, {"num_query_groups", c.query_groups}}) {
    if (value % c.tensor != 0) {
      w.fail("tensor_parallel", "tensor_parallel = " + std::to_string(c.tensor) + " does not divide " + key + " = " +
                                    std::to_string(value) + " (Megatron splits heads, key/value groups, the MLP and "
                                    "the vocabulary)");
    }
  }
  if (c.sequence_parallel && c.tensor < 2) {
    w.fail("sequence_parallel", "sequence parallelism splits the sequence over the tensor-parallel ranks: it needs "
                                "tensor_parallel >= 2");
  }
  // Each context-parallel rank holds seq / context tokens, split again over the tensor-parallel ranks with sequence
  // parallelism.
  if (c.seq % c.context != 0 || (c.sequence_parallel && c.seq % (c.context * c.tensor) != 0)) {
    const std::int64_t parts = c.context * (c.sequence_parallel ? c.tensor : 1);
    w.fail("seq_length", (c.context > 1 ? "context_parallel = " + std::to_string(c.context) : std::string()) +
                             (c.context > 1 && c.sequence_parallel ? " x " : "") +
                             (c.sequence_parallel ? "tensor_parallel = " + std::to_string(c.tensor) : std::string()) +
                             (parts != c.context && c.context > 1 ? " = " + std::to_string(parts) : "") +
                             " does not divide seq_length = " + std::to_string(c.seq) +
                             " (the sequence is split over those ranks)");
  }
  if (c.global_batch % c.micro_batch != 0) {
    w.fail("global_batch", "global_batch = " + std::to_string(c.global_batch) + " is not a multiple of micro_batch = " +
                               std::to_string(c.micro_batch));
  }
  if (o.micro_batch > 0) c.micro_batch = o.micro_batch;
  // Every count stays in int64: the largest tensor (scores b·a·s², logits b·s·V, the weights) counted in bits,
  // and the MACs of a step (forward, recomputation and backward: 4× the forward), with room for sums.
  using R = long double;
  const R b = static_cast<R>(c.micro_batch), s = static_cast<R>(c.seq), h = static_cast<R>(c.hidden);
  const R a = static_cast<R>(c.heads), v = static_cast<R>(c.vocab), f = static_cast<R>(c.ffn);
  const R w_att = a * static_cast<R>(c.kv_channels);  // the attention's width
  const R largest = std::max({b * a * s * s, b * s * v, b * s * std::max({2 * f, 3 * w_att, h}), v * h, 2 * f * h, 3 * h * w_att});
  const R macs = static_cast<R>(c.layers) * b * (4 * s * h * w_att + 3 * s * f * h + 2 * s * s * w_att) + b * s * h * v;
  const auto max = static_cast<R>(std::numeric_limits<std::int64_t>::max());
  if (largest > max / 4096 || 4 * macs > max / 16) {
    w.fail("micro_batch", "this configuration needs " + format_number(static_cast<double>(largest)) + " elements in one "
                              "tensor and " + format_number(static_cast<double>(macs)) +
                              " MACs per forward pass, more than monet counts in 64-bit integers");
  }
  w.finish({"hidden", "layers", "heads", "seq_length", "vocab", "ffn_hidden", "global_batch", "micro_batch",
            "tensor_parallel", "sequence_parallel", "context_parallel", "num_query_groups", "kv_channels", "swiglu", "normalization",
            "add_bias_linear", "position_embedding_type", "untie_embeddings_and_output_weights", "attention_backend",
            "bias_swiglu_fusion", "embedding_layernorm"});
  return c;
}

class GptBuilder : GeneratedGraph {
 public:
  GptBuilder(const GptConfig& c, SourceLocation where) : GeneratedGraph(c.name, std::move(where)), c_(c) {}

  GraphPtr build() && {
    // With context parallelism the rank holds S = seq / cp tokens (the position table stays whole).
    const std::int64_t B = c_.micro_batch, S = local_seq(), H = c_.hidden;
    const TensorId tokens = tensor("tokens", {B, S}, ElementType::int64, TensorRole::input);
    // Tensor parallel: the vocabulary is split over the ranks (VocabParallelEmbedding), positions are not.
    const TensorId wte = weight("embedding.word_embeddings.weight", {c_.vocab / c_.tensor, H});
    const TensorId words = act("embedding.word_embeddings", {B, S, H});
    ops::embedding(b_, op("embedding.word_embeddings", "embedding.word_embeddings", "Embedding"), wte, tokens, words);
    TensorId sum = words;
    // Learned absolute positions; rotary ones are applied to q and k in every layer. ALiBi's bias is the input
    // Megatron-DeepSpeed's scores GEMM accumulates onto (baddbmm's beta = 1): a [heads, s] read, not modelled.
    if (!c_.rope && !c_.alibi) {
      const TensorId wpe = weight("embedding.position_embeddings.weight", {c_.seq, H});
      const TensorId positions = act("embedding.position_embeddings", {S, H});
      ops::embedding(b_, op("embedding.position_embeddings", "embedding.position_embeddings", "Embedding"), wpe,
                     std::nullopt, positions);
      sum = act("embedding.add", {B, S, H});
      ops::elementwise(b_, op("embedding.add", "embedding", "Add"), {words, positions}, sum, 1);
    }
    if (c_.embedding_norm) sum = layer_norm("embedding.layernorm", "embedding", sum);
    TensorId x = dropout("embedding.dropout", "embedding", sequence_part("embedding.shard", "embedding", "Shard", sum),
                         c_.hidden_dropout);
    for (std::int64_t l = 0; l < c_.layers; ++l) x = layer("layers." + std::to_string(l), x);
    const TensorId final_ln = layer_norm("final_layernorm", "final_layernorm", x);
    const TensorId logits = act("output_layer", {B, S, c_.vocab / c_.tensor});
    Operator head = op("output_layer", "output_layer", "MatMul");
    head.kind = OpKind::gemm;
    head.attributes["keeps_working_precision"] = {1};  // Megatron's output layer is no Transformer Engine module: never FP8
    const TensorId head_weight = c_.untied ? weight("output_layer.weight", {c_.vocab / c_.tensor, H}) : wte;
    ops::matmul(b_, std::move(head), gather("output_layer", final_ln), head_weight, std::nullopt, logits,
                ops::MatmulSpec{false, true});
    return std::move(b_).build();
  }

 private:
  TensorId act(const std::string& name, Shape shape) { return tensor(name, std::move(shape), c_.dtype, TensorRole::activation); }
  TensorId weight(const std::string& name, Shape shape) { return tensor(name, std::move(shape), c_.dtype, TensorRole::weight); }

  /// LayerNorm, or RMSNorm (ONNX's RMSNormalization: a scale, no bias, no mean).
  TensorId layer_norm(const std::string& name, const std::string& module, TensorId x) {
    const Shape shape = b_.tensor(x).shape;
    const TensorId y = act(name, shape);
    const std::optional<TensorId> bias = c_.rms_norm ? std::nullopt : std::optional(weight(name + ".bias", {c_.hidden}));
    const OperatorId n = ops::layer_norm(b_, op(name, module, c_.rms_norm ? "RMSNormalization" : "LayerNormalization"),
                                         x, weight(name + ".weight", {c_.hidden}), bias, y, shape.size() - 1);
    if (c_.rms_norm) b_.op(n).ops_per_iteration = kRmsNormOps;
    return y;
  }

  TensorId linear(const std::string& name, TensorId x, std::int64_t out) {
    return GeneratedGraph::linear(name, x, out, c_.dtype, c_.bias);
  }

  /// Rotary position embedding of q or k ([b, s, heads, d]): Megatron's fused kernel rotates each pair of features
  /// by its position's angle (x·cos + rotate_half(x)·sin: 3 operations per element); the angles are a buffer.
  TensorId rotary(const std::string& name, const std::string& module, TensorId x) {
    if (!c_.rope) return x;
    const TensorId y = act(name, b_.tensor(x).shape);
    ops::elementwise(b_, op(name, module, "RotaryEmbedding"), {x}, y, 3);
    return y;
  }

  /// A view of `width` features of x's last axis from `offset` on (a piece of a fused GEMM's output).
  TensorId split_view(const std::string& name, const std::string& module, TensorId x, std::int64_t offset,
                      std::int64_t width) {
    Shape shape = b_.tensor(x).shape;
    shape.back() = width;
    const TensorId y = act(name, shape);
    Operator split = op(name, module, "Split");
    split.kind = OpKind::view;
    split.ops_per_iteration = 0;
    split.attributes["axis"] = {static_cast<std::int64_t>(shape.size() - 1)};
    split.attributes["offset"] = {offset};
    split.operands.push_back(ops::operand(b_, y, OperandSlot::O, {}));
    split.operands.push_back(ops::operand(b_, x, OperandSlot::I1, {}));
    b_.add_operator(std::move(split));
    return y;
  }

  /// Dropout keeps a mask for backward (added by autodiff); p = 0 is no operator at all.
  TensorId dropout(const std::string& name, const std::string& module, TensorId x, double p) {
    if (p <= 0) return x;
    const TensorId y = act(name, b_.tensor(x).shape);
    Operator o = op(name, module, "Dropout");
    o.attributes["ratio_ppm"] = {static_cast<std::int64_t>(p * 1e6 + 0.5)};
    ops::elementwise(b_, std::move(o), {x}, y, 2);  // mask and scale
    return y;
  }

  /// Sequence parallelism (Korthikanti et al. 2022): between the tensor-parallel GEMMs, activations are split
  /// along the sequence. The input of a column-parallel layer (linear_qkv, linear_fc1, output_layer) is
  /// all-gathered first; as in Megatron, the layer keeps the sharded input and the gather runs again in the
  /// backward pass (recompute_in_backward). Without sequence parallelism: x itself.
  TensorId gather(const std::string& layer, TensorId x) {
    if (!c_.sequence_parallel) return x;
    const std::string name = layer + ".sequence_gather";
    return resequence(name, name, "AllGather", x, local_seq(), {"recompute_in_backward"});
  }

  /// Context parallelism (Megatron-core's, ring attention): a rank's queries attend to the keys and values of the
  /// whole sequence, exchanged around the context-parallel group. As an all-gather of the rank's keys (or values)
  /// along the sequence; the backward pass exchanges them again (recompute_in_backward) and reduce-scatters their
  /// gradients. Without context parallelism: x itself.
  TensorId context_gather(const std::string& name, TensorId x) {
    if (c_.context < 2) return x;
    return resequence(name, name, "AllGather", x, c_.seq, {"recompute_in_backward", "context_parallel"});
  }

  std::int64_t local_seq() const { return c_.seq / c_.context; }

  /// This rank's part of the sequence: the output of a row-parallel layer reduce-scattered ("ReduceScatter"), or the
  /// embeddings (already summed) split ("Shard"). The collectives are the parallelism plugin's.
  TensorId sequence_part(const std::string& name, const std::string& module, const char* type, TensorId x) {
    if (!c_.sequence_parallel) return x;
    return resequence(name, module, type, x, local_seq() / c_.tensor, {});
  }

  /// x with `rows` positions of the sequence (axis 1), as a copy operator of `type` carrying the given flags: the
  /// collectives' place in the rank's graph (the parallelism plugin costs them).
  TensorId resequence(const std::string& name, const std::string& module, const char* type, TensorId x,
                      std::int64_t rows, std::initializer_list<const char*> flags) {
    Shape shape = b_.tensor(x).shape;
    shape[1] = rows;
    const TensorId y = act(name, shape);
    Operator o = op(name, module, type);
    o.attributes["axis"] = {1};
    for (const char* f : flags) o.attributes[f] = {1};
    ops::pad(b_, std::move(o), x, y, std::vector<std::int64_t>(shape.size(), 0));
    return y;
  }

  /// One of q, k, v: a view of `heads` heads of the fused QKV output from feature `offset` on, as [b, s, heads, d].
  TensorId head_view(const std::string& prefix, TensorId qkv, std::int64_t offset, std::int64_t heads,
                     const char* letter) {
    const std::int64_t B = c_.micro_batch, S = local_seq(), d = c_.kv_channels;
    const TensorId flat = split_view(prefix + ".split." + letter, prefix, qkv, offset, heads * d);
    const TensorId shaped = act(prefix + ".heads." + letter, {B, S, heads, d});
    ops::view(b_, op(prefix + ".heads." + letter, prefix, "Reshape"), flat, shaped);
    return shaped;
  }

  TensorId layer(const std::string& p, TensorId x) {
    // Megatron's tensor-parallel split: linear_qkv and linear_fc1 by columns (heads, MLP features: Ql, Fl per
    // rank), linear_proj and linear_fc2 by rows (their outputs are partial sums, all-reduced in Megatron); norms,
    // dropouts and residuals are replicated, or with sequence parallelism split along the sequence (S / t rows:
    // `gather` before the column-parallel layers, `sequence_part` after the row-parallel ones). Without t: Ql = A·d,
    // Al = A, Fl = ffn.
    const std::int64_t B = c_.micro_batch, S = local_seq(), t = c_.tensor;
    // Al heads of d features: the queries' width (H / t unless kv_channels makes the attention wider or narrower).
    const std::int64_t Al = c_.heads / t, Gl = c_.query_groups / t, d = c_.kv_channels, Ql = Al * d;
    const std::string attn = p + ".self_attention";
    const std::string core = attn + ".core_attention";
    const TensorId ln1 = layer_norm(p + ".input_layernorm", p + ".input_layernorm", x);
    const TensorId qkv = linear(attn + ".linear_qkv", gather(attn + ".linear_qkv", ln1), Ql + 2 * Gl * d);
    const TensorId q = rotary(attn + ".rotary.q", attn, head_view(attn, qkv, 0, Al, "q"));
    const TensorId k = context_gather(core + ".key_gather", rotary(attn + ".rotary.k", attn, head_view(attn, qkv, Ql, Gl, "k")));
    const TensorId v = context_gather(core + ".value_gather", head_view(attn, qkv, Ql + Gl * d, Gl, "v"));
    // Without grouped-query attention each head has its own key: [b, a, s, s_kv] scores. With it, the R = a/g
    // queries of a group read the group's key and value: [b, g, R, s, s_kv].
    const bool grouped = Gl < Al;
    const std::int64_t R = Al / Gl;
    // The queries by group ([b, s, g, R, d]), as grouped attention and FlashAttention read them.
    const TensorId qg = grouped || c_.flash ? act(attn + ".heads.q.grouped", {B, S, Gl, R, d}) : q;
    if (qg != q) ops::view(b_, op(attn + ".heads.q.grouped", attn, "Reshape"), q, qg);
    if (c_.flash) return after_attention(p, x, flash_attention(core, qg, k, v));
    const Shape score_shape = grouped ? Shape{B, Gl, R, S, c_.seq} : Shape{B, Al, S, c_.seq};
    const TensorId scores = act(core + ".scores", score_shape);
    Operator qk = op(core + ".scores", core, "MatMul");
    qk.kind = OpKind::matmul;
    // 1/sqrt(d) folded in (baddbmm alpha)
    ops::einsum(b_, std::move(qk), grouped ? "bqgrd,bkgd->bgrqk" : "bqhd,bkhd->bhqk", {qg, k}, scores);
    const TensorId probs = act(core + ".softmax", score_shape);
    const OperatorId sm = ops::softmax(b_, op(core + ".softmax", core, "Softmax"), scores, std::nullopt, probs,
                                       score_shape.size() - 1);
    b_.op(sm).ops_per_iteration = ops::kSoftmaxOps + 2;  // Megatron's fused scale + causal mask + softmax
    b_.op(sm).attributes["causal"] = {1};
    const TensorId dropped = dropout(core + ".attention_dropout", core, probs, c_.attention_dropout);
    const TensorId ctx4 = act(core + ".context", grouped ? Shape{B, S, Gl, R, d} : Shape{B, S, Al, d});
    Operator pv = op(core + ".context", core, "MatMul");
    pv.kind = OpKind::matmul;
    ops::einsum(b_, std::move(pv), grouped ? "bgrqk,bkgd->bqgrd" : "bhqk,bkhd->bqhd", {dropped, v}, ctx4);
    const TensorId ctx = act(core + ".merge_heads", {B, S, Ql});
    ops::view(b_, op(core + ".merge_heads", core, "Reshape"), ctx4, ctx);
    return after_attention(p, x, ctx);
  }

  /// FlashAttention (Dao et al.; Megatron-Core's attention_backend = "flash"): scores, causal mask, softmax and
  /// the context in one kernel that keeps the scores on chip and skips the masked half. One MAC-kind operator over
  /// batch, queries, groups, queries per group, keys, head dim and products (named as monet's einsums name their
  /// dims, so that cores' spatial mappings apply: B, D, H, D2, C, K, C2). Two products (q·kᵀ, probs·v; the
  /// `pass_dim` attribute); the causal triangle of (query, key) pairs is counted as each query meeting half the keys
  /// (s_kv / 2, read with a stride of two, so the keys and values are read whole), which makes the MACs the
  /// triangle's. Its GEMM for a GPU: M = the queries, N = the keys, K = head dim x products, batch = batch x groups
  /// (the `gemm_*` attributes). It keeps the log-sum-exp of every query row (autodiff adds it), and its backward
  /// pass recomputes the scores.
  TensorId flash_attention(const std::string& core, TensorId qg, TensorId k, TensorId v) {
    const Shape shape = b_.tensor(qg).shape;  // [b, s, g, R, d]; a copy, as adding tensors may move them
    const std::int64_t B = shape[0], S = shape[1], G = shape[2], R = shape[3], d = shape[4];
    const std::int64_t keys = b_.tensor(k).shape[1];
    const TensorId ctx5 = act(core + ".flash", {B, S, G, R, d});
    Operator o = op(core + ".flash", core, "FlashAttention");
    o.kind = OpKind::matmul;
    o.ops_per_iteration = 1;
    const std::int64_t stride = 2;  // causal: each query meets half the keys, spread over all of them
    o.dims = {{"B", B}, {"D", S}, {"H", G}, {"D2", R}, {"C", std::max<std::int64_t>(1, keys / stride)}, {"K", d}, {"C2", 2}};
    auto at = [](int dim, std::int64_t coeff = 1) { return AffineExpr{{AffineExpr::Term{dim, coeff}}, 0}; };
    const std::vector<AffineExpr> rows{at(0), at(1), at(2), at(3), at(5)}, kv{at(0), at(4, stride), at(2), at(5)};
    o.operands.push_back(ops::operand(b_, ctx5, OperandSlot::O, rows));
    o.operands.push_back(ops::operand(b_, qg, OperandSlot::I1, rows));
    o.operands.push_back(ops::operand(b_, k, OperandSlot::I2, kv));
    o.operands.push_back(ops::operand(b_, v, OperandSlot::I2, kv));
    o.attributes["causal"] = {1};
    o.attributes["gemm_m"] = {1, 3};
    o.attributes["gemm_n"] = {4};
    o.attributes["gemm_k"] = {5, 6};
    o.attributes["pass_dim"] = {6};
    b_.add_operator(std::move(o));
    const TensorId ctx = act(core + ".merge_heads", {B, S, G * R * d});
    ops::view(b_, op(core + ".merge_heads", core, "Reshape"), ctx5, ctx);
    return ctx;
  }

  /// Megatron's fused SwiGLU (bias_swiglu_impl): silu(gate) · up of linear_fc1's two halves in one kernel, which
  /// keeps only its input and recomputes silu in its backward pass. An elementwise operator over the output's
  /// elements reading the input twice, at the gate's and at the up half's offset.
  void fused_swiglu(const std::string& name, const std::string& module, TensorId fc1, TensorId out) {
    const Shape shape = b_.tensor(out).shape;  // [b, s, F/t]
    Operator o = op(name, module, "Swiglu");
    o.kind = OpKind::elementwise;
    o.ops_per_iteration = 5;  // sigmoid (3), two multiplications
    o.dims = {{"B", shape[0]}, {"D", shape[1]}, {"K", shape[2]}};
    const std::vector<AffineExpr> at{AffineExpr::of_dim(0), AffineExpr::of_dim(1), AffineExpr::of_dim(2)};
    std::vector<AffineExpr> up = at;
    up[2].offset = shape[2];
    o.operands.push_back(ops::operand(b_, out, OperandSlot::O, at));
    o.operands.push_back(ops::operand(b_, fc1, OperandSlot::I1, at));
    o.operands.push_back(ops::operand(b_, fc1, OperandSlot::I1, up));
    b_.add_operator(std::move(o));
  }

  /// The layer after its attention core's context (`ctx`, [b, s, h/t]): projection, dropout, residual, MLP.
  TensorId after_attention(const std::string& p, TensorId x, TensorId ctx) {
    const std::int64_t B = c_.micro_batch, S = local_seq(), H = c_.hidden, t = c_.tensor;
    const std::int64_t Sl = c_.sequence_parallel ? S / t : S, Fl = c_.ffn / t;
    const std::string attn = p + ".self_attention";
    const TensorId proj = sequence_part(attn + ".linear_proj.sequence_reduce_scatter", attn + ".linear_proj",
                                        "ReduceScatter", linear(attn + ".linear_proj", ctx, H));
    const TensorId proj_drop = dropout(p + ".self_attention_dropout", p, proj, c_.hidden_dropout);
    const TensorId res1 = act(p + ".self_attention_residual", {B, Sl, H});
    ops::elementwise(b_, op(p + ".self_attention_residual", p, "Add"), {proj_drop, x}, res1, 1);
    const TensorId ln2 = layer_norm(p + ".pre_mlp_layernorm", p + ".pre_mlp_layernorm", res1);
    const TensorId fc1 = linear(p + ".mlp.linear_fc1", gather(p + ".mlp.linear_fc1", ln2), c_.swiglu ? 2 * Fl : Fl);
    const TensorId activated = act(p + (c_.swiglu ? ".mlp.swiglu" : ".mlp.gelu"), {B, S, Fl});
    if (c_.swiglu && c_.swiglu_fusion) {
      fused_swiglu(p + ".mlp.swiglu", p + ".mlp", fc1, activated);
    } else if (c_.swiglu) {  // silu(gate) · up, the two halves of linear_fc1's output
      const TensorId gate = split_view(p + ".mlp.split.gate", p + ".mlp", fc1, 0, Fl);
      const TensorId up = split_view(p + ".mlp.split.up", p + ".mlp", fc1, Fl, Fl);
      const TensorId silu = act(p + ".mlp.silu", {B, S, Fl});
      ops::elementwise(b_, op(p + ".mlp.silu", p + ".mlp", "Silu"), {gate}, silu, 4);
      ops::elementwise(b_, op(p + ".mlp.swiglu", p + ".mlp", "Mul"), {silu, up}, activated, 1);
    } else {
      ops::elementwise(b_, op(p + ".mlp.gelu", p + ".mlp", "Gelu"), {fc1}, activated, 8);
    }
    const TensorId fc2 = sequence_part(p + ".mlp.linear_fc2.sequence_reduce_scatter", p + ".mlp.linear_fc2",
                                       "ReduceScatter", linear(p + ".mlp.linear_fc2", activated, H));
    const TensorId mlp_drop = dropout(p + ".mlp_dropout", p, fc2, c_.hidden_dropout);
    const TensorId res2 = act(p + ".mlp_residual", {B, Sl, H});
    ops::elementwise(b_, op(p + ".mlp_residual", p, "Add"), {mlp_drop, res1}, res2, 1);
    return res2;
  }

  const GptConfig& c_;
};

}  // namespace

GraphPtr build_gpt(const TomlDocument& doc, const GptOverrides& overrides) {
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  TableReader w = root.required_table("workload");
  const SourceLocation where = w.where();
  const GptConfig c = read_config(w, overrides);
  root.finish();
  return GptBuilder(c, where).build();
}

}  // namespace monet::plugins
