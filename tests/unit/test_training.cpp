// Training graphs: every gradient rule on a tiny network whose MACs and saved bytes are worked out by hand,
// frozen parameters, gradient accumulation, memory accounting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/ir/ops.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/memory.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

GraphPtr forward_from_toml(const test::ScratchDir& dir, const std::string& text) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::frontend, "toml");
  return r.create<WorkloadFrontend>(*h, default_params(h->info.params, "test"))->load(dir.write("w.toml", text));
}

GraphPtr backward(const Graph& forward, TrainingSettings settings = {}) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
  EXPECT_NE(h, nullptr);
  return r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(forward, settings);
}

std::int64_t macs(const Graph& g, Phase phase, const std::string& prefix = "") {
  std::int64_t n = 0;
  for (const Operator& op : g.operators()) {
    if (op.phase == phase && op.name.rfind(prefix, 0) == 0) n += op.macs();
  }
  return n;
}

const Operator* op_named(const Graph& g, const std::string& name) {
  const Operator* op = g.find_operator(name);
  EXPECT_NE(op, nullptr) << name;
  return op;
}

bool reads(const Graph& g, const Operator& op, const std::string& tensor) {
  for (const Operand& o : op.operands) {
    if (!o.is_output() && g.tensor(o.tensor).name == tensor) return true;
  }
  for (TensorId t : op.keeps_alive) {
    if (g.tensor(t).name == tensor) return true;
  }
  return false;
}

std::int64_t saved_bytes(const Graph& g) { return training_memory(g).saved_activation_bytes; }

class Training : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
};

// x [2,3,8,8] -> conv (4 out, 3x3, pad 1, bias) -> relu -> flatten -> linear (10 out) -> cross-entropy.
const char* kSmallCnn = R"([[inputs]]
name = "x"
shape = [2, 3, 8, 8]

[[layers]]
name = "conv"
op = "conv"
out_channels = 4
kernel = 3
padding = 1

[[layers]]
name = "relu"
op = "relu"

[[layers]]
name = "flat"
op = "flatten"

[[layers]]
name = "fc"
op = "linear"
out_features = 10
)";

