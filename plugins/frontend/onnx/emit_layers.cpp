// Layers with their own loop nests: convolution, matrix products, normalisations, softmax, pooling, lookups.
#include "conversion.hpp"

#include <algorithm>

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

namespace {
std::vector<std::int64_t> ints_or(const std::optional<std::vector<std::int64_t>>& v, std::size_t n, std::int64_t fill) {
  return v ? *v : std::vector<std::int64_t>(n, fill);
}
}  // namespace

ops::ConvSpec Converter::conv_spec(int i, const Value& x, const Value& w) {
  const auto& n = g_.node(i);
  if (x.shape.size() < 3 || x.shape.size() > 5 || w.shape.size() != x.shape.size()) {
    fail(i, "needs an [N, C, L], [N, C, H, W] or [N, C, D, H, W] input and a weight of the same rank, got " +
                to_string(x.shape) + " and " + to_string(w.shape));
  }
  const std::size_t axes = x.shape.size() - 2;
  ops::ConvSpec s;
  s.kernel = attr_ints(n, "kernel_shape").value_or(std::vector<std::int64_t>(w.shape.begin() + 2, w.shape.end()));
  s.stride = ints_or(attr_ints(n, "strides"), axes, 1);
  s.dilation = ints_or(attr_ints(n, "dilations"), axes, 1);
  s.groups = attr_int(n, "group").value_or(1);
  return s;
}

void Converter::emit_conv(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  const Value& w = value(in.at(1));
  ops::ConvSpec s = conv_spec(i, x, w);
  s.pads = window_pads(i, x.shape, s.kernel, s.stride, s.dilation);
  const Shape out = ops::conv_output_shape(x.shape, w.shape[0], s, SourceLocation{file_}, node_name(i));
  std::optional<TensorId> bias;
  if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
  const TensorId xi = tensor_of(in[0]);
  const TensorId wi = tensor_of(in[1]);
  const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
  ops::conv(builder_, base(i), xi, wi, bias, y, s);
}

void Converter::emit_conv_transpose(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  const Value& w = value(in.at(1));
  ops::ConvSpec s = conv_spec(i, x, w);
  const std::size_t axes = x.shape.size() - 2;
  s.output_padding = ints_or(attr_ints(n, "output_padding"), axes, 0);
  const std::string auto_pad = attr(n, "auto_pad") ? attr(n, "auto_pad")->s() : "NOTSET";
  if (auto os = attr_ints(n, "output_shape")) {
    // Pads that make the requested output shape (the ONNX rule: the larger half at the end, except SAME_UPPER).
    if (os->size() != axes) fail(i, "output_shape must give every spatial axis");
    s.pads.assign(2 * axes, 0);
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t total = s.stride[a] * (x.shape[2 + a] - 1) + s.output_padding[a] +
                                 ((s.kernel.at(a) - 1) * s.dilation[a] + 1) - (*os)[a];
      s.pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      s.pads[axes + a] = total - s.pads[a];
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    s.pads.assign(2 * axes, 0);
    for (std::size_t a = 0; a < axes; ++a) {  // output = input · stride
      const std::int64_t total = s.stride[a] * (x.shape[2 + a] - 1) + s.output_padding[a] +
                                 ((s.kernel.at(a) - 1) * s.dilation[a] + 1) - x.shape[2 + a] * s.stride[a];
      s.pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      s.pads[axes + a] = total - s.pads[a];
    }
  } else {
    s.pads = ints_or(attr_ints(n, "pads"), 2 * axes, 0);
  }
  const Shape out = ops::conv_transpose_output_shape(x.shape, w.shape.at(1) * s.groups, s, SourceLocation{file_},
                                                     node_name(i));
  std::optional<TensorId> bias;
  if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
  const TensorId xi = tensor_of(in[0]);
  const TensorId wi = tensor_of(in[1]);
  const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
  ops::conv_transpose(builder_, base(i), xi, wi, bias, y, s);
}

