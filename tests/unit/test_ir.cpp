// Loop nests of the standard operators: dims, MACs, access relations, regions, and graph invariants.
// Expected MAC counts are worked out in the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/ir/ops.hpp"
#include "support/graph_builders.hpp"

namespace monet {
namespace {

using test::named;
using test::tensor;

using ::testing::HasSubstr;

TEST(Ops, Conv3x3SameKeepsShapeAndCountsMacs) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {1, 64, 56, 56}, TensorRole::input);
  const TensorId w = tensor(b, "w", {64, 64, 3, 3}, TensorRole::weight);
  ops::Conv2dSpec s;
  s.kernel = {3, 3};
  s.pads = {1, 1, 1, 1};
  const Shape out = ops::conv2d_output_shape({1, 64, 56, 56}, 64, s, {}, "conv");
  EXPECT_EQ(out, (Shape{1, 64, 56, 56}));
  const TensorId y = tensor(b, "y", out);
  const OperatorId id = ops::conv2d(b, named("conv"), x, w, std::nullopt, y, s);
  const GraphPtr g = std::move(b).build();
  const Operator& op = g->op(id);
  EXPECT_EQ(op.dim_names(), (std::vector<std::string>{"B", "K", "C", "OY", "OX", "FY", "FX"}));
  // K·C·OY·OX·FY·FX = 64·64·56·56·3·3
  EXPECT_EQ(op.macs(), 115'605'504);
  EXPECT_EQ(op.reduction_dims(), (std::vector<int>{2, 5, 6}));  // C, FY, FX
  EXPECT_EQ(op.operands[1].access[2].str(op.dim_names()), "OY + FY - 1");
}

TEST(Ops, StridedConvInputRegionIncludesTheHaloAndClipsPadding) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {1, 3, 224, 224}, TensorRole::input);
  const TensorId w = tensor(b, "w", {64, 3, 7, 7}, TensorRole::weight);
  ops::Conv2dSpec s;
  s.kernel = {7, 7};
  s.stride = {2, 2};
  s.pads = {3, 3, 3, 3};
  const Shape out = ops::conv2d_output_shape({1, 3, 224, 224}, 64, s, {}, "stem");
  EXPECT_EQ(out, (Shape{1, 64, 112, 112}));
  const OperatorId id = ops::conv2d(b, named("stem"), x, w, std::nullopt, tensor(b, "y", out), s);
  const GraphPtr g = std::move(b).build();
  const Operator& op = g->op(id);
  EXPECT_EQ(op.macs(), 118'013'952);  // 64·3·112·112·7·7 (ResNet-18 stem)
  EXPECT_EQ(op.operands[1].access[2].str(op.dim_names()), "2*OY + FY - 3");
  // Rows 0..7 of the output read iy = 2·oy + fy − 3 ∈ [−3, 17] → clipped to [0, 18).
  auto tile = op.full_ranges();
  tile[static_cast<std::size_t>(op.dim_index("OY"))] = Range{0, 8};
  const auto region = op.operand_region(1, tile, g->tensor(x));
  EXPECT_EQ(region[2], (Range{0, 18}));
  EXPECT_EQ(region[3], (Range{0, 224}));
  // The last rows 104..111 read [205, 229) → clipped to [205, 224).
  tile[static_cast<std::size_t>(op.dim_index("OY"))] = Range{104, 112};
  EXPECT_EQ(op.operand_region(1, tile, g->tensor(x))[2], (Range{205, 224}));
}

TEST(Ops, DepthwiseConvHasGroupsAndNoChannelReduction) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {1, 32, 16, 16}, TensorRole::input);
  const TensorId w = tensor(b, "w", {32, 1, 3, 3}, TensorRole::weight);
  ops::Conv2dSpec s;
  s.kernel = {3, 3};
  s.pads = {1, 1, 1, 1};
  s.groups = 32;
  const Shape out = ops::conv2d_output_shape({1, 32, 16, 16}, 32, s, {}, "dw");
  const OperatorId id = ops::conv2d(b, named("dw"), x, w, std::nullopt, tensor(b, "y", out), s);
  const GraphPtr g = std::move(b).build();
  const Operator& op = g->op(id);
  EXPECT_EQ(op.dim_names(), (std::vector<std::string>{"B", "G", "K", "C", "OY", "OX", "FY", "FX"}));
  EXPECT_EQ(op.macs(), 73'728);  // G·OY·OX·FY·FX = 32·16·16·9
  EXPECT_EQ(op.operands[0].access[1].str(op.dim_names()), "G + K");  // channel = 1·G + K (K per group = 1)
}

