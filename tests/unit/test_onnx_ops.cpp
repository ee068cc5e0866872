// The onnx frontend op by op, on small models built in the test: shapes, loop nests, MACs, folding,
// pattern recognition, parameter classification, and the error / passthrough paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

class OnnxOps : public test::OnnxTest {};

TEST_F(OnnxOps, ConvolutionsWithGroupsStridesDilationAndAutoPad) {
  OnnxBuilder b;
  b.input("x", {1, 4, 9, 9}).initializer("w", {6, 2, 3, 3}).initializer("bias", {6}).initializer("w2", {6, 6, 3, 3});
  auto* c = b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  OnnxBuilder::attr(c, "group", std::int64_t{2});
  OnnxBuilder::attr(c, "strides", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(c, "dilations", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(c, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  auto* s = b.node("Conv", {"y", "w2"}, {"z"}, "same");
  OnnxBuilder::attr(s, "strides", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(s, "auto_pad", std::string("SAME_UPPER"));
  b.output("z");
  const GraphPtr g = load(b);
  // (9 + 2 − (2·(3−1) + 1)) / 2 + 1 = 4; MACs G·K·C·OY·OX·FY·FX = 2·3·2·4·4·3·3
  EXPECT_EQ(g->find_tensor("y")->shape, (Shape{1, 6, 4, 4}));
  EXPECT_EQ(g->find_operator("conv")->macs(), 1'728);
  // SAME_UPPER, stride 2: ceil(4 / 2) = 2 outputs per axis; pads (0 before, 1 after) -> total 1
  EXPECT_EQ(g->find_tensor("z")->shape, (Shape{1, 6, 2, 2}));
  EXPECT_EQ(g->find_operator("same")->attributes.at("pads"), (std::vector<std::int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(workload_totals(*g).params_trainable, 6 * 2 * 9 + 6 + 6 * 6 * 9);
}

TEST_F(OnnxOps, GemmMatMulNormsAndPointwise) {
  OnnxBuilder b;
  b.input("a", {4, 8}).initializer("B", {16, 8}).initializer("C", {16});
  auto* gemm = b.node("Gemm", {"a", "B", "C"}, {"g"}, "gemm");
  OnnxBuilder::attr(gemm, "transB", std::int64_t{1});
  b.input("p", {2, 3, 4, 5}).input("q", {5, 6});
  b.node("MatMul", {"p", "q"}, {"pq"}, "bmm");
  b.initializer("ln_w", {6}).initializer("ln_b", {6});
  auto* ln = b.node("LayerNormalization", {"pq", "ln_w", "ln_b"}, {"ln"}, "ln");
  OnnxBuilder::attr(ln, "axis", std::int64_t{-1});
  b.input("img", {1, 6, 4, 4}).initializer("s", {6}).initializer("o", {6}).initializer("m", {6}).initializer("v", {6});
  b.node("BatchNormalization", {"img", "s", "o", "m", "v"}, {"bn"}, "bn");  // inference form: one output
  b.constant("lo", 0.f).constant("hi", 6.f).constant("two", 2.f);
  b.node("Clip", {"bn", "lo", "hi"}, {"clip"}, "clip");
  b.node("Sigmoid", {"clip"}, {"sig"}, "sig");
  b.node("Tanh", {"sig"}, {"tanh"}, "tanh");
  b.node("Pow", {"tanh", "two"}, {"pow"}, "pow");
  b.node("Sqrt", {"pow"}, {"sqrt"}, "sqrt");
  b.initializer("shift", {6, 1, 1});
  b.node("Add", {"sqrt", "shift"}, {"add"}, "add");  // broadcast add of a learned tensor
  b.node("Sub", {"add", "sqrt"}, {"sub"}, "sub");
  b.node("Div", {"sub", "two"}, {"div"}, "div");
  b.node("Relu", {"div"}, {"relu"}, "relu");
  auto* sm = b.node("Softmax", {"relu"}, {"sm"}, "softmax");
  OnnxBuilder::attr(sm, "axis", std::int64_t{1});
  b.output("g").output("ln").output("sm");
  const GraphPtr g = load(b);
  EXPECT_EQ(g->find_operator("gemm")->macs(), 4 * 16 * 8);
  EXPECT_EQ(g->find_operator("gemm")->kind, OpKind::gemm);
  EXPECT_EQ(g->find_tensor("pq")->shape, (Shape{2, 3, 4, 6}));
  EXPECT_EQ(g->find_operator("bmm")->kind, OpKind::matmul);  // two activations
  EXPECT_EQ(g->find_operator("bmm")->macs(), 2 * 3 * 4 * 6 * 5);
  EXPECT_EQ(g->find_operator("ln")->kind, OpKind::norm);
  EXPECT_DOUBLE_EQ(g->find_operator("bn")->ops_per_iteration, 2);  // inference: folded affine map
  EXPECT_EQ(g->find_operator("bn")->attributes.at("training_mode"), std::vector<std::int64_t>{0});
  for (const char* name : {"clip", "sig", "tanh", "pow", "sqrt", "add", "sub", "div", "relu"}) {
    EXPECT_EQ(g->find_operator(name)->kind, OpKind::elementwise) << name;
  }
  EXPECT_EQ(g->find_operator("clip")->operands.size(), 2u);  // bounds are part of the operation
  EXPECT_EQ(g->find_operator("div")->operands.size(), 2u);   // so is a scalar divisor
  EXPECT_EQ(g->find_operator("add")->operands[2].access[1].str(g->find_operator("add")->dim_names()), "0");
  EXPECT_EQ(g->find_operator("softmax")->attributes.at("axis"), std::vector<std::int64_t>{1});
  // BN running statistics are buffers; the learned shift is a parameter.
  EXPECT_EQ(g->find_tensor("m")->role, TensorRole::buffer);
  EXPECT_EQ(g->find_tensor("shift")->role, TensorRole::weight);
  EXPECT_EQ(workload_totals(*g).params_trainable, 16 * 8 + 16 + 6 + 6 + 6 + 6 + 6);
}

TEST_F(OnnxOps, PoolingAndDataMovement) {
  OnnxBuilder b;
  b.input("x", {2, 6, 8, 8});
  auto* mp = b.node("MaxPool", {"x"}, {"mp"}, "maxpool");
  OnnxBuilder::attr(mp, "kernel_shape", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(mp, "strides", std::vector<std::int64_t>{2, 2});
  auto* ap = b.node("AveragePool", {"mp"}, {"ap"}, "avgpool");
  OnnxBuilder::attr(ap, "kernel_shape", std::vector<std::int64_t>{3, 3});
  OnnxBuilder::attr(ap, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  b.ints("split_sizes", {2, 4});
  auto* sp = b.node("Split", {"ap", "split_sizes"}, {"s0", "s1"}, "split");
  OnnxBuilder::attr(sp, "axis", std::int64_t{1});
  auto* cat = b.node("Concat", {"s1", "s0"}, {"cat"}, "concat");
  OnnxBuilder::attr(cat, "axis", std::int64_t{1});
  auto* tr = b.node("Transpose", {"cat"}, {"tr"}, "transpose");
  OnnxBuilder::attr(tr, "perm", std::vector<std::int64_t>{0, 2, 3, 1});
  b.constant_ints("starts", {1}).constant_ints("ends", {3}).constant_ints("axes", {1});
  b.node("Slice", {"tr", "starts", "ends", "axes"}, {"sl"}, "slice");
  b.node("GlobalAveragePool", {"ap"}, {"gap"}, "gap");
  b.constant_ints("sq_axes", {2, 3});
  b.node("Squeeze", {"gap", "sq_axes"}, {"sq"}, "squeeze");
  b.constant_ints("unsq_axes", {0});
  b.node("Unsqueeze", {"sq", "unsq_axes"}, {"unsq"}, "unsqueeze");
  b.node("Identity", {"unsq"}, {"id"}, "identity");
  b.node("Dropout", {"id"}, {"drop"}, "dropout");
  auto* cast = b.node("Cast", {"drop"}, {"half"}, "cast");
  OnnxBuilder::attr(cast, "to", std::int64_t{onnx::TensorProto::FLOAT16});
  b.node("Flatten", {"sl"}, {"flat"}, "flatten");
  b.output("flat").output("half");
  const GraphPtr g = load(b);
  EXPECT_EQ(g->find_tensor("mp")->shape, (Shape{2, 6, 4, 4}));
  EXPECT_EQ(g->find_tensor("ap")->shape, (Shape{2, 6, 4, 4}));
  EXPECT_EQ(g->find_operator("avgpool")->iterations(), 2 * 6 * 4 * 4 * 9);
  EXPECT_EQ(g->find_tensor("s0")->shape, (Shape{2, 2, 4, 4}));
  EXPECT_EQ(g->find_tensor("s1")->shape, (Shape{2, 4, 4, 4}));
  EXPECT_EQ(g->find_tensor("cat")->shape, (Shape{2, 6, 4, 4}));
  EXPECT_EQ(g->find_tensor("tr")->shape, (Shape{2, 4, 4, 6}));
  EXPECT_EQ(g->find_tensor("sl")->shape, (Shape{2, 2, 4, 6}));
  EXPECT_EQ(g->find_tensor("gap")->shape, (Shape{2, 6, 1, 1}));
  EXPECT_EQ(g->find_tensor("unsq")->shape, (Shape{1, 2, 6}));
  EXPECT_EQ(g->find_tensor("half")->dtype, ElementType::fp16);
  EXPECT_EQ(g->find_tensor("flat")->shape, (Shape{2, 48}));
  for (const char* v : {"split:0", "split:1", "concat", "transpose", "slice", "squeeze", "unsqueeze", "identity"}) {
    ASSERT_NE(g->find_operator(v), nullptr) << v;
    EXPECT_TRUE(g->find_operator(v)->is_view()) << v;
    EXPECT_EQ(g->find_operator(v)->macs(), 0) << v;
  }
  EXPECT_EQ(g->find_operator("concat")->operands.size(), 3u);  // output + both inputs
  // Flattening a slice of a transpose cannot alias it: a copy, as PyTorch's reshape makes.
  EXPECT_EQ(g->find_operator("flatten")->kind, OpKind::copy);
  EXPECT_EQ(g->find_operator("flatten")->type, "ReshapeCopy");
  EXPECT_EQ(g->find_operator("dropout")->kind, OpKind::elementwise);
  EXPECT_EQ(g->find_operator("cast")->kind, OpKind::elementwise);
}

TEST_F(OnnxOps, ShapeSubgraphsFoldToConstants) {
  OnnxBuilder b;
  b.input("x", {3, 4, 5});
  b.node("Shape", {"x"}, {"shape"}, "shape");
  b.constant_ints("zero", {0}, true);
  auto* gather = b.node("Gather", {"shape", "zero"}, {"n"}, "n");
  OnnxBuilder::attr(gather, "axis", std::int64_t{0});
  b.constant_ints("ax", {0});
  b.node("Unsqueeze", {"n", "ax"}, {"n1"}, "unsq");
  b.constant_ints("rest", {-1});
  auto* cat = b.node("Concat", {"n1", "rest"}, {"target"}, "cat");
  OnnxBuilder::attr(cat, "axis", std::int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  const GraphPtr g = load(b);
  EXPECT_EQ(g->find_tensor("y")->shape, (Shape{3, 20}));
  EXPECT_EQ(g->operators().size(), 1u);  // only the reshape: the shape computation folded away
}

TEST_F(OnnxOps, SemanticPatterns) {
  OnnxBuilder b;
  b.input("tokens", {2, 5}, kInt64).initializer("table", {100, 16});
  b.node("Gather", {"table", "tokens"}, {"emb"}, "embed");
  b.initializer("W", {16, 16}).initializer("bias", {16});
  auto* t = b.node("Transpose", {"W"}, {"Wt"}, "fc/Transpose");
  OnnxBuilder::attr(t, "perm", std::vector<std::int64_t>{1, 0});
  b.node("MatMul", {"emb", "Wt"}, {"mm"}, "fc/MatMul");
  b.node("Add", {"bias", "mm"}, {"fc"}, "fc/Add");
  b.constant("sqrt2", 1.4142135f).constant("one", 1.f).constant("half", 0.5f);
  b.node("Div", {"fc", "sqrt2"}, {"d"}, "Div");
  b.node("Erf", {"d"}, {"e"}, "Erf");
  b.node("Add", {"e", "one"}, {"e1"}, "Add_1");
  b.node("Mul", {"fc", "e1"}, {"m1"}, "Mul_1");
  b.node("Mul", {"m1", "half"}, {"gelu"}, "Mul_2");
  auto* kt = b.node("Transpose", {"gelu"}, {"gelu_t"}, "k_t");
  OnnxBuilder::attr(kt, "perm", std::vector<std::int64_t>{0, 2, 1});
  b.node("MatMul", {"gelu", "gelu_t"}, {"scores"}, "scores");
  // causal mask: Trilu of a data-less constant, compared with 0, selects -inf
  b.constant_shape_only("ones", {5, 5}).constant("zero_f", 0.f).constant("neg_inf", -INFINITY);
  auto* tri = b.node("Trilu", {"ones"}, {"tri"}, "Trilu");
  OnnxBuilder::attr(tri, "upper", std::int64_t{0});
  b.node("Equal", {"tri", "zero_f"}, {"eq"}, "Equal");
  b.node("Where", {"eq", "neg_inf", "scores"}, {"masked"}, "Where");
  b.node("Softmax", {"masked"}, {"probs"}, "Softmax");
  b.output("probs");
  const GraphPtr g = load(b);
  const Operator* embed = g->find_operator("embed");
  EXPECT_EQ(embed->kind, OpKind::embedding);
  EXPECT_EQ(g->find_tensor("emb")->shape, (Shape{2, 5, 16}));
  EXPECT_TRUE(embed->operands.back().indirect);  // the table rows depend on the token ids
  const Operator* fc = g->find_operator("fc/MatMul");
  EXPECT_EQ(fc->kind, OpKind::gemm);
  EXPECT_EQ(fc->source_nodes, (std::vector<std::string>{"fc/Transpose", "fc/MatMul", "fc/Add"}));
  EXPECT_EQ(fc->operands.size(), 4u);  // y, x, W (transposed), bias
  EXPECT_EQ(g->find_operator("fc/Add"), nullptr);
  const Operator* gelu = g->find_operator("Erf");
  EXPECT_EQ(gelu->type, "Gelu");
  EXPECT_EQ(gelu->operands.size(), 2u);
  EXPECT_EQ(g->tensor(gelu->operands[1].tensor).name, "fc");
  const Operator* sm = g->find_operator("Softmax");
  EXPECT_EQ(sm->attributes.at("mask"), std::vector<std::int64_t>{1});
  EXPECT_EQ(g->tensor(sm->operands[1].tensor).name, "scores");
  EXPECT_EQ(g->tensor(sm->operands[2].tensor).role, TensorRole::activation);  // computed in forward
  EXPECT_EQ(g->find_operator("Where"), nullptr);
  // Every parameter once: table, W, bias.
  EXPECT_EQ(workload_totals(*g).params_trainable, 100 * 16 + 16 * 16 + 16);
}

TEST_F(OnnxOps, TrainableAndFrozenOverrides) {
  OnnxBuilder b;
  b.input("img", {1, 2, 4, 4}).initializer("s", {2}).initializer("o", {2}).initializer("m", {2}).initializer("v", {2});
  b.node("BatchNormalization", {"img", "s", "o", "m", "v"}, {"bn"}, "bn");
  b.output("bn");
  const GraphPtr g = load(b, [](ParamValues& p) {
    p.set("trainable", std::vector<std::string>{"m"});
    p.set("frozen", std::vector<std::string>{"s"});
  });
  EXPECT_EQ(g->find_tensor("m")->role, TensorRole::weight);
  EXPECT_TRUE(g->find_tensor("s")->frozen);
  EXPECT_EQ(workload_totals(*g).params_trainable, 4);  // o, m
  EXPECT_EQ(workload_totals(*g).params_frozen, 2);
  EXPECT_EQ(fail(b, [](ParamValues& p) { p.set("frozen", std::vector<std::string>{"layer9.*"}); }),
            "error: frozen: 'layer9.*' matches no stored tensor of " + path());
}

TEST_F(OnnxOps, UnknownOperatorsErrorOrPassThrough) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("HardMax", {"r"}, {"h"}, "mystery");
  b.node("Relu", {"h"}, {"y"}, "relu2");
  b.output("y");
  const std::string msg = fail(b);
  EXPECT_EQ(msg, path() + ": error: node 'mystery' (HardMax): unknown ONNX operator; docs/workloads.md lists the "
                           "supported ones. Set [workload] unknown_ops = \"passthrough\" "
                           "to treat it as a zero-cost view");
  const GraphPtr g = load(b, [](ParamValues& p) { p.set("unknown_ops", std::string("passthrough")); });
  EXPECT_TRUE(g->find_operator("mystery")->is_view());
  EXPECT_EQ(g->find_operator("mystery")->attributes.at("passthrough"), std::vector<std::int64_t>{1});
  EXPECT_EQ(g->find_tensor("y")->shape, (Shape{1, 8}));
}

TEST_F(OnnxOps, BadFilesAndMissingData) {
  std::ofstream(dir_.path() / "m.onnx") << "this is not a protobuf";
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::frontend, "onnx");
  auto frontend = r.create<WorkloadFrontend>(*h, default_params(h->info.params, "test"));
  try {
    frontend->load(dir_.path() / "m.onnx");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("error: not an ONNX model"));
  }
  OnnxBuilder b;
  b.input("x", {2, 6});
  b.initializer("target", {2}, kInt64);  // a shape input whose data was stripped
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  EXPECT_EQ(fail(b), path() + ": error: node 'reshape' (Reshape): needs the values of its shape input 'target', "
                              "which are not stored in the file or not computable from constants");
}

}  // namespace
}  // namespace monet