std::vector<std::int64_t> Converter::window_pads(int i, const Shape& x, const std::vector<std::int64_t>& kernel,
                                                 const std::vector<std::int64_t>& stride,
                                                 const std::vector<std::int64_t>& dilation) {
  const auto& n = g_.node(i);
  const std::size_t axes = x.size() - 2;
  std::vector<std::int64_t> p(2 * axes, 0);
  if (kernel.size() != axes || stride.size() != axes || dilation.size() != axes) {
    fail(i, "kernel_shape, strides and dilations must give each of the " + std::to_string(axes) + " spatial axes");
  }
  const std::string auto_pad = attr(n, "auto_pad") ? attr(n, "auto_pad")->s() : "NOTSET";
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t in = x[2 + a];
      const std::int64_t out = (in + stride[a] - 1) / stride[a];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride[a] + (kernel[a] - 1) * dilation[a] + 1 - in);
      const std::int64_t small = total / 2;
      p[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      p[axes + a] = total - p[a];
    }
  } else if (auto v = attr_ints(n, "pads")) {
    if (v->size() != 2 * axes) {
      fail(i, "expected " + std::to_string(2 * axes) + " pads for a " + std::to_string(axes) + "-D window, got " +
                  std::to_string(v->size()));
    }
    p = *v;
  }
  return p;
}

bool Converter::is_weight(int v) const {
  const Value& val = value(v);
  return val.kind == ValueKind::initializer;
}

void Converter::emit_gemm(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  ops::MatmulSpec s;
  s.transpose_a = attr_int(n, "transA").value_or(0) != 0;
  s.transpose_b = attr_int(n, "transB").value_or(0) != 0;
  const Value& a = value(in[0]);
  const Value& b = value(in[1]);
  const Shape out = ops::matmul_output_shape(a.shape, b.shape, s, SourceLocation{file_}, node_name(i));
  std::optional<TensorId> bias;
  if (in.size() > 2 && in[2] >= 0) {
    const Shape& c = value(in[2]).shape;
    if (element_count(c) != out.back() || c.empty() || c.back() != out.back()) {
      fail(i, "only a bias of shape [N] or [1, N] is supported for C, got " + to_string(c));
    }
    bias = tensor_of(in[2]);
  }
  Operator op = base(i);
  op.kind = is_weight(in[1]) ? OpKind::gemm : OpKind::matmul;
  const TensorId ai = tensor_of(in[0]);
  const TensorId bi = tensor_of(in[1]);
  const TensorId y = output_tensor(i, n.output(0), out, a.dtype);
  ops::matmul(builder_, std::move(op), ai, bi, bias, y, s);
}

void Converter::emit_matmul(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  int b = in[1];
  ops::MatmulSpec s;
  std::vector<int> extra;
  if (auto it = transposed_.find(value(b).name); it != transposed_.end()) {
    b = find(g_.node(it->second).input(0));  // the stored weight itself, read transposed
    s.transpose_b = true;
    extra.push_back(it->second);
  }
  if (value(in[0]).shape.size() < 2 || value(b).shape.size() < 2) fail(i, "1-D matrix products are not supported");
  const Shape out = ops::matmul_output_shape(value(in[0]).shape, value(b).shape, s, SourceLocation{file_}, node_name(i));
  std::optional<TensorId> bias;
  std::string out_name = n.output(0);
  extra.push_back(i);
  if (auto it = linear_.find(i); it != linear_.end()) {
    const int bv = find(it->second.bias);
    if (value(bv).shape == Shape{out.back()}) {
      bias = tensor_of(bv);
      out_name = g_.node(it->second.add).output(0);
      extra.push_back(it->second.add);
    } else {
      convert_node_later_.push_back(it->second.add);  // not a bias after all: keep the Add
    }
  }
  Operator op = base(i, extra);
  op.kind = is_weight(b) ? OpKind::gemm : OpKind::matmul;
  const std::size_t batch = out.size() - 2;
  const TensorId ai = matmul_operand(i, in[0], value(b).shape.size() <= 2 ? 0 : batch, "a");
  const TensorId bi = s.transpose_b ? tensor_of(b) : matmul_operand(i, b, value(in[0]).shape.size() <= 2 ? 0 : batch, "b");
  const TensorId y = output_tensor(i, out_name, out, value(in[0]).dtype);
  ops::matmul(builder_, std::move(op), ai, bi, bias, y, s);
  for (int later : convert_node_later_) {
    absorbed_[static_cast<std::size_t>(later)] = false;
    convert_node(later);
  }
  convert_node_later_.clear();
}