TEST(Ops, ConvRejectsBadGroupsAndWindows) {
  ops::Conv2dSpec s;
  s.kernel = {3, 3};
  s.groups = 3;
  EXPECT_THROW(ops::conv2d_output_shape({1, 8, 8, 8}, 16, s, {}, "c"), UserError);
  s.groups = 1;
  s.kernel = {9, 9};
  try {
    ops::conv2d_output_shape({1, 8, 8, 8}, 16, s, SourceLocation{"w.toml", 4, 1}, "c");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("w.toml:4:1: error: operator 'c': the 9x9 window does not fit the input"));
  }
}

TEST(Ops, LinearLayerIsAGemmWithTransposedWeight) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {4, 512}, TensorRole::input);
  const TensorId w = tensor(b, "w", {10, 512}, TensorRole::weight);
  const TensorId bias = tensor(b, "b", {10}, TensorRole::weight);
  ops::MatmulSpec s;
  s.transpose_b = true;
  const Shape out = ops::matmul_output_shape({4, 512}, {10, 512}, s, {}, "fc");
  EXPECT_EQ(out, (Shape{4, 10}));
  Operator base = named("fc");
  base.kind = OpKind::gemm;
  const OperatorId id = ops::matmul(b, base, x, w, bias, tensor(b, "y", out), s);
  const GraphPtr g = std::move(b).build();
  const Operator& op = g->op(id);
  EXPECT_EQ(op.dim_names(), (std::vector<std::string>{"D", "K", "C"}));
  EXPECT_EQ(op.macs(), 20'480);  // 4·10·512
  EXPECT_EQ(g->parameter_count(), 5'130);
}

TEST(Ops, BatchedAttentionMatmulBroadcastsAndCounts) {
  GraphBuilder b("g");
  const TensorId q = tensor(b, "q", {1, 12, 256, 64}, TensorRole::input);
  const TensorId k = tensor(b, "k", {1, 12, 256, 64}, TensorRole::input);
  ops::MatmulSpec s;
  s.transpose_b = true;  // Q · Kᵀ
  const Shape out = ops::matmul_output_shape({1, 12, 256, 64}, {1, 12, 256, 64}, s, {}, "scores");
  EXPECT_EQ(out, (Shape{1, 12, 256, 256}));
  Operator base = named("scores");
  base.kind = OpKind::matmul;
  const OperatorId id = ops::matmul(b, base, q, k, std::nullopt, tensor(b, "s", out), s);
  const GraphPtr g = std::move(b).build();
  EXPECT_EQ(g->op(id).dim_names(), (std::vector<std::string>{"B", "H", "D", "K", "C"}));
  EXPECT_EQ(g->op(id).macs(), 50'331'648);  // 12·256·256·64
  EXPECT_THROW(ops::matmul_output_shape({2, 3}, {4, 5}, {}, {}, "bad"), UserError);
}

TEST(Ops, ElementwiseBroadcastsWithConstantIndices) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {1, 8, 4, 4}, TensorRole::input);
  const TensorId s = tensor(b, "scale", {8, 1, 1}, TensorRole::weight);
  Operator base = named("mul");
  base.type = "Mul";
  const OperatorId id = ops::elementwise(b, base, {x, s}, tensor(b, "y", {1, 8, 4, 4}), 1.0);
  const GraphPtr g = std::move(b).build();
  const Operator& op = g->op(id);
  EXPECT_EQ(op.kind, OpKind::elementwise);
  EXPECT_EQ(op.macs(), 0);
  EXPECT_DOUBLE_EQ(op.vector_ops(), 128.0);
  const auto names = op.dim_names();
  EXPECT_EQ(op.operands[2].access[0].str(names), "K");
  EXPECT_EQ(op.operands[2].access[1].str(names), "0");
  EXPECT_EQ(ops::broadcast_shapes({{3, 1}, {1, 4}}, {}, "b"), (Shape{3, 4}));
  EXPECT_THROW(ops::broadcast_shapes({{3}, {4}}, {}, "b"), UserError);
}

