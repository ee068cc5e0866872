// The onnx frontend beyond the first models: transposed and 1-/3-D convolutions, einsum, reductions, padding,
// resampling, random ops, recognised activations, opset 13-18 forms, open-ended slices, symbolic dimensions,
// external data and the unsupported-operator path. Small models built in the test (OnnxBuilder) or taken from
// tests/data (PyTorch exports).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/report/inspect.hpp"
#include "support/onnx_builder.hpp"
#include "support/onnx_test.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using test::OnnxBuilder;
constexpr int kInt64 = onnx::TensorProto::INT64;
constexpr std::int64_t kOpenEnd = std::numeric_limits<std::int64_t>::max();

class OnnxBreadth : public test::OnnxTest {};

TEST_F(OnnxBreadth, TransposedAndOneAndThreeDimensionalConvolutionsCountEveryTap) {
  OnnxBuilder b;
  b.input("x", {1, 4, 5, 5}).initializer("w", {4, 3, 3, 3}).initializer("bias", {6});
  auto* ct = b.node("ConvTranspose", {"x", "w", "bias"}, {"y"}, "up");
  OnnxBuilder::attr(ct, "strides", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(ct, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(ct, "output_padding", std::vector<std::int64_t>{1, 1});
  OnnxBuilder::attr(ct, "group", std::int64_t{2});
  b.output("y");
  const GraphPtr g = load(b);
  // (5 − 1)·2 − 2 + (3 − 1) + 1 + 1 = 10; every input element meets every tap: B·G·C·IY·IX·K·FY·FX
  EXPECT_EQ(g->find_tensor("y")->shape, (Shape{1, 6, 10, 10}));
  EXPECT_EQ(g->find_operator("up")->macs(), 1 * 2 * 2 * 5 * 5 * 3 * 3 * 3);
  EXPECT_EQ(g->find_operator("up")->dim_names(),
            (std::vector<std::string>{"B", "G", "K", "C", "IY", "IX", "FY", "FX"}));
  // output_shape instead of pads: the pads are derived (ONNX: the larger half at the end)
  OnnxBuilder s;
  s.input("x", {1, 2, 4}).initializer("w", {2, 3, 4});
  auto* o = s.node("ConvTranspose", {"x", "w"}, {"y"}, "up1d");
  OnnxBuilder::attr(o, "strides", std::vector<std::int64_t>{2});
  OnnxBuilder::attr(o, "output_shape", std::vector<std::int64_t>{8});
  s.output("y");
  const GraphPtr g1 = load(s);
  EXPECT_EQ(g1->find_tensor("y")->shape, (Shape{1, 3, 8}));
  EXPECT_EQ(g1->find_operator("up1d")->attributes.at("pads"), (std::vector<std::int64_t>{1, 1}));

  OnnxBuilder c;
  c.input("a", {2, 3, 100}).initializer("w1", {8, 3, 5});
  auto* c1 = c.node("Conv", {"a", "w1"}, {"a1"}, "conv1d");
  OnnxBuilder::attr(c1, "strides", std::vector<std::int64_t>{2});
  auto* mp = c.node("MaxPool", {"a1"}, {"a2"}, "pool1d");
  OnnxBuilder::attr(mp, "kernel_shape", std::vector<std::int64_t>{4});
  OnnxBuilder::attr(mp, "strides", std::vector<std::int64_t>{4});
  c.input("v", {1, 3, 8, 16, 16}).initializer("w3", {4, 3, 3, 3, 3});
  auto* c3 = c.node("Conv", {"v", "w3"}, {"v1"}, "conv3d");
  OnnxBuilder::attr(c3, "pads", std::vector<std::int64_t>{1, 1, 1, 1, 1, 1});
  OnnxBuilder::attr(c3, "strides", std::vector<std::int64_t>{1, 2, 2});
  c.node("GlobalAveragePool", {"v1"}, {"v2"}, "gap3d");
  c.output("a2").output("v2");
  const GraphPtr g2 = load(c);
  EXPECT_EQ(g2->find_tensor("a1")->shape, (Shape{2, 8, 48}));
  EXPECT_EQ(g2->find_operator("conv1d")->macs(), 2 * 8 * 3 * 48 * 5);
  EXPECT_EQ(g2->find_tensor("a2")->shape, (Shape{2, 8, 12}));
  EXPECT_EQ(g2->find_tensor("v1")->shape, (Shape{1, 4, 8, 8, 8}));
  EXPECT_EQ(g2->find_operator("conv3d")->macs(), 4 * 3 * 8 * 8 * 8 * 27);
  EXPECT_EQ(g2->find_operator("conv3d")->dim_names(),
            (std::vector<std::string>{"B", "K", "C", "OZ", "OY", "OX", "FZ", "FY", "FX"}));
  EXPECT_EQ(g2->find_tensor("v2")->shape, (Shape{1, 4, 1, 1, 1}));
}

TEST_F(OnnxBreadth, EinsumIsAMatrixProductLoopNest) {
  OnnxBuilder b;
  b.input("q", {2, 4, 16, 8}).input("k", {2, 4, 32, 8}).initializer("w", {6, 8});
  auto* e = b.node("Einsum", {"q", "k"}, {"s"}, "scores");
  OnnxBuilder::attr(e, "equation", std::string("bhqd,bhkd->bhqk"));
  auto* l = b.node("Einsum", {"q", "w"}, {"p"}, "project");
  OnnxBuilder::attr(l, "equation", std::string("...d,ed->...e"));
  auto* r = b.node("Einsum", {"q"}, {"sum"}, "rowsum");
  OnnxBuilder::attr(r, "equation", std::string("bhqd->bhq"));
  b.output("s").output("p").output("sum");
  const GraphPtr g = load(b);
  EXPECT_EQ(g->find_tensor("s")->shape, (Shape{2, 4, 16, 32}));
  const Operator* s = g->find_operator("scores");
  EXPECT_EQ(s->kind, OpKind::matmul);
  EXPECT_EQ(s->macs(), 2 * 4 * 16 * 32 * 8);
  EXPECT_EQ(s->dim_names(), (std::vector<std::string>{"B", "H", "D", "K", "C"}));
  EXPECT_EQ(g->find_tensor("p")->shape, (Shape{2, 4, 16, 6}));
  EXPECT_EQ(g->find_operator("project")->kind, OpKind::gemm);  // a stored operand
  EXPECT_EQ(g->find_operator("project")->macs(), 2 * 4 * 16 * 6 * 8);
  EXPECT_EQ(g->find_operator("rowsum")->kind, OpKind::reduction);

  OnnxBuilder bad;
  bad.input("a", {2, 3}).input("c", {4, 5});
  auto* m = bad.node("Einsum", {"a", "c"}, {"y"}, "mismatch");
  OnnxBuilder::attr(m, "equation", std::string("ij,jk->ik"));
  bad.output("y");
  EXPECT_EQ(fail(bad), path() + ": error: operator 'mismatch': einsum 'ij,jk->ik': label 'j' has sizes 3 and 4");
  OnnxBuilder three;
  three.input("a", {2, 3}).input("c", {3, 4}).input("d", {4, 5});
  auto* t = three.node("Einsum", {"a", "c", "d"}, {"y"}, "chain");
  OnnxBuilder::attr(t, "equation", std::string("ij,jk,kl->il"));
  three.output("y");
  EXPECT_THAT(fail(three), HasSubstr("node 'chain' (Einsum): einsum of 3 operands: only one or two are supported"));
}

TEST_F(OnnxBreadth, ReductionsPaddingAndResamplingAcrossOpsets) {
  for (int opset : {13, 17, 18}) {
    SCOPED_TRACE(opset);
    OnnxBuilder b(opset);
    b.input("x", {2, 4, 6, 6});
    b.constant_ints("axes", {2, 3});
    if (opset >= 18) {
      b.node("ReduceMean", {"x", "axes"}, {"m"}, "mean");  // axes as an input
    } else {
      OnnxBuilder::attr(b.node("ReduceMean", {"x"}, {"m"}, "mean"), "axes", std::vector<std::int64_t>{2, 3});
    }
    auto* sum = b.node("ReduceSum", {"x", "axes"}, {"s"}, "sum");  // input axes from opset 13
    OnnxBuilder::attr(sum, "keepdims", std::int64_t{0});
    b.constant_ints("pads", {0, 0, 1, 2, 0, 0, 3, 4});
    OnnxBuilder::attr(b.node("Pad", {"x", "pads"}, {"p"}, "pad"), "mode", std::string("reflect"));
    b.constant_floats("scales", {1, 1, 2, 2}, {4});
    auto* up = b.node("Resize", {"x", "", "scales"}, {"u"}, "up");
    OnnxBuilder::attr(up, "mode", std::string("linear"));
    b.constant_ints("sizes", {2, 4, 3, 3});
    b.node("Resize", {"x", "", "", "sizes"}, {"d"}, "down");
    b.output("m").output("s").output("p").output("u").output("d");
    const GraphPtr g = load(b);
    EXPECT_EQ(g->find_tensor("m")->shape, (Shape{2, 4, 1, 1}));
    EXPECT_EQ(g->find_operator("mean")->kind, OpKind::reduction);
    EXPECT_EQ(g->find_operator("mean")->vector_ops(), 2 * 4 * 6 * 6);
    EXPECT_EQ(g->find_tensor("s")->shape, (Shape{2, 4}));
    EXPECT_EQ(g->find_tensor("p")->shape, (Shape{2, 4, 10, 12}));
    EXPECT_EQ(g->find_operator("pad")->kind, OpKind::copy);
    EXPECT_EQ(g->find_operator("pad")->type, "ReflectionPad");
    EXPECT_EQ(g->find_tensor("u")->shape, (Shape{2, 4, 12, 12}));
    EXPECT_EQ(g->find_operator("up")->vector_ops(), 2 * 4 * 12 * 12 * 7);  // bilinear: 4 taps, 7 operations
    EXPECT_EQ(g->find_tensor("d")->shape, (Shape{2, 4, 3, 3}));
    EXPECT_EQ(g->find_operator("down")->kind, OpKind::copy);  // nearest: no arithmetic
  }
}

TEST_F(OnnxBreadth, OpenEndedSlicesAndNegativeSteps) {
  OnnxBuilder b;
  b.input("x", {2, 8, 64});
  b.constant_ints("start", {32}).constant_ints("end", {kOpenEnd}).constant_ints("axis", {-1});
  b.node("Slice", {"x", "start", "end", "axis"}, {"tail"}, "tail");  // x[..., 32:]
  b.constant_ints("rstart", {-1}).constant_ints("rend", {std::numeric_limits<std::int64_t>::min()});
  b.constant_ints("raxis", {1}).constant_ints("rstep", {-1});
  b.node("Slice", {"x", "rstart", "rend", "raxis", "rstep"}, {"flip"}, "flip");  // torch.flip(x, [1])
  b.output("tail").output("flip");
  const GraphPtr g = load(b);
  EXPECT_EQ(g->find_tensor("tail")->shape, (Shape{2, 8, 32}));
  EXPECT_TRUE(g->find_operator("tail")->is_view());
  EXPECT_EQ(g->find_tensor("flip")->shape, (Shape{2, 8, 64}));
  EXPECT_EQ(g->find_operator("flip")->type, "Flip");  // PyTorch's flip copies
  EXPECT_EQ(g->find_operator("flip")->kind, OpKind::copy);
}

TEST_F(OnnxBreadth, RandomOpsReadOnlyAShapeAndConstantsFold) {
  OnnxBuilder b;
  b.input("x", {4, 3, 8, 8});
  b.node("RandomUniformLike", {"x"}, {"u"}, "noise");
  b.constant("p", 0.8f);
  b.node("Less", {"u", "p"}, {"keep"}, "keep");
  b.constant_ints("ten", {10}, true).constant_ints("three", {3}, true);
  b.node("Mod", {"ten", "three"}, {"one"}, "mod");
  b.constant_floats("angles", {0.0f, 1.5707964f}, {2});
  b.node("Cos", {"angles"}, {"cos"}, "cos");
  b.output("keep");
  const GraphPtr g = load(b);
  const Operator* noise = g->find_operator("noise");
  EXPECT_EQ(noise->kind, OpKind::elementwise);
  EXPECT_EQ(noise->operands.size(), 1u);  // the output only: x's data is not read
  EXPECT_EQ(g->find_tensor("keep")->dtype, ElementType::boolean);
  EXPECT_EQ(g->find_operator("mod"), nullptr);  // folded at import
  EXPECT_EQ(g->find_operator("cos"), nullptr);
}

TEST_F(OnnxBreadth, DecomposedActivationsAndNormsAreOneOperator) {
  const auto types = [&](const char* module) {
    std::vector<std::string> t;
    const GraphPtr g = load_file(test::source_dir() / "tests/data/pytorch_ops" / module);
    for (const Operator& op : g->operators()) {
      if (!op.is_view()) t.push_back(op.type);
    }
    return t;
  };
  // Each module is x + p, then the function (scripts/reference/pytorch_ops.py).
  EXPECT_EQ(types("silu.onnx"), (std::vector<std::string>{"Add", "Silu"}));
  EXPECT_EQ(types("gelu.onnx"), (std::vector<std::string>{"Add", "Gelu"}));
  EXPECT_EQ(types("gelu_tanh.onnx"), (std::vector<std::string>{"Add", "Gelu"}));
  EXPECT_EQ(types("mish.onnx"), (std::vector<std::string>{"Add", "Mish"}));
  EXPECT_EQ(types("hardswish_opset13.onnx"), (std::vector<std::string>{"Add", "HardSwish"}));
  EXPECT_EQ(types("rsqrt.onnx"), (std::vector<std::string>{"Add", "Abs", "Add", "Rsqrt"}));
  EXPECT_EQ(types("group_norm.onnx"), (std::vector<std::string>{"Add", "GroupNormalization"}));
  EXPECT_EQ(types("layer_norm_opset13.onnx"), (std::vector<std::string>{"Add", "LayerNormalization"}));
  EXPECT_EQ(types("dropout_p0.onnx"), (std::vector<std::string>{"Add", "Mul"}));  // ratio 0: a view
  // nn.MultiheadAttention (batch_first): the transposed input is copied for the packed projection (torch.matmul's
  // fold), q, k, v are copied out of it (contiguous().view()), and so is the attention output.
  const auto mha = types("multihead_attention.onnx");
  EXPECT_EQ(std::count(mha.begin(), mha.end(), "MatMulFoldCopy"), 1);
  EXPECT_EQ(std::count(mha.begin(), mha.end(), "ReshapeCopy"), 4);
}

TEST_F(OnnxBreadth, SymbolicDimensionsAreBoundByName) {
  const auto file = test::source_dir() / "tests/data/bert_style_dynamic.onnx";  // tokens [batch, sequence]
  EXPECT_EQ(fail_file(file), file.string() + ": error: axis 0 of graph input 'tokens' is the symbolic dimension "
                                                 "'batch'; bind it with [workload] dims.batch = N (--set "
                                                 "workload.dims.batch=N)");
  auto bind = [](std::int64_t batch, std::int64_t seq) {
    return [=](ParamValues& p) { p.set("dims", IntegerTable{{"batch", batch}, {"sequence", seq}}); };
  };
  const GraphPtr fixed = load_file(test::source_dir() / "workloads/onnx/bert_style.onnx");  // 1 x 128
  const GraphPtr bound = load_file(file, bind(1, 128));
  EXPECT_EQ(workload_totals(*bound).params_trainable, workload_totals(*fixed).params_trainable);
  EXPECT_EQ(bound->total_macs(), fixed->total_macs());
  // Batch 2, 256 tokens: linear layers 4x, attention 8x (4 layers x 2 matmuls x 4 heads x T² x 64).
  const std::int64_t attention = 4 * 2 * 4 * 128 * 128 * 64;
  EXPECT_EQ(load_file(file, bind(2, 256))->total_macs(), 4 * (fixed->total_macs() - attention) + 8 * attention);
  EXPECT_THAT(fail_file(file, [](ParamValues& p) { p.set("dims", IntegerTable{{"batch", 1}, {"seq", 12}}); }),
              HasSubstr("dims: 'seq' is not a symbolic dimension of " + file.string() +
                        " (it has 'batch', 'sequence') (did you mean 'sequence'?)"));
}

TEST_F(OnnxBreadth, ExternalDataIsNotNeeded) {
  OnnxBuilder b;
  b.input("x", {2, 16}).external_initializer("w", {32, 16}, "weights.bin");  // weights.bin does not exist
  auto* g = b.node("Gemm", {"x", "w"}, {"y"}, "fc");
  OnnxBuilder::attr(g, "transB", std::int64_t{1});
  b.output("y");
  const GraphPtr graph = load(b);
  EXPECT_EQ(workload_totals(*graph).params_trainable, 32 * 16);
  EXPECT_EQ(graph->total_macs(), 2 * 32 * 16);
}

TEST_F(OnnxBreadth, UnsupportedOperatorsNameTheNodeAndTheReason) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("NonZero", {"r"}, {"nz"}, "where_nonzero");
  b.output("nz");
  EXPECT_EQ(fail(b), path() + ": error: node 'where_nonzero' (NonZero): unsupported ONNX operator: its output size "
                              "depends on the data; monet needs static shapes. Set [workload] unknown_ops = "
                              "\"passthrough\" to treat it as a zero-cost view");
  const GraphPtr g = load(b, [](ParamValues& p) { p.set("unknown_ops", std::string("passthrough")); });
  EXPECT_EQ(workload_totals(*g).passthrough, std::vector<std::string>{"where_nonzero (NonZero)"});
  EXPECT_THAT(inspect_text(*g), HasSubstr("passthrough       1 operators not modelled (zero-cost views): "
                                          "where_nonzero (NonZero)"));
}

TEST_F(OnnxBreadth, MalformedNodesAreErrorsNamingTheNode) {
  OnnxBuilder a;
  a.input("x", {1, 2, 4, 4});
  a.node("ConvTranspose", {"x"}, {"y"}, "no_weight");
  a.output("y");
  EXPECT_EQ(fail(a), path() + ": error: node 'no_weight' (ConvTranspose): malformed node: an input, attribute or "
                              "index it needs is missing or out of range");
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.constant_ints("s", {0}).constant_ints("e", {1}).constant_ints("axis", {7});
  b.node("Slice", {"x", "s", "e", "axis"}, {"y"}, "slice");
  b.output("y");
  EXPECT_EQ(fail(b), path() + ": error: node 'slice' (Slice): axis 7 is out of range for rank 2");
  OnnxBuilder c;
  c.input("x", {2, 3});
  c.constant_ints("pads", {1, 2, 3});
  c.node("Pad", {"x", "pads"}, {"y"}, "pad");
  c.output("y");
  EXPECT_EQ(fail(c), path() + ": error: node 'pad' (Pad): expected 4 pads, got 3");
}

TEST_F(OnnxBreadth, SwinTransformerLoads) {
  // 7,204 nodes (2,952 constants, 495 Shape, 865 Unsqueeze ...). Its speed (target: inspect under a second) is
  // measured by BM_InspectSwinT in bench/bench_frontends.cpp, not here.
  const GraphPtr g = load_file(test::source_dir() / "workloads/onnx/swin_t.onnx");
  EXPECT_FALSE(inspect_text(*g).empty());
  EXPECT_EQ(workload_totals(*g).params_trainable, 28'288'354);
}

}  // namespace
}  // namespace monet
