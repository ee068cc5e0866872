// Pointwise nodes (one elementwise loop nest over the output's axes, inputs broadcast), the activations
// recognised from several nodes, and reductions.
#include "conversion.hpp"

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

void Converter::emit_pointwise(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& type = n.op_type();
  if (type == "Dropout") {
    // Ratio 0 (torchvision's ViT) or inference: the identity, no mask.
    const bool no_ratio = in.size() > 1 && in[1] >= 0 && value(in[1]).data && value(in[1]).data->at(0) == 0.0;
    const bool inference = in.size() > 2 && in[2] >= 0 && value(in[2]).data && value(in[2]).data->at(0) == 0.0;
    if (no_ratio || inference || (opset_ < 12 && attr_float(n, "ratio").value_or(0.5f) == 0.0f)) {
      return emit_view(i, in);
    }
  }
  const std::vector<int> tensors = pointwise_operands(i, in);
  const bool generates = type.rfind("Random", 0) == 0;  // reads no data (only a shape)
  if (tensors.empty() && !generates) fail(i, "no tensor input");
  const Shape shape = pointwise_shape(i, in);
  const ElementType dt = pointwise_dtype(i, tensors);
  std::vector<TensorId> xs;
  for (int v : tensors) xs.push_back(tensor_of(v));
  double ops = op_rule(type)->ops;
  if (type == "Sum" || type == "Max" || type == "Min") ops = static_cast<double>(std::max<std::size_t>(xs.size(), 2) - 1);
  if (type == "Mean") ops = static_cast<double>(xs.size());
  Operator op = base(i);
  op.kind = OpKind::elementwise;
  if (type == "CumSum") {
    op.attributes["axis"] = {static_cast<std::int64_t>(axis_of(i, const_ints(i, in.at(1), "axis").at(0), shape.size()))};
  }
  const TensorId y = output_tensor(i, n.output(0), shape, dt);
  ops::elementwise(builder_, std::move(op), xs, y, ops);
}

void Converter::emit_activation(int i) {
  const Activation& p = activation_.at(i);
  const int x = find(p.x);
  if (x < 0) fail(i, "input '" + p.x + "' is not defined before this node");
  Operator op = base(p.name_node, p.nodes);
  op.kind = OpKind::elementwise;
  op.type = p.type;
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, g_.node(i).output(0), value(x).shape, value(x).dtype);
  ops::elementwise(builder_, std::move(op), {xi}, y, p.ops);
}

void Converter::emit_reduce(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& type = n.op_type();
  const Value& x = value(in[0]);
  const std::vector<std::size_t> axes = reduce_axes(i, in);
  if (axes.empty()) return emit_view(i, in);  // noop_with_empty_axes: the identity
  const bool keepdims = attr_int(n, "keepdims").value_or(1) != 0;
  Shape out;
  for (std::size_t a = 0; a < x.shape.size(); ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced) out.push_back(x.shape[a]);
    else if (keepdims) out.push_back(1);
  }
  const bool index = type == "ArgMax" || type == "ArgMin";
  const TensorId xi = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), out, index ? ElementType::int64 : x.dtype);
  ops::reduce(builder_, base(i), xi, y, axes, op_rule(type)->ops);
}

}  // namespace monet::onnx_frontend
