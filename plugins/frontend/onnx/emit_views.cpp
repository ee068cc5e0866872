// Data-movement nodes: zero-cost views that alias their input, with what each output element reads.
#include "conversion.hpp"


namespace monet::onnx_frontend {

void Converter::emit_view(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const auto shapes = view_shapes(i, in);
  std::vector<int> sources;
  for (int v : in) {
    if (v >= 0 && value(v).kind != ValueKind::constant) sources.push_back(v);
  }
  if (n.op_type() != "Concat") sources.resize(1);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::string& out = n.output(static_cast<int>(k));
    if (out.empty()) continue;
    Operator op = base(i);
    if (shapes.size() > 1) op.name += ":" + std::to_string(k);
    op.kind = OpKind::view;
    op.ops_per_iteration = 0;
    const ElementType dt = value(sources[0]).dtype;
    std::vector<TensorId> xs;
    for (int v : sources) xs.push_back(tensor_of(v));
    const TensorId y = output_tensor(i, out, shapes[k], dt);
    if (builder_.tensor(xs[0]).role == TensorRole::weight || builder_.tensor(xs[0]).role == TensorRole::buffer) {
      builder_.tensor(y).role = TensorRole::buffer;  // a view of a stored tensor (not counted again)
    }
    op.operands.push_back(Operand{y, OperandSlot::O, {}, bits_of(dt), 0, false});
    for (TensorId x : xs) op.operands.push_back(Operand{x, OperandSlot::I1, {}, bits_of(builder_.tensor(x).dtype), 0, false});
    // What each output element reads (framework/include/monet/ir/view.hpp), so tiles connect exactly.
    if (n.op_type() == "Transpose") {
      std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
      if (perm.empty()) {
        for (std::size_t a = shapes[k].size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
      }
      op.attributes["perm"] = perm;
    }
    const std::size_t rank = value(sources[0]).shape.size();
    if (n.op_type() == "Concat") {  // the offset of each non-constant input along the axis
      const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
      std::vector<std::int64_t> offsets;
      std::int64_t offset = 0;
      for (int v : in) {
        if (v < 0) continue;
        if (value(v).kind != ValueKind::constant) offsets.push_back(offset);
        offset += value(v).shape.at(static_cast<std::size_t>(axis));
      }
      op.attributes["axis"] = {axis};
      op.attributes["offsets"] = offsets;
    }
    if (n.op_type() == "Split") {
      const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
      std::int64_t offset = 0;
      for (std::size_t j = 0; j < k; ++j) offset += shapes[j][static_cast<std::size_t>(axis)];
      op.attributes["axis"] = {axis};
      op.attributes["offset"] = {offset};
    }
    if (n.op_type() == "Slice") {
      const SliceParams sp = slice_params(i, in);
      op.attributes["slice_start"] = sp.start;
      op.attributes["slice_step"] = sp.step;
    }
    builder_.add_operator(std::move(op));
  }
}

}  // namespace monet::onnx_frontend
