// Index maps of views (framework/include/monet/ir/view.hpp) and CN edges through them: tiles on either side of
// a reshape, transpose, concatenation or slice connect exactly, and the view itself carries no data.
#include <gtest/gtest.h>

#include "monet/ir/ops.hpp"
#include "monet/ir/view.hpp"
#include "monet/schedule/cn_graph.hpp"
#include "support/graph_builders.hpp"

namespace monet {
namespace {

using test::named;
using test::tensor;

/// A view of `type` from `inputs` to `output`, with attributes, the way the ONNX frontend writes them.
OperatorId add_view(GraphBuilder& b, const std::string& name, const std::string& type, const std::vector<TensorId>& inputs,
                    TensorId output, std::map<std::string, std::vector<std::int64_t>> attributes = {}) {
  Operator op;
  op.name = name;
  op.type = type;
  op.kind = OpKind::view;
  op.ops_per_iteration = 0;
  op.attributes = std::move(attributes);
  op.operands.push_back(Operand{output, OperandSlot::O, {}, 32, 0, false});
  for (TensorId x : inputs) op.operands.push_back(Operand{x, OperandSlot::I1, {}, 32, 0, false});
  return b.add_operator(std::move(op));
}

std::vector<Range> region(const Graph& g, const std::string& view, std::size_t operand, std::vector<Range> out) {
  for (const Operator& op : g.operators()) {
    if (op.name == view) return view_input_region(g, op, operand, out);
  }
  ADD_FAILURE() << "no operator " << view;
  return {};
}

using R = std::vector<Range>;

TEST(ViewRegions, ReshapeMapsEachGroupOfAxes) {
  GraphBuilder b("views");
  const TensorId x = tensor(b, "x", {2, 6, 4}, TensorRole::input);     // [B, T, C]
  const TensorId heads = tensor(b, "heads", {2, 6, 2, 2});              // [B, T, H, D]
  const TensorId img = tensor(b, "img", {1, 8, 4, 4}, TensorRole::input);
  const TensorId flat = tensor(b, "flat", {1, 128});
  add_view(b, "split_heads", "Reshape", {x}, heads);
  add_view(b, "flatten", "Flatten", {img}, flat);
  add_view(b, "merge_heads", "Reshape.grad", {heads}, tensor(b, "dx", {2, 6, 4}));
  const GraphPtr g = std::move(b).build();
  // Tokens 1..2 of head 1: the same tokens, channels 2..3 (C = H x D); exact.
  EXPECT_EQ(region(*g, "split_heads", 1, {{0, 2}, {1, 3}, {1, 2}, {0, 2}}), (R{{0, 2}, {1, 3}, {2, 4}}));
  // Elements 32..63 of the flattened image: channels 2 and 3, every row and column.
  EXPECT_EQ(region(*g, "flatten", 1, {{0, 1}, {32, 64}}), (R{{0, 1}, {2, 4}, {0, 4}, {0, 4}}));
  // Half a row of one channel: its bounding box is that row.
  EXPECT_EQ(region(*g, "flatten", 1, {{0, 1}, {17, 19}}), (R{{0, 1}, {1, 2}, {0, 1}, {1, 3}}));
  // Backwards the same map the other way: tokens 3..5, channel 1 -> head 0, dim 1.
  EXPECT_EQ(region(*g, "merge_heads", 1, {{0, 1}, {3, 6}, {1, 2}}), (R{{0, 1}, {3, 6}, {0, 1}, {1, 2}}));
}

TEST(ViewRegions, TransposeConcatSplitSliceExpand) {
  GraphBuilder b("views");
  const TensorId x = tensor(b, "x", {2, 3, 4}, TensorRole::input);
  const TensorId a = tensor(b, "a", {2, 3, 2}, TensorRole::input);
  const TensorId c = tensor(b, "c", {2, 3, 5}, TensorRole::input);
  add_view(b, "t", "Transpose", {x}, tensor(b, "xt", {4, 2, 3}), {{"perm", {2, 0, 1}}});
  add_view(b, "t_grad", "Transpose.grad", {tensor(b, "dxt", {4, 2, 3})}, tensor(b, "dx", {2, 3, 4}), {{"perm", {2, 0, 1}}});
  // Concat(a, <constant of width 1>, c) along the last axis: c starts at 3.
  add_view(b, "cat", "Concat", {a, c}, tensor(b, "ac", {2, 3, 8}), {{"axis", {2}}, {"offsets", {0, 3}}});
  add_view(b, "cat_grad", "Concat.grad", {tensor(b, "dac", {2, 3, 8})}, tensor(b, "dc", {2, 3, 5}),
           {{"axis", {2}}, {"offsets", {0, 3}}, {"part", {1}}});
  add_view(b, "split1", "Split", {c}, tensor(b, "c1", {2, 3, 3}), {{"axis", {2}}, {"offset", {2}}});
  add_view(b, "slice", "Slice", {c}, tensor(b, "odd", {2, 3, 2}), {{"slice_start", {0, 0, 1}}, {"slice_step", {1, 1, 2}}});
  add_view(b, "slice_grad", "Slice.grad", {tensor(b, "dodd", {2, 3, 2})}, tensor(b, "dc2", {2, 3, 5}),
           {{"slice_start", {0, 0, 1}}, {"slice_step", {1, 1, 2}}});
  add_view(b, "expand", "Expand", {tensor(b, "bias", {1, 3, 1}, TensorRole::weight)}, tensor(b, "bx", {2, 3, 4}));
  add_view(b, "gather", "Gather", {x}, tensor(b, "g", {2, 3, 4}));
  const GraphPtr g = std::move(b).build();
  // Y[i, j, k] = X[j, k, i]: rows 1..2 of Y's first axis are X's last axis 1..2.
  EXPECT_EQ(region(*g, "t", 1, {{1, 3}, {0, 1}, {0, 3}}), (R{{0, 1}, {0, 3}, {1, 3}}));
  EXPECT_EQ(region(*g, "t_grad", 1, {{0, 1}, {0, 3}, {1, 3}}), (R{{1, 3}, {0, 1}, {0, 3}}));
  // Columns 1..4 of the concatenation: column 1 of a, nothing of the constant, columns 0..1 of c.
  EXPECT_EQ(region(*g, "cat", 1, {{0, 2}, {0, 3}, {1, 5}}), (R{{0, 2}, {0, 3}, {1, 2}}));
  EXPECT_EQ(region(*g, "cat", 2, {{0, 2}, {0, 3}, {1, 5}}), (R{{0, 2}, {0, 3}, {0, 2}}));
  EXPECT_TRUE(region(*g, "cat", 1, {{0, 2}, {0, 3}, {4, 8}})[2].empty());
  EXPECT_EQ(region(*g, "cat_grad", 1, {{0, 2}, {0, 3}, {0, 2}}), (R{{0, 2}, {0, 3}, {3, 5}}));
  EXPECT_EQ(region(*g, "split1", 1, {{0, 2}, {0, 3}, {0, 1}}), (R{{0, 2}, {0, 3}, {2, 3}}));
  // Odd columns 1, 3: output columns 0..1 read input columns 1..3 (bounding box).
  EXPECT_EQ(region(*g, "slice", 1, {{0, 2}, {0, 3}, {0, 2}}), (R{{0, 2}, {0, 3}, {1, 4}}));
  // The gradient of input columns 2..4 comes from dY column 1 (input column 3) only.
  EXPECT_EQ(region(*g, "slice_grad", 1, {{0, 2}, {0, 3}, {2, 5}}), (R{{0, 2}, {0, 3}, {1, 2}}));
  EXPECT_EQ(region(*g, "expand", 1, {{1, 2}, {2, 3}, {0, 2}}), (R{{0, 1}, {2, 3}, {0, 1}}));
  EXPECT_EQ(region(*g, "gather", 1, {{0, 1}, {0, 1}, {0, 1}}), (R{{0, 2}, {0, 3}, {0, 4}}));  // unknown: whole
}

TEST(CNGraph, TilesConnectExactlyThroughAReshape) {
  // relu1 on [1, 4, 8, 8] by rows -> reshape to [1, 4, 64] -> relu2 by 8-element column blocks: block r of relu2
  // is row r of relu1, whatever tile the view itself is.
  GraphBuilder b("through_view");
  const TensorId x = tensor(b, "x", {1, 4, 8, 8}, TensorRole::input);
  const TensorId y = tensor(b, "y", {1, 4, 8, 8});
  const TensorId v = tensor(b, "v", {1, 4, 64});
  const TensorId z = tensor(b, "z", {1, 4, 64});
  ops::elementwise(b, named("relu1"), {x}, y, 1);
  add_view(b, "reshape", "Reshape", {y}, v);
  ops::elementwise(b, named("relu2"), {v}, z, 1);
  const GraphPtr g = std::move(b).build();
  std::vector<ComputationNode> nodes;
  for (int r = 0; r < 8; ++r) {  // relu1 rows
    ComputationNode cn;
    cn.op = 0;
    cn.ranges = g->op(0).full_ranges();
    cn.ranges[2] = Range{r, r + 1};
    nodes.push_back(cn);
  }
  ComputationNode view;
  view.op = 1;
  view.ranges = g->op(1).full_ranges();
  nodes.push_back(view);
  for (int r = 0; r < 8; ++r) {  // relu2 column blocks
    ComputationNode cn;
    cn.op = 2;
    cn.ranges = g->op(2).full_ranges();
    cn.ranges[2] = Range{8 * r, 8 * r + 8};
    nodes.push_back(cn);
  }
  const CNGraph cn = connect_tiles(*g, nodes);
  for (int r = 0; r < 8; ++r) {
    const auto& in = cn.in_edges[static_cast<std::size_t>(9 + r)];
    ASSERT_EQ(in.size(), 1u) << r;
    const CNEdge& e = cn.edges[static_cast<std::size_t>(in[0])];
    EXPECT_EQ(e.src, r);
    EXPECT_EQ(e.tensor, y);        // the data behind the view
    EXPECT_EQ(e.bits, 4 * 8 * 32);  // 4 channels x 8 columns, fp32
    EXPECT_FALSE(e.order_only);
  }
  // The view waits for everything it aliases but carries nothing.
  EXPECT_EQ(cn.in_edges[8].size(), 8u);
  for (int e : cn.in_edges[8]) EXPECT_TRUE(cn.edges[static_cast<std::size_t>(e)].order_only);
  EXPECT_TRUE(cn.out_edges[8].empty());
  EXPECT_EQ(cn.output_bits[8], 0);
  // z is the graph output; y is not (read only by relu2 through the view).
  EXPECT_EQ(cn.sink_bits[0], 0);
  EXPECT_EQ(cn.sink_bits[9], 4 * 8 * 32);
}

}  // namespace
}  // namespace monet
