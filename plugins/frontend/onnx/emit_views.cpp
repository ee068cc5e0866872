// Data-movement nodes: zero-cost views that alias their input (with what each output element reads), and
// copies into new tensors (padding, resampling, tiling, scatters, gathers, reshapes of non-contiguous views).
#include "conversion.hpp"

#include <algorithm>
#include <cmath>

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

void Converter::emit_view(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const auto shapes = view_shapes(i, in);
  std::vector<int> sources;
  for (int v : in) {
    if (v >= 0 && value(v).kind != ValueKind::constant) sources.push_back(v);
  }
  if (sources.empty()) fail(i, "no tensor input");
  if (n.op_type() != "Concat") sources.resize(1);
  if ((n.op_type() == "Reshape" || n.op_type() == "Flatten") && !is_contiguous_value(sources[0])) {
    return emit_copy_of_view(i, sources[0], shapes.at(0), "ReshapeCopy");
  }
  if (n.op_type() == "Slice") {  // a negative step is torch.flip, which copies
    const SliceParams sp = slice_params(i, in);
    if (std::any_of(sp.step.begin(), sp.step.end(), [](std::int64_t s) { return s < 0; })) {
      return emit_copy_of_view(i, sources[0], shapes.at(0), "Flip");
    }
  }
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
    value(find(out)).strides = view_strides(i, in, k, shapes[k]);
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
      const auto axis = static_cast<std::int64_t>(axis_of(i, attr_int(n, "axis").value_or(0), rank));
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
      const auto axis = static_cast<std::int64_t>(axis_of(i, attr_int(n, "axis").value_or(0), rank));
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

void Converter::emit_copy_of_view(int i, int x, const Shape& out, const char* type) {
  Operator op = base(i);
  op.type = type;
  op.attributes["shape"] = std::vector<std::int64_t>(out.begin(), out.end());
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, g_.node(i).output(0), out, value(x).dtype);
  ops::copy(builder_, std::move(op), {xi}, y);
}

void Converter::emit_copy(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& type = n.op_type();
  const Shape out = copy_shape(i, in);
  const Value& x = value(in[0]);
  if (type == "Pad") {
    const auto p = pad_amounts(i, in);
    Operator op = base(i);
    op.attributes["pads"] = p;
    // PyTorch's reflection and replication pads keep their input for the backward pass; constant pads do not.
    const auto* m = attr(n, "mode");
    const std::string mode = m ? m->s() : "constant";
    if (mode == "reflect") op.type = "ReflectionPad";
    else if (mode == "edge") op.type = "ReplicationPad";
    else if (mode == "wrap") op.type = "CircularPad";
    const TensorId xi = tensor_of(in[0]);
    const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
    ops::pad(builder_, std::move(op), xi, y, std::vector<std::int64_t>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(out.size())));
    return;
  }
  double ops = 0;
  if (type == "Resize" || type == "Upsample") {
    // Interpolation taps per output element: nearest 1, linear 2 per resized axis, cubic 4; a weighted sum of
    // t taps costs 2t − 1 operations.
    const auto* m = attr(n, "mode");
    const std::string mode = m ? m->s() : "nearest";
    std::int64_t taps = 1;
    for (std::size_t a = 0; a < out.size(); ++a) {
      if (out[a] != x.shape[a]) taps *= mode == "cubic" ? 4 : (mode == "nearest" ? 1 : 2);
    }
    ops = taps > 1 ? static_cast<double>(2 * taps - 1) : 0;
  }
  std::vector<TensorId> xs;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const int v = in[k];
    if (v < 0 || value(v).kind == ValueKind::constant) continue;  // pads, scales, repeats, indices known at import
    if (k > 0 && (type == "Tile" || type == "Resize" || type == "Upsample" || type == "OneHot")) continue;
    xs.push_back(tensor_of(v));
  }
  if (xs.empty()) fail(i, "no tensor input");
  ElementType dt = x.dtype;
  if (type == "OneHot") dt = value(in.at(2)).dtype;
  Operator op = base(i);
  const TensorId y = output_tensor(i, n.output(0), out, dt);
  ops::copy(builder_, std::move(op), xs, y, ops);
}

}  // namespace monet::onnx_frontend