TensorId Converter::matmul_operand(int i, int v, std::size_t batch, const char* which) {
  const Value& x = value(v);
  if (x.strides.empty() || x.kind != ValueKind::activation) return tensor_of(v);
  // torch.matmul folds its operands for mm / bmm with reshape: a 3-D or larger operand against a matrix to
  // [rows, k] (batch = 0: every axis but the last merges), batched operands to [batch, n, k] after broadcasting
  // the batch axes (broadcast axes have stride 0). Axes merge into one view when each stride is the next
  // axis's stride times its size (size-1 axes aside); otherwise reshape copies, and mm / bmm save the copy.
  const std::size_t rank = x.shape.size();
  Shape shape = x.shape;
  std::vector<std::int64_t> strides = x.strides;
  std::size_t merged;  // axes [0, merged) become one
  if (batch == 0) {
    if (rank < 3) return tensor_of(v);
    merged = rank - 1;
  } else {
    for (std::size_t a = rank - 2; a < batch; ++a) {  // missing leading batch axes: expand adds them
      shape.insert(shape.begin(), 1);
      strides.insert(strides.begin(), 0);
    }
    merged = shape.size() - 2;
  }
  bool viewable = true;
  std::int64_t expected = -1;  // the stride the previous (outer) merged axis needs
  for (std::size_t a = merged; a-- > 0;) {
    if (shape[a] == 1) continue;
    if (expected >= 0 && strides[a] != expected) viewable = false;
    expected = strides[a] * shape[a];
  }
  if (viewable) return tensor_of(v);
  Operator op = base(i);
  op.name += std::string(":") + which + ".contiguous";
  op.type = "MatMulFoldCopy";  // reshape inside torch.matmul: the copy mm / bmm save
  const TensorId xi = tensor_of(v);
  const TensorId y = ir_tensor(op.name, x.shape, x.dtype, TensorRole::activation);
  ops::copy(builder_, std::move(op), {xi}, y);
  return y;
}

void Converter::emit_batch_norm(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  if (in.size() < 5) fail(i, "expected 5 inputs (X, scale, B, mean, var)");
  const bool training = attr_int(n, "training_mode").value_or(0) != 0 || n.output_size() > 1;
  bn_statistics_.insert(in[3]);
  bn_statistics_.insert(in[4]);
  const Value& x = value(in[0]);
  const TensorId xi = tensor_of(in[0]);
  const TensorId sc = tensor_of(in[1]);
  const TensorId bi = tensor_of(in[2]);
  const TensorId mean = tensor_of(in[3]);
  const TensorId var = tensor_of(in[4]);
  const TensorId y = output_tensor(i, n.output(0), x.shape, x.dtype);
  for (int k = 1; k < n.output_size(); ++k) {
    // Updated running statistics: buffers written in place; nothing downstream may read them.
    if (!n.output(k).empty() && !consumers(n.output(k)).empty()) fail(i, "reading the updated running statistics is not supported");
  }
  ops::batch_norm(builder_, base(i), xi, sc, bi, mean, var, y, training);
}

void Converter::emit_layer_norm(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  const auto axis = axis_of(i, attr_int(n, "axis").value_or(-1), x.shape.size());
  std::optional<TensorId> scale;
  std::optional<TensorId> bias;
  if (in.size() > 1 && in[1] >= 0) scale = tensor_of(in[1]);
  if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
  const TensorId xi = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), x.shape, x.dtype);
  ops::layer_norm(builder_, base(i), xi, scale, bias, y, axis);
}

