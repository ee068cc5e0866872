// Reductions, padding, copies and group normalization: loop nests over a tensor's axes.
#include <algorithm>

#include "monet/ir/ops.hpp"
#include "ops_detail.hpp"

namespace monet::ops {

using detail::add_dim;
using detail::all_of;
using detail::axis_dims;
using detail::dim;
using detail::fail;
using detail::linear2;

OperatorId reduce(GraphBuilder& b, Operator op, TensorId x, TensorId output, const std::vector<std::size_t>& axes,
                  double ops_per_element) {
  const Shape in = b.tensor(x).shape;
  const Shape out = b.tensor(output).shape;
  Shape kept;  // the output when reduced axes are kept as size 1
  Shape dropped;
  for (std::size_t a = 0; a < in.size(); ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    kept.push_back(reduced ? 1 : in[a]);
    if (!reduced) dropped.push_back(in[a]);
  }
  const bool keepdims = out == kept;
  if (!keepdims && out != dropped && !(dropped.empty() && element_count(out) == 1)) {
    fail(op.origin, op.name, "reducing " + to_string(in) + " over the given axes gives " + to_string(kept) +
                                 ", not " + to_string(out));
  }
  op.kind = OpKind::reduction;
  op.ops_per_iteration = ops_per_element;
  const std::vector<int> dims = axis_dims(op, in);
  std::vector<AffineExpr> acc_o;
  for (std::size_t a = 0; a < in.size(); ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced) acc_o.push_back(dim(dims[a]));
    else if (keepdims) acc_o.push_back(AffineExpr::constant(0));
  }
  if (acc_o.size() != out.size()) acc_o.assign(out.size(), AffineExpr::constant(0));  // a scalar as [1]
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  std::vector<std::int64_t> ax(axes.begin(), axes.end());
  op.attributes["axes"] = ax;
  op.attributes["keepdims"] = {keepdims ? 1 : 0};
  return b.add_operator(std::move(op));
}

OperatorId pad(GraphBuilder& b, Operator op, TensorId x, TensorId output, const std::vector<std::int64_t>& begins) {
  const Shape in = b.tensor(x).shape;
  const Shape out = b.tensor(output).shape;
  if (in.size() != out.size() || begins.size() != in.size()) {
    fail(op.origin, op.name, "padding " + to_string(in) + " to " + to_string(out) + " needs one begin per axis");
  }
  op.kind = OpKind::copy;
  op.ops_per_iteration = 0;
  const std::vector<int> dims = axis_dims(op, out);
  std::vector<AffineExpr> acc_x;
  bool overruns = false;  // an axis padded only at its end: a plain index past the input (not expressible)
  for (std::size_t a = 0; a < in.size(); ++a) {
    AffineExpr e = dim(dims[a]);
    e.offset = -begins[a];
    overruns |= begins[a] == 0 && out[a] > in[a];
    acc_x.push_back(e);
  }
  if (overruns) acc_x.clear();  // the whole input
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, std::move(acc_x)));
  op.attributes["begins"] = begins;
  return b.add_operator(std::move(op));
}

OperatorId copy(GraphBuilder& b, Operator op, const std::vector<TensorId>& inputs, TensorId output,
                double ops_per_element) {
  const Shape out = b.tensor(output).shape;
  op.kind = ops_per_element > 0 ? OpKind::elementwise : OpKind::copy;
  op.ops_per_iteration = ops_per_element;
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    op.operands.push_back(operand(b, inputs[k], k == 0 ? OperandSlot::I1 : OperandSlot::I2, {}));
  }
  return b.add_operator(std::move(op));
}

OperatorId group_norm(GraphBuilder& b, Operator op, TensorId x, std::optional<TensorId> scale,
                      std::optional<TensorId> bias, TensorId output, std::int64_t groups) {
  const Shape in = b.tensor(x).shape;
  if (in.size() < 2 || b.tensor(output).shape != in || groups <= 0 || in[1] % groups != 0) {
    fail(op.origin, op.name, "group normalization needs an [N, C, ...] input whose channels the " +
                                 std::to_string(groups) + " groups divide, and an output of the same shape");
  }
  op.kind = OpKind::norm;
  if (op.type.empty()) op.type = "GroupNormalization";
  op.ops_per_iteration = kGroupNormOps;
  const std::int64_t per_group = in[1] / groups;
  const int dB = add_dim(op, "B", in[0]);
  const int dG = add_dim(op, "G", groups);
  const int dK = add_dim(op, "K", per_group);
  if (in.size() > 5) fail(op.origin, op.name, "group normalization of rank " + std::to_string(in.size()) + " (at most 5)");
  const auto names = spatial_dim_names(in.size() - 2, 'O');
  std::vector<AffineExpr> acc{dim(dB), linear2(dG, per_group, dK, 1, 0)};
  for (std::size_t a = 2; a < in.size(); ++a) acc.push_back(dim(add_dim(op, names[a - 2], in[a])));
  op.operands.push_back(operand(b, output, OperandSlot::O, acc));
  op.operands.push_back(operand(b, x, OperandSlot::I1, acc));
  for (std::optional<TensorId> t : {scale, bias}) {
    if (!t) continue;
    const Shape& ts = b.tensor(*t).shape;
    if (ts != Shape{in[1]} && ts != Shape{groups}) {
      fail(op.origin, op.name, "'" + b.tensor(*t).name + "' should have shape [" + std::to_string(in[1]) + "] (per channel) or [" +
                                   std::to_string(groups) + "] (per group)");
    }
    op.operands.push_back(operand(b, *t, OperandSlot::I2, {ts[0] == in[1] ? linear2(dG, per_group, dK, 1, 0) : dim(dG)}));
  }
  op.attributes["groups"] = {groups};
  return b.add_operator(std::move(op));
}

}  // namespace monet::ops
