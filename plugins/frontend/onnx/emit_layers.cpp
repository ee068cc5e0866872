// Layers with their own loop nests: convolution, matrix products, normalisations, softmax, pooling, lookups.
#include "conversion.hpp"

#include <algorithm>

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

void Converter::emit_conv(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  const Value& w = value(in.at(1));
  if (x.shape.size() != 4 || w.shape.size() != 4) fail(i, "only 2-D convolutions (NCHW) are supported");
  ops::Conv2dSpec s;
  const auto kernel = attr_ints(n, "kernel_shape").value_or(std::vector<std::int64_t>{w.shape[2], w.shape[3]});
  s.kernel = {kernel[0], kernel[1]};
  if (auto v = attr_ints(n, "strides")) s.stride = {(*v)[0], (*v)[1]};
  if (auto v = attr_ints(n, "dilations")) s.dilation = {(*v)[0], (*v)[1]};
  s.groups = attr_int(n, "group").value_or(1);
  s.pads = pads(i, x.shape, s.kernel, s.stride, s.dilation);
  const Shape out = ops::conv2d_output_shape(x.shape, w.shape[0], s, SourceLocation{file_}, node_name(i));
  std::optional<TensorId> bias;
  if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
  const TensorId xi = tensor_of(in[0]);
  const TensorId wi = tensor_of(in[1]);
  const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
  ops::conv2d(builder_, base(i), xi, wi, bias, y, s);
}

std::array<std::int64_t, 4> Converter::pads(int i, const Shape& x, std::array<std::int64_t, 2> kernel,
                                             std::array<std::int64_t, 2> stride, std::array<std::int64_t, 2> dilation) {
  const auto& n = g_.node(i);
  std::array<std::int64_t, 4> p{0, 0, 0, 0};
  const std::string auto_pad = attr(n, "auto_pad") ? attr(n, "auto_pad")->s() : "NOTSET";
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int a = 0; a < 2; ++a) {
      const std::int64_t in = x[static_cast<std::size_t>(2 + a)];
      const std::int64_t out = (in + stride[a] - 1) / stride[a];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride[a] + (kernel[a] - 1) * dilation[a] + 1 - in);
      const std::int64_t small = total / 2;
      p[static_cast<std::size_t>(a)] = auto_pad == "SAME_UPPER" ? small : total - small;
      p[static_cast<std::size_t>(a + 2)] = total - p[static_cast<std::size_t>(a)];
    }
  } else if (auto v = attr_ints(n, "pads")) {
    if (v->size() != 4) fail(i, "expected 4 pads for a 2-D window");
    p = {(*v)[0], (*v)[1], (*v)[2], (*v)[3]};
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
  const TensorId ai = tensor_of(in[0]);
  const TensorId bi = tensor_of(b);
  const TensorId y = output_tensor(i, out_name, out, value(in[0]).dtype);
  ops::matmul(builder_, std::move(op), ai, bi, bias, y, s);
  for (int later : convert_node_later_) {
    absorbed_[static_cast<std::size_t>(later)] = false;
    convert_node(later);
  }
  convert_node_later_.clear();
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
  const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(-1), x.shape.size()));
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
      static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(default_axis), xv.shape.size()));
  Operator op = base(i, nodes);
  if (mask) op.attributes["mask"] = {masked_.at(i).boolean ? 1 : 2};  // 1: boolean (Where), 2: additive
  const TensorId xi = tensor_of(x);
  const TensorId y = output_tensor(i, n.output(0), xv.shape, xv.dtype);
  ops::softmax(builder_, std::move(op), xi, mask, y, axis);
}

void Converter::emit_pool(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& x = value(in[0]);
  if (x.shape.size() != 4) fail(i, "only 2-D pooling (NCHW) is supported");
  ops::Pool2dSpec s;
  const bool global = n.op_type().rfind("Global", 0) == 0;
  if (global) {
    s.kernel = {x.shape[2], x.shape[3]};
  } else {
    const auto k = attr_ints(n, "kernel_shape");
    if (!k || k->size() != 2) fail(i, "missing kernel_shape");
    s.kernel = {(*k)[0], (*k)[1]};
    if (auto v = attr_ints(n, "strides")) s.stride = {(*v)[0], (*v)[1]};
    if (auto v = attr_ints(n, "dilations")) s.dilation = {(*v)[0], (*v)[1]};
    s.ceil_mode = attr_int(n, "ceil_mode").value_or(0) != 0;
    s.pads = pads(i, x.shape, s.kernel, s.stride, s.dilation);
  }
  const Shape out = ops::pool2d_output_shape(x.shape, s, SourceLocation{file_}, node_name(i));
  const TensorId xi = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
  ops::pool2d(builder_, base(i), xi, y, s);
}

void Converter::emit_gather(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const Value& table = value(in[0]);
  const Value& idx = value(in[1]);
  const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), table.shape.size());
  if (table.kind != ValueKind::initializer || table.shape.size() != 2 || axis != 0) return emit_view(i, in);
  // An embedding lookup: rows of a stored table.
  Shape out = idx.shape;
  out.push_back(table.shape[1]);
  std::optional<TensorId> indices;
  if (idx.kind == ValueKind::constant && idx.data && idx.shape.size() == 1) {
    bool positions = true;  // 0, 1, ..., T-1: the table rows are known
    for (std::size_t k = 0; k < idx.data->size(); ++k) positions &= (*idx.data)[k] == static_cast<double>(k);
    if (!positions) indices = tensor_of(in[1]);
  } else {
    indices = tensor_of(in[1]);
  }
  if (out.size() < 2) fail(i, "embedding of a scalar index is not supported");
  Operator op = base(i);
  op.type = "Embedding";
  const TensorId ti = tensor_of(in[0]);
  const TensorId y = output_tensor(i, n.output(0), out, table.dtype);
  ops::embedding(builder_, std::move(op), ti, indices, y);
}

}  // namespace monet::onnx_frontend