void Converter::emit_softmax(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  int x = in.empty() ? -1 : in[0];
  std::optional<TensorId> mask;
  std::vector<int> nodes;
  if (auto it = masked_.find(i); it != masked_.end()) {
    x = find(it->second.x);
    const int m = find(it->second.mask);
    mask = tensor_of(m);
    mask_values_.insert(m);
    nodes.push_back(it->second.mask_node);
  }
  nodes.push_back(i);
  const Value& xv = value(x);
  // Opset 13 changed the default axis from 1 to -1.
  const std::int64_t default_axis = opset_ >= 13 ? -1 : 1;
  const auto axis =
      axis_of(i, attr_int(n, "axis").value_or(default_axis), xv.shape.size());
  Operator op = base(i, nodes);
  if (mask) op.attributes["mask"] = {masked_.at(i).boolean ? 1 : 2};  // 1: boolean (Where), 2: additive
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, n.output(0), xv.shape, xv.dtype);
  ops::softmax(builder_, std::move(op), xi, mask, y, axis);
}

void Converter::emit_pool(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  if (x.shape.size() < 3 || x.shape.size() > 5) {
    fail(i, "pooling needs an [N, C, L], [N, C, H, W] or [N, C, D, H, W] input, got " + to_string(x.shape));
  }
  const std::size_t axes = x.shape.size() - 2;
  ops::PoolSpec s;
  const bool global = n.op_type().rfind("Global", 0) == 0;
  if (global) {
    s.kernel.assign(x.shape.begin() + 2, x.shape.end());
  } else {
    const auto k = attr_ints(n, "kernel_shape");
    if (!k || k->size() != axes) fail(i, "kernel_shape must give each of the " + std::to_string(axes) + " spatial axes");
    s.kernel = *k;
    s.stride = ints_or(attr_ints(n, "strides"), axes, 1);
    s.dilation = ints_or(attr_ints(n, "dilations"), axes, 1);
    s.ceil_mode = attr_int(n, "ceil_mode").value_or(0) != 0;
    s.pads = window_pads(i, x.shape, s.kernel, s.stride, s.dilation);
  }
  const Shape out = ops::pool_output_shape(x.shape, s, SourceLocation{file_}, node_name(i));
  Operator op = base(i);
  if (n.op_type() == "AveragePool" && attr_int(n, "count_include_pad").value_or(0) != 0) {
    op.attributes["count_include_pad"] = {1};
  }
  const TensorId xi = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
  ops::pool(builder_, std::move(op), xi, y, s);
}

void Converter::emit_gather(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& table = value(in[0]);
  const Value& idx = value(in[1]);
  const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), table.shape.size());
  if (table.kind != ValueKind::initializer || table.shape.size() != 2 || axis != 0) {
    // A scalar index selects (a view, as PyTorch's select); an index tensor gathers a copy (index_select, which
    // keeps the indices for its backward).
    if (idx.shape.empty()) return emit_view(i, in);
    Operator op = base(i);
    op.type = "IndexSelect";
    op.attributes["axis"] = {axis};
    const TensorId xi = tensor_of(in[0]);
    const TensorId ii = tensor_of(in[1]);
    const TensorId y = output_tensor(i, n.output(0), copy_shape(i, in), table.dtype);
    ops::copy(builder_, std::move(op), {xi, ii}, y);
    return;
  }
  // An embedding lookup: rows of a stored table.
  Shape out = idx.shape;
  out.push_back(table.shape[1]);
  if (out.size() < 2) fail(i, "embedding of a scalar index is not supported");
  // Position ids 0, 1, ..., T-1 (computed in the forward pass): the rows are known, but autograd still saves
  // the indices.
  bool positions = idx.kind == ValueKind::constant && idx.data && !idx.shape.empty();
  if (positions) {
    const auto T = static_cast<std::size_t>(idx.shape.back());
    for (std::size_t k = 0; k < idx.data->size(); ++k) positions &= (*idx.data)[k] == static_cast<double>(k % T);
  }
  Operator op = base(i);
  op.type = "Embedding";
  const TensorId ti = tensor_of(in[0]);
  const TensorId ii = tensor_of(in[1]);
  const TensorId y = output_tensor(i, n.output(0), out, table.dtype);
  ops::embedding(builder_, std::move(op), ti, ii, y, positions);
}