TEST_F(Training, ConvLinearReluAndLoss) {
  const GraphPtr g = backward(*forward_from_toml(dir_, kSmallCnn));
  // Forward conv 2·4·3·8·8·9 = 13,824 MACs, fc 2·10·256 = 5,120.
  EXPECT_EQ(macs(*g, Phase::forward), 13'824 + 5'120);
  // No dX for the conv: its input is the graph input. fc dX = 5,120; dW = both forwards.
  EXPECT_EQ(macs(*g, Phase::backward_dx), 5'120);
  EXPECT_EQ(macs(*g, Phase::backward_dw), 13'824 + 5'120);
  EXPECT_EQ(g->find_operator("conv/dX"), nullptr);
  const Operator* dw = op_named(*g, "conv/dW");
  EXPECT_EQ(dw->kind, OpKind::conv);
  EXPECT_EQ(dw->derived_from, g->find_operator("conv")->id);
  EXPECT_TRUE(reads(*g, *dw, "x"));  // conv saves its input for dW
  EXPECT_EQ(op_named(*g, "conv/dBias")->kind, OpKind::reduction);
  EXPECT_TRUE(reads(*g, *op_named(*g, "relu/d1"), "relu"));  // ReLU saves its output
  EXPECT_TRUE(reads(*g, *op_named(*g, "fc/dW"), "flat"));    // linear saves its input (a view of relu)
  EXPECT_EQ(op_named(*g, "loss/LogSoftmax")->phase, Phase::loss);
  EXPECT_EQ(op_named(*g, "loss/CrossEntropyGrad")->phase, Phase::backward_dx);
  EXPECT_EQ(g->find_tensor("labels")->shape, (Shape{2}));
  // Saved, fp32: x 2·3·64·4 = 1,536; relu output (= flat) 2·4·64·4 = 2,048; log-probs 2·10·4 = 80;
  // labels 2·8 = 16.
  EXPECT_EQ(saved_bytes(*g), 1'536 + 2'048 + 80 + 16);
  // Complete parameter gradients: conv 4·3·9 + 4, fc 10·256 + 10, fp32.
  EXPECT_EQ(training_memory(*g).gradient_bytes, (112 + 2'570) * 4);
  for (const Tensor& t : g->tensors()) {
    if (t.gradient_of != kNone) {
      EXPECT_EQ(t.shape, g->tensor(t.gradient_of).shape) << t.name;
    }
  }
}

TEST_F(Training, FrozenParametersGetNoGradientAndSaveNothingForIt) {
  const GraphPtr fwd = forward_from_toml(dir_, kSmallCnn);
  GraphBuilder b(*fwd);
  b.tensor(b.find_tensor("conv.weight")).frozen = true;
  b.tensor(b.find_tensor("conv.bias")).frozen = true;
  const GraphPtr g = backward(*std::move(b).build());
  EXPECT_EQ(g->find_operator("conv/dW"), nullptr);
  EXPECT_EQ(g->find_operator("conv/dBias"), nullptr);
  EXPECT_EQ(g->find_operator("relu/d1"), nullptr);  // nothing upstream needs a gradient
  EXPECT_EQ(macs(*g, Phase::backward_dw), 5'120);
  EXPECT_EQ(macs(*g, Phase::backward_dx), 0);  // fc dX is not needed either
  EXPECT_EQ(saved_bytes(*g), 2'048 + 80 + 16);  // x is no longer saved
}

// a [1,2,8,8] -> 1x1 conv (so its output needs dX) -> 3x3 stride-2 conv -> 1x1 stride-2 conv on a -> ...
const char* kStrided = R"([[inputs]]
name = "x"
shape = [1, 2, 8, 8]

[[layers]]
name = "a"
op = "conv"
out_channels = 2
kernel = 1
bias = false

[[layers]]
name = "s2"
op = "conv"
input = "a"
out_channels = 4
kernel = 3
stride = 2
padding = 1
bias = false

[[layers]]
name = "down"
op = "conv"
input = "a"
out_channels = 4
kernel = 1
stride = 2
bias = false

[[layers]]
name = "sum"
op = "add"
inputs = ["s2", "down"]

[[layers]]
name = "flat"
op = "flatten"

[[layers]]
name = "fc"
op = "linear"
out_features = 3
bias = false
)";

TEST_F(Training, StridedConvolutionGradientsSkipInsertedZeros) {
  const GraphPtr g = backward(*forward_from_toml(dir_, kStrided));
  // s2 forward: 4·2·4·4·9 = 1,152 MACs. dX in 2×2 phases (H = 8, s = 2, p = 1, F = 3): even rows meet tap 1,
  // odd rows taps 0 and 2, 4 rows each: per axis 4·1 + 4·2 = 12 = OY·FY. Phase MACs 2·4·(4·1|4·2)·(4·1|4·2).
  EXPECT_EQ(op_named(*g, "s2/dX[0,0]")->macs(), 2 * 4 * 4 * 4);
  EXPECT_EQ(op_named(*g, "s2/dX[0,1]")->macs(), 2 * 4 * 4 * 8);
  EXPECT_EQ(op_named(*g, "s2/dX[1,0]")->macs(), 2 * 4 * 8 * 4);
  EXPECT_EQ(op_named(*g, "s2/dX[1,1]")->macs(), 2 * 4 * 8 * 8);
  EXPECT_EQ(macs(*g, Phase::backward_dx, "s2/dX"), 1'152);
  EXPECT_TRUE(op_named(*g, "s2/dX.interleave")->is_view());
  EXPECT_EQ(op_named(*g, "s2/dX[1,1]")->dims[4].size, 4);  // 4 odd rows
  EXPECT_EQ(op_named(*g, "s2/dX[1,1]")->dims[6].size, 2);  // 2 taps
  // 1x1 stride 2: only even rows and columns receive a gradient: one phase, 4·2·4·4 = 128 = the forward.
  EXPECT_EQ(op_named(*g, "down/dX[0,0]")->macs(), 128);
  EXPECT_EQ(g->find_operator("down/dX[1,1]"), nullptr);
  // a has two consumers: their gradients add up (one operation per element).
  const Operator* sum = op_named(*g, "grad_sum(a)");
  EXPECT_EQ(sum->kind, OpKind::elementwise);
  EXPECT_DOUBLE_EQ(sum->ops_per_iteration, 1);
  // Totals: dX of s2 and down equal their forwards; a's input is the graph input.
  EXPECT_EQ(macs(*g, Phase::backward_dx), 1'152 + 128 + 3 * 64);
  EXPECT_EQ(macs(*g, Phase::backward_dw), 2 * 2 * 64 + 1'152 + 128 + 3 * 64);
}

TEST_F(Training, DepthwiseConvolutionGradients) {
  const GraphPtr g = backward(*forward_from_toml(dir_, R"([[inputs]]
name = "x"
shape = [1, 4, 6, 6]
[[layers]]
name = "pw"
op = "conv"
out_channels = 8
kernel = 1
bias = false
[[layers]]
name = "dw"
op = "conv"
out_channels = 8
groups = 8
kernel = 3
padding = 1
bias = false
[[layers]]
name = "flat"
op = "flatten"
[[layers]]
name = "fc"
op = "linear"
out_features = 2
bias = false
)"));
  // Depthwise: G·OY·OX·FY·FX = 8·6·6·9 = 2,592 MACs forward, dX and dW alike; dX keeps the group dim.
  EXPECT_EQ(op_named(*g, "dw")->macs(), 2'592);
  EXPECT_EQ(op_named(*g, "dw/dW")->macs(), 2'592);
  EXPECT_EQ(op_named(*g, "dw/dX")->macs(), 2'592);
  EXPECT_EQ(op_named(*g, "dw/dX")->dims[1].name, "G");
}

TEST_F(Training, AttentionMatmulsSoftmaxAndNorms) {
  const GraphPtr g = backward(*forward_from_toml(dir_, R"([[inputs]]
name = "x"
shape = [1, 4, 8]
[[layers]]
name = "pre"
op = "linear"
out_features = 8
bias = false
[[layers]]
name = "ln"
op = "loopnest"
kind = "norm"
type = "LayerNormalization"
dims = ["B", "D", "K"]
sizes = [1, 4, 8]
ops_per_iteration = 6.0
attributes = { axis = [2] }
outputs = [{ tensor = "ln", shape = [1, 4, 8], index = ["B", "D", "K"] }]
inputs = [{ tensor = "pre", index = ["B", "D", "K"] }, { tensor = "ln.w", index = ["K"] }, { tensor = "ln.b", index = ["K"] }]
[[tensors]]
name = "ln.w"
shape = [8]
[[tensors]]
name = "ln.b"
shape = [8]
)" R"(
[[layers]]
name = "q"
op = "linear"
input = "ln"
out_features = 8
bias = false
[[layers]]
name = "k"
op = "linear"
input = "ln"
out_features = 8
bias = false
[[layers]]
name = "scores"
op = "matmul"
inputs = ["q", "k"]
transpose_b = true
[[layers]]
name = "probs"
op = "softmax"
[[layers]]
name = "ctx"
op = "matmul"
inputs = ["probs", "q"]
[[layers]]
name = "flat"
op = "flatten"
[[layers]]
name = "fc"
op = "linear"
out_features = 5
bias = false
)"));
  // scores = q·kᵀ: 4·4·8 = 128 MACs; its dA (dq) and dB (dk) are 128 each; ctx = probs·q: 4·8·4 = 128, twice.
  EXPECT_EQ(op_named(*g, "scores/dX")->macs(), 128);
  EXPECT_EQ(op_named(*g, "scores/dB")->macs(), 128);
  EXPECT_EQ(op_named(*g, "scores/dX")->phase, Phase::backward_dx);  // two activations: both are dX
  EXPECT_EQ(op_named(*g, "ctx/dX")->macs(), 128);
  EXPECT_EQ(op_named(*g, "ctx/dB")->macs(), 128);
  // Softmax: a row reduction then an elementwise pass, both reading the saved output.
  EXPECT_EQ(op_named(*g, "probs/dRowSum")->kind, OpKind::reduction);
  EXPECT_TRUE(reads(*g, *op_named(*g, "probs/dX"), "probs"));
  EXPECT_FALSE(reads(*g, *op_named(*g, "probs/dX"), "scores"));
  // Layer norm: per-token statistics are saved with its input; dγ, dβ by a reduction over tokens.
  EXPECT_EQ(g->find_tensor("ln:mean")->shape, (Shape{1, 4}));
  EXPECT_TRUE(reads(*g, *op_named(*g, "ln/dX"), "ln:rstd"));
  EXPECT_TRUE(reads(*g, *op_named(*g, "ln/dX"), "pre"));  // layer norm saves its input
  EXPECT_EQ(op_named(*g, "ln/dParams")->phase, Phase::backward_dw);
  // Saved, fp32: x 32·4 (pre's input), pre 32·4 (ln input) + ln mean, rstd 2·4·4, ln output 32·4 (q, k
  // input), q 32·4, k 32·4, probs 16·4, ctx (= flat) 32·4, log-probs 5·4, labels 8.
  EXPECT_EQ(saved_bytes(*g), 128 + 128 + 32 + 128 + 128 + 128 + 64 + 128 + 20 + 8);
}

TEST_F(Training, BatchNormPoolingAndPointwiseSavings) {
  const GraphPtr g = backward(*forward_from_toml(dir_, R"([[inputs]]
name = "x"
shape = [2, 3, 4, 4]
[[layers]]
name = "c"
op = "conv"
out_channels = 3
kernel = 1
bias = false
[[layers]]
name = "bn"
op = "loopnest"
kind = "norm"
type = "BatchNormalization"
dims = ["B", "K", "OY", "OX"]
sizes = [2, 3, 4, 4]
ops_per_iteration = 6.0
attributes = { training_mode = [1] }
outputs = [{ tensor = "bn", shape = [2, 3, 4, 4], index = ["B", "K", "OY", "OX"] }]
inputs = [{ tensor = "c", index = ["B", "K", "OY", "OX"] }, { tensor = "g", index = ["K"] },
          { tensor = "b", index = ["K"] }, { tensor = "rm", index = ["K"] }, { tensor = "rv", index = ["K"] }]
[[tensors]]
name = "g"
shape = [3]
[[tensors]]
name = "b"
shape = [3]
[[tensors]]
name = "rm"
shape = [3]
role = "buffer"
[[tensors]]
name = "rv"
shape = [3]
role = "buffer"
)" R"(
[[layers]]
name = "act"
op = "gelu"
[[layers]]
name = "sig"
op = "sigmoid"
[[layers]]
name = "clip"
op = "relu6"
[[layers]]
name = "mp"
op = "maxpool"
kernel = 2
[[layers]]
name = "ap"
op = "global_avgpool"
[[layers]]
name = "flat"
op = "flatten"
[[layers]]
name = "fc"
op = "linear"
out_features = 2
bias = false
)"));
  // Batch norm: per-channel statistics become outputs of the forward operator and are saved.
  EXPECT_EQ(g->find_tensor("bn:save_mean")->shape, (Shape{3}));
  EXPECT_EQ(op_named(*g, "bn/dReduce")->kind, OpKind::reduction);
  EXPECT_TRUE(reads(*g, *op_named(*g, "bn/dX"), "c"));  // BN saves its input
  EXPECT_EQ(g->find_tensor("grad(g)")->gradient_of, g->find_tensor("g")->id);
  // GELU and Clip save their inputs, sigmoid its output.
  EXPECT_TRUE(reads(*g, *op_named(*g, "act/d1"), "bn"));
  EXPECT_TRUE(reads(*g, *op_named(*g, "sig/d1"), "sig"));
  EXPECT_TRUE(reads(*g, *op_named(*g, "clip/d1"), "sig"));
  // Max pooling: int64 indices (an output added to the forward operator), and its input kept.
  EXPECT_EQ(g->find_tensor("mp:indices")->dtype, ElementType::int64);
  EXPECT_TRUE(reads(*g, *op_named(*g, "mp/dX"), "mp:indices"));
  EXPECT_TRUE(reads(*g, *op_named(*g, "mp/dX"), "clip"));
  EXPECT_EQ(op_named(*g, "mp/dX")->iterations(), 2 * 3 * 2 * 2);  // one add per output element
  // Global average pooling keeps its input (PyTorch saves it) and scatters dy / window.
  EXPECT_TRUE(reads(*g, *op_named(*g, "ap/dX"), "mp"));
  // Saved, fp32 (n = 96 elements per [2,3,4,4] tensor): x (conv input) 96·4, c (BN input) 96·4, BN statistics
  // 2·3·4, bn (GELU input) 96·4, sig 96·4 (sigmoid output, clip input), clip 96·4 (max-pool input),
  // indices 24·8, mp 24·4 (avg-pool input), flat 6·4 (fc input), log-probs 4·4, labels 2·8.
  EXPECT_EQ(saved_bytes(*g), 5 * 384 + 24 + 192 + 96 + 24 + 16 + 16);
}

TEST_F(Training, EmbeddingsScatterIntoTheTableAndSaveIndices) {
  const GraphPtr g = backward(*forward_from_toml(dir_, R"([[inputs]]
name = "tokens"
shape = [1, 4]
dtype = "int64"
[[tensors]]
name = "table"
shape = [10, 6]
[[layers]]
name = "emb"
op = "loopnest"
kind = "embedding"
type = "Embedding"
dims = ["B", "D", "K"]
sizes = [1, 4, 6]
ops_per_iteration = 0.0
outputs = [{ tensor = "emb", shape = [1, 4, 6], dtype = "fp32", index = ["B", "D", "K"] }]
inputs = [{ tensor = "tokens", index = ["B", "D"], slot = "I1" }, { tensor = "table", index = ["D", "K"], slot = "I2", indirect = true }]
[[layers]]
name = "fc"
op = "linear"
out_features = 10
bias = false
)"));
  const Operator* dw = op_named(*g, "emb/dW");
  EXPECT_EQ(dw->phase, Phase::backward_dw);
  EXPECT_EQ(dw->iterations(), 4 * 6);  // one add per looked-up element
  EXPECT_TRUE(reads(*g, *dw, "tokens"));
  EXPECT_TRUE(dw->operands[0].indirect);
  // Saved: tokens 4·8, emb (fc input) 24·4, log-probs [1,4,10] 40·4, labels 4·8.
  EXPECT_EQ(saved_bytes(*g), 32 + 96 + 160 + 32);
}

TEST_F(Training, MicroBatchesRepeatTheStepAndAccumulateGradients) {
  TrainingSettings s;
  s.micro_batches = 3;
  const GraphPtr g = backward(*forward_from_toml(dir_, kSmallCnn), s);
  EXPECT_EQ(macs(*g, Phase::forward), 3 * (13'824 + 5'120));
  EXPECT_EQ(macs(*g, Phase::backward_dw), 3 * (13'824 + 5'120));
  EXPECT_NE(g->find_tensor("x@3"), nullptr);  // each micro-batch reads its own data
  EXPECT_NE(g->find_tensor("labels@2"), nullptr);
  EXPECT_EQ(g->find_tensor("conv.weight@2"), nullptr);  // and the same weights
  // Two accumulations per parameter; the last one is the gradient the optimizer reads.
  std::int64_t accumulate = 0;
  for (const Operator& op : g->operators()) accumulate += op.type == "GradAccumulate";
  EXPECT_EQ(accumulate, 4 * 2);
  const Tensor* final_grad = nullptr;
  for (const Tensor& t : g->tensors()) {
    if (t.gradient_of == g->find_tensor("fc.weight")->id) final_grad = &t;
  }
  ASSERT_NE(final_grad, nullptr);
  EXPECT_EQ(g->op(final_grad->producer).type, "GradAccumulate");
  // Saved activations: three micro-batches' worth, each freed by its own backward.
  EXPECT_EQ(saved_bytes(*g), 3 * (1'536 + 2'048 + 80 + 16));
  // Each micro-batch's gradients are added into the accumulator as its backward pass ends (as PyTorch adds into
  // .grad): a third micro-batch holds no more gradients than the second, only its own inputs x@3 (2·3·8·8 fp32) and
  // labels@3 (2 int64), which live from the step's start.
  s.micro_batches = 2;
  const GraphPtr two = backward(*forward_from_toml(dir_, kSmallCnn), s);
  EXPECT_EQ(training_memory(*g).peak_bytes - training_memory(*two).peak_bytes, 1'536 + 16);
}

TEST_F(Training, LossNeedsOneOutput) {
  const GraphPtr fwd = forward_from_toml(dir_, R"([[inputs]]
name = "x"
shape = [2, 4]
[[layers]]
name = "a"
op = "linear"
out_features = 3
[[layers]]
name = "b"
op = "linear"
input = "x"
out_features = 3
)");
  try {
    backward(*fwd);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the loss needs exactly one network output (the logits); the workload 'workload' has 2: a, b"));
  }
}

TEST(Memory, SequentialLivenessWalk) {
  // x [4,4] (64 B) -> a (64 B) -> b (64 B; also reads the weight w [4], 16 B) -> c (64 B)
  GraphBuilder b("chain");
  auto tensor = [&](const std::string& n, Shape s, TensorRole r = TensorRole::activation) {
    Tensor t;
    t.name = n;
    t.shape = std::move(s);
    t.role = r;
    return b.add_tensor(std::move(t));
  };
  const TensorId x = tensor("x", {4, 4}, TensorRole::input);
  const TensorId w = tensor("w", {4}, TensorRole::weight);
  const TensorId a = tensor("a", {4, 4});
  const TensorId bb = tensor("b", {4, 4});
  const TensorId c = tensor("c", {4, 4});
  auto named = [](const char* n) {
    Operator op;
    op.name = n;
    return op;
  };
  ops::elementwise(b, named("op_a"), {x}, a, 1);
  ops::elementwise(b, named("op_b"), {a, w}, bb, 1);
  ops::elementwise(b, named("op_c"), {bb}, c, 1);
  const GraphPtr g = std::move(b).build();
  // x and w live throughout: 80. op_a: + a = 144; op_b: + b = 208, then a is freed (144); op_c: + c = 208.
  EXPECT_EQ(training_memory(*g).peak_bytes, 208);
  EXPECT_EQ(training_memory(*g).parameter_bytes, 16);
  EXPECT_EQ(training_memory(*g).saved_activation_bytes, 0);  // no backward
}

}  // namespace
}  // namespace monet
