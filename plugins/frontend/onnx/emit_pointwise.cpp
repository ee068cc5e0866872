// Pointwise nodes: one elementwise loop nest over the output's axes, inputs broadcast.
#include "conversion.hpp"

#include "monet/ir/ops.hpp"
#include "op_table.hpp"

namespace monet::onnx_frontend {

void Converter::emit_pointwise(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& type = n.op_type();
  std::vector<int> tensors;
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const int v = in[k];
    if (v < 0) continue;
    shapes.push_back(value(v).shape);
    if (value(v).is_scalar_constant()) continue;  // a scalar constant is part of the operation
    if ((type == "Clip" && k > 0) || (type == "Dropout" && k > 0)) continue;  // bounds, ratio, training flag
    tensors.push_back(v);
  }
  if (type == "Clip" || type == "Dropout") shapes.resize(1);
  if (tensors.empty()) fail(i, "no tensor input");
  const Shape shape = ops::broadcast_shapes(shapes, SourceLocation{file_}, node_name(i));
  ElementType dt = kBooleanOps.contains(type) ? ElementType::boolean : value(tensors[0]).dtype;
  if (type == "Cast") dt = element_type_of(static_cast<int>(attr_int(n, "to").value_or(1))).value_or(dt);
  if (type == "Where") dt = value(tensors.back()).dtype;
  std::vector<TensorId> xs;
  for (int v : tensors) xs.push_back(tensor_of(v));
  Operator op = base(i);
  op.kind = OpKind::elementwise;
  const TensorId y = output_tensor(i, n.output(0), shape, dt);
  ops::elementwise(builder_, std::move(op), xs, y, kPointwiseOps.at(type));
}

void Converter::emit_gelu(int i) {
  const Gelu& p = gelu_.at(i);
  const int x = find(p.x);
  Operator op = base(p.nodes[1], p.nodes);  // named after the Erf node
  op.kind = OpKind::elementwise;
  op.type = "Gelu";
  const TensorId y = output_tensor(i, g_.node(i).output(0), value(x).shape, value(x).dtype);
  ops::elementwise(builder_, std::move(op), {tensor_of(x)}, y, kGeluOps);
}

}  // namespace monet::onnx_frontend