void Converter::emit_layer_norm_pattern(int i) {
  const LayerNormPattern& p = layer_norm_.at(i);
  const int x = find(p.x);
  if (x < 0) fail(i, "input '" + p.x + "' is not defined before this node");
  const std::size_t rank = value(x).shape.size();
  if (p.axis > rank) fail(i, "normalises more axes than its input has");
  std::optional<TensorId> scale;
  std::optional<TensorId> bias;
  if (!p.scale.empty()) scale = tensor_of(find(p.scale));
  if (!p.bias.empty()) bias = tensor_of(find(p.bias));
  Operator op = base(p.nodes.front(), p.nodes);
  op.type = "LayerNormalization";
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, g_.node(i).output(0), value(x).shape, value(x).dtype);
  ops::layer_norm(builder_, std::move(op), xi, scale, bias, y, rank - p.axis);
}

void Converter::emit_einsum(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const auto* eq = attr(n, "equation");
  if (!eq) fail(i, "missing the 'equation' attribute");
  if (in.empty() || in.size() > 2) {
    fail(i, "einsum of " + std::to_string(in.size()) + " operands: only one or two are supported (PyTorch contracts "
            "longer chains pairwise; export them as separate einsums)");
  }
  std::vector<Shape> shapes;
  std::vector<TensorId> xs;
  bool weight = false;
  for (int v : in) {
    shapes.push_back(value(v).shape);
    weight |= is_weight(v);
  }
  const Shape out = ops::einsum_output_shape(eq->s(), shapes, SourceLocation{file_}, node_name(i));
  for (int v : in) xs.push_back(tensor_of(v));
  Operator op = base(i);
  op.kind = weight ? OpKind::gemm : OpKind::matmul;
  op.attributes["operands"] = {static_cast<std::int64_t>(in.size())};
  const TensorId y = output_tensor(i, n.output(0), out, value(in[0]).dtype);
  ops::einsum(builder_, std::move(op), eq->s(), xs, y);
}

void Converter::emit_group_norm(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  if (x.shape.size() < 2) fail(i, "needs an [N, C, ...] input, got " + to_string(x.shape));
  const std::int64_t groups =
      n.op_type() == "GroupNormalization" ? attr_int(n, "num_groups").value_or(0) : x.shape[1];
  std::optional<TensorId> scale;
  std::optional<TensorId> bias;
  // Constant scale and shift (ones and zeros of a norm without affine part) are part of the operation.
  if (in.size() > 1 && in[1] >= 0 && value(in[1]).kind != ValueKind::constant) scale = tensor_of(in[1]);
  if (in.size() > 2 && in[2] >= 0 && value(in[2]).kind != ValueKind::constant) bias = tensor_of(in[2]);
  Operator op = base(i);
  op.type = n.op_type();
  const TensorId xi = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), x.shape, x.dtype);
  ops::group_norm(builder_, std::move(op), xi, scale, bias, y, groups);
}

void Converter::emit_group_norm_pattern(int i) {
  const GroupNormPattern& p = group_norm_.at(i);
  const int x = find(p.x);
  const auto& norm = g_.node(p.instance_norm);
  const int norm_scale = find(norm.input(1));
  if (x < 0 || norm_scale < 0 || value(norm_scale).shape.size() != 1) fail(i, "malformed GroupNorm export");
  std::optional<TensorId> scale;
  std::optional<TensorId> bias;
  if (!p.scale.empty()) scale = tensor_of(find(p.scale));
  if (!p.bias.empty()) bias = tensor_of(find(p.bias));
  Operator op = base(p.instance_norm, p.nodes);
  op.type = "GroupNormalization";
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, g_.node(i).output(0), value(x).shape, value(x).dtype);
  ops::group_norm(builder_, std::move(op), xi, scale, bias, y, value(norm_scale).shape[0]);
}

}  // namespace monet::onnx_frontend