TEST(Ops, PoolingWindowAndViews) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {1, 64, 112, 112}, TensorRole::input);
  ops::Pool2dSpec s;
  s.kernel = {3, 3};
  s.stride = {2, 2};
  s.pads = {1, 1, 1, 1};
  const Shape out = ops::pool2d_output_shape({1, 64, 112, 112}, s, {}, "pool");
  EXPECT_EQ(out, (Shape{1, 64, 56, 56}));
  Operator p = named("pool");
  p.type = "MaxPool";
  const OperatorId pid = ops::pool2d(b, p, x, tensor(b, "p", out), s);
  const TensorId flat = tensor(b, "flat", {1, 64 * 56 * 56});
  const OperatorId vid = ops::view(b, named("flatten"), b.find_tensor("p"), flat);
  const GraphPtr g = std::move(b).build();
  EXPECT_EQ(g->op(pid).kind, OpKind::pooling);
  EXPECT_EQ(g->op(pid).iterations(), 64 * 56 * 56 * 9);
  EXPECT_TRUE(g->op(vid).is_view());
  EXPECT_DOUBLE_EQ(g->op(vid).vector_ops(), 0.0);
  EXPECT_EQ(g->outputs(), std::vector<TensorId>{flat});
}

TEST(Graph, BuilderRejectsInconsistentGraphs) {
  {
    GraphBuilder b("g");
    tensor(b, "x", {4});
    EXPECT_THROW(tensor(b, "x", {4}), UserError);  // duplicate name
    EXPECT_THROW(tensor(b, "z", {0}), UserError);  // empty dimension
  }
  {
    // An operator that reads a tensor produced only later.
    GraphBuilder b("g");
    const TensorId x = tensor(b, "x", {4}, TensorRole::input);
    const TensorId y = tensor(b, "y", {4});
    const TensorId z = tensor(b, "z", {4});
    ops::elementwise(b, named("first"), {y}, z, 1.0);
    ops::elementwise(b, named("second"), {x}, y, 1.0);
    try {
      (void)std::move(b).build();
      FAIL();
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("operator 'first': reads 'y' before it is produced"));
    }
  }
  {
    // Writing a parameter is not allowed in a forward graph.
    GraphBuilder b("g");
    const TensorId x = tensor(b, "x", {4}, TensorRole::input);
    const TensorId w = tensor(b, "w", {4}, TensorRole::weight);
    ops::elementwise(b, named("overwrite"), {x}, w, 1.0);
    EXPECT_THROW((void)std::move(b).build(), UserError);
  }
  {
    // An output access that does not cover its tensor.
    GraphBuilder b("g");
    const TensorId x = tensor(b, "x", {4}, TensorRole::input);
    const TensorId y = tensor(b, "y", {8});
    Operator op = named("half");
    op.dims = {LoopDim{"K", 4}};
    op.operands.push_back(Operand{y, OperandSlot::O, {AffineExpr::of_dim(0)}, 32, 0});
    op.operands.push_back(Operand{x, OperandSlot::I1, {AffineExpr::of_dim(0)}, 32, 0});
    try {
      b.add_operator(op);
      FAIL();
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("an output must be covered exactly"));
    }
  }
}

TEST(Graph, ProducersConsumersAndTotals) {
  GraphBuilder b("g");
  const TensorId x = tensor(b, "x", {2, 3}, TensorRole::input);
  const TensorId y = tensor(b, "y", {2, 3});
  const TensorId z = tensor(b, "z", {2, 3});
  ops::elementwise(b, named("a"), {x}, y, 1.0);
  ops::elementwise(b, named("b"), {x, y}, z, 1.0);
  const GraphPtr g = std::move(b).build();
  EXPECT_EQ(g->tensor(x).consumers, (std::vector<OperatorId>{0, 1}));
  EXPECT_EQ(g->tensor(y).producer, 0);
  EXPECT_EQ(g->sources(), std::vector<TensorId>{x});
  EXPECT_EQ(g->outputs(), std::vector<TensorId>{z});
  EXPECT_EQ(g->find_operator("b")->id, 1);
  EXPECT_EQ(g->find_tensor("nope"), nullptr);
  EXPECT_EQ(g->tensor(z).bytes(), 24);
}

TEST(Affine, BoundsOfNegativeCoefficients) {
  AffineExpr e{{{0, -1}, {1, 2}}, 5};  // 5 − a + 2b
  const std::vector<Range> r{{0, 4}, {1, 3}};
  // a ∈ [0,3], b ∈ [1,2]: min 5 − 3 + 2 = 4, max 5 − 0 + 4 = 9
  EXPECT_EQ(e.bounds(r), (Range{4, 10}));
  EXPECT_EQ(e.str(std::vector<std::string>{"A", "B"}), "-A + 2*B + 5");
}

}  // namespace
}  // namespace monet
