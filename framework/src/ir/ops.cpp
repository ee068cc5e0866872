#include "monet/ir/ops.hpp"

#include <algorithm>

namespace monet::ops {

namespace {
[[noreturn]] void fail(const SourceLocation& where, const std::string& name, const std::string& message) {
  throw UserError(where, "operator '" + name + "': " + message);
}

int add_dim(Operator& op, std::string name, std::int64_t size) {
  op.dims.push_back(LoopDim{std::move(name), size});
  return static_cast<int>(op.dims.size()) - 1;
}


AffineExpr dim(int d) { return AffineExpr::of_dim(d); }
AffineExpr linear2(int a, std::int64_t ca, int bdim, std::int64_t cb, std::int64_t offset) {
  AffineExpr e;
  e.terms = {{a, ca}, {bdim, cb}};
  e.offset = offset;
  return e;
}

std::int64_t window_out(std::int64_t in, std::int64_t pad_sum, std::int64_t dilation, std::int64_t kernel,
                        std::int64_t stride, bool ceil_mode) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t avail = in + pad_sum - span;
  if (avail < 0) return 0;
  return (ceil_mode ? (avail + stride - 1) / stride : avail / stride) + 1;
}
}  // namespace

Operand operand(const GraphBuilder& b, TensorId t, OperandSlot slot, std::vector<AffineExpr> access) {
  Operand o;
  o.tensor = t;
  o.slot = slot;
  o.access = std::move(access);
  o.precision_bits = bits_of(b.tensor(t).dtype);
  return o;
}

std::vector<std::string> axis_dim_names(std::size_t rank) {
  switch (rank) {
    case 0: return {};
    case 1: return {"K"};
    case 2: return {"D", "K"};
    case 3: return {"B", "D", "K"};
    case 4: return {"B", "K", "OY", "OX"};
    default: {
      std::vector<std::string> n;
      for (std::size_t i = 0; i + 3 < rank; ++i) n.push_back(i == 0 ? "B" : "B" + std::to_string(i));
      n.insert(n.end(), {"H", "D", "K"});
      return n;
    }
  }
}

// ------------------------------------------------------------------------------------------------ conv

Shape conv2d_output_shape(const Shape& in, std::int64_t out_channels, const Conv2dSpec& s,
                          const SourceLocation& where, const std::string& name) {
  if (in.size() != 4) fail(where, name, "a 2-D convolution needs an NCHW input, got shape " + to_string(in));
  if (s.groups <= 0 || in[1] % s.groups != 0 || out_channels % s.groups != 0) {
    fail(where, name, "groups = " + std::to_string(s.groups) + " must divide input channels (" +
                          std::to_string(in[1]) + ") and output channels (" + std::to_string(out_channels) + ")");
  }
  for (int i = 0; i < 2; ++i) {
    if (s.kernel[i] <= 0 || s.stride[i] <= 0 || s.dilation[i] <= 0) {
      fail(where, name, "kernel, stride and dilation must be positive");
    }
  }
  const std::int64_t oy = window_out(in[2], s.pads[0] + s.pads[2], s.dilation[0], s.kernel[0], s.stride[0], false);
  const std::int64_t ox = window_out(in[3], s.pads[1] + s.pads[3], s.dilation[1], s.kernel[1], s.stride[1], false);
  if (oy <= 0 || ox <= 0) {
    fail(where, name, "the " + std::to_string(s.kernel[0]) + "x" + std::to_string(s.kernel[1]) +
                          " window does not fit the input " + to_string(in) + " with the given padding");
  }
  return Shape{in[0], out_channels, oy, ox};
}

OperatorId conv2d(GraphBuilder& b, Operator op, TensorId input, TensorId weight, std::optional<TensorId> bias,
                  TensorId output, const Conv2dSpec& s) {
  const Shape& in = b.tensor(input).shape;
  const Shape& out = b.tensor(output).shape;
  const Shape& w = b.tensor(weight).shape;
  const std::int64_t G = s.groups;
  const std::int64_t K = out.at(1) / G;
  const std::int64_t C = in.at(1) / G;
  const Shape expected_w{out[1], C, s.kernel[0], s.kernel[1]};
  if (w != expected_w) {
    fail(op.origin, op.name, "weight shape " + to_string(w) + " does not match " + to_string(expected_w));
  }
  op.kind = OpKind::conv;
  if (op.type.empty()) op.type = "Conv";
  const int dB = add_dim(op, "B", out[0]);
  const int dG = G > 1 ? add_dim(op, "G", G) : -1;
  const int dK = add_dim(op, "K", K);
  const int dC = add_dim(op, "C", C);
  const int dOY = add_dim(op, "OY", out[2]);
  const int dOX = add_dim(op, "OX", out[3]);
  const int dFY = add_dim(op, "FY", s.kernel[0]);
  const int dFX = add_dim(op, "FX", s.kernel[1]);
  auto channel = [&](int d, std::int64_t per_group) {
    return dG >= 0 ? linear2(dG, per_group, d, 1, 0) : dim(d);
  };
  op.operands.push_back(operand(b, output, OperandSlot::O, {dim(dB), channel(dK, K), dim(dOY), dim(dOX)}));
  op.operands.push_back(operand(b, input, OperandSlot::I1,
                                {dim(dB), channel(dC, C), linear2(dOY, s.stride[0], dFY, s.dilation[0], -s.pads[0]),
                                 linear2(dOX, s.stride[1], dFX, s.dilation[1], -s.pads[1])}));
  op.operands.push_back(operand(b, weight, OperandSlot::I2, {channel(dK, K), dim(dC), dim(dFY), dim(dFX)}));
  if (bias) {
    if (b.tensor(*bias).shape != Shape{out[1]}) {
      fail(op.origin, op.name, "bias shape " + to_string(b.tensor(*bias).shape) + " should be [" +
                                   std::to_string(out[1]) + "]");
    }
    op.operands.push_back(operand(b, *bias, OperandSlot::I2, {channel(dK, K)}));
  }
  op.attributes["kernel_shape"] = {s.kernel[0], s.kernel[1]};
  op.attributes["strides"] = {s.stride[0], s.stride[1]};
  op.attributes["dilations"] = {s.dilation[0], s.dilation[1]};
  op.attributes["pads"] = {s.pads[0], s.pads[1], s.pads[2], s.pads[3]};
  op.attributes["group"] = {G};
  return b.add_operator(std::move(op));
}

// ---------------------------------------------------------------------------------------------- matmul

Shape broadcast_shapes(const std::vector<Shape>& shapes, const SourceLocation& where, const std::string& name) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t axis = rank - s.size() + i;
      if (s[i] == out[axis] || s[i] == 1) continue;
      if (out[axis] == 1) {
        out[axis] = s[i];
        continue;
      }
      std::vector<std::string> txt;
      for (const Shape& x : shapes) txt.push_back(to_string(x));
      fail(where, name, "shapes " + [&] {
        std::string j;
        for (std::size_t k = 0; k < txt.size(); ++k) j += (k ? " and " : "") + txt[k];
        return j;
      }() + " cannot be broadcast together");
    }
  }
  return out;
}

Shape matmul_output_shape(const Shape& a, const Shape& bm, const MatmulSpec& s, const SourceLocation& where,
                          const std::string& name) {
  if (a.size() < 2 || bm.size() < 2) {
    fail(where, name, "matrix product needs operands of rank >= 2, got " + to_string(a) + " and " + to_string(bm));
  }
  const std::int64_t D = s.transpose_a ? a[a.size() - 1] : a[a.size() - 2];
  const std::int64_t Ca = s.transpose_a ? a[a.size() - 2] : a[a.size() - 1];
  const std::int64_t Cb = s.transpose_b ? bm[bm.size() - 1] : bm[bm.size() - 2];
  const std::int64_t K = s.transpose_b ? bm[bm.size() - 2] : bm[bm.size() - 1];
  if (Ca != Cb) {
    fail(where, name, "inner dimensions differ: " + to_string(a) + " x " + to_string(bm) + " (" +
                          std::to_string(Ca) + " vs " + std::to_string(Cb) + ")");
  }
  Shape batch = broadcast_shapes({Shape(a.begin(), a.end() - 2), Shape(bm.begin(), bm.end() - 2)}, where, name);
  batch.push_back(D);
  batch.push_back(K);
  return batch;
}

OperatorId matmul(GraphBuilder& b, Operator op, TensorId ta, TensorId tb, std::optional<TensorId> bias,
                  TensorId output, const MatmulSpec& s) {
  const Shape a = b.tensor(ta).shape;
  const Shape bm = b.tensor(tb).shape;
  const Shape out = b.tensor(output).shape;
  const Shape expected = matmul_output_shape(a, bm, s, op.origin, op.name);
  if (out != expected) fail(op.origin, op.name, "output shape " + to_string(out) + " should be " + to_string(expected));
  if (op.type.empty()) op.type = op.kind == OpKind::gemm ? "Gemm" : "MatMul";
  const std::size_t nbatch = out.size() - 2;
  std::vector<int> batch_dims;
  const auto names = axis_dim_names(out.size() + 0);  // reuse batch names; D K are renamed below
  for (std::size_t i = 0; i < nbatch; ++i) {
    std::string n = nbatch == 1 ? "B" : (i == nbatch - 1 ? "H" : (i == 0 ? "B" : "B" + std::to_string(i)));
    batch_dims.push_back(add_dim(op, n, out[i]));
  }
  const int dD = add_dim(op, "D", out[nbatch]);
  const int dK = add_dim(op, "K", out[nbatch + 1]);
  const int dC = add_dim(op, "C", s.transpose_a ? a[a.size() - 2] : a[a.size() - 1]);
  auto batch_access = [&](const Shape& sh) {
    std::vector<AffineExpr> acc;
    const std::size_t nb = sh.size() - 2;
    for (std::size_t i = 0; i < nb; ++i) {
      const std::size_t out_axis = nbatch - nb + i;
      acc.push_back(sh[i] == 1 && out[out_axis] != 1 ? AffineExpr::constant(0) : dim(batch_dims[out_axis]));
    }
    return acc;
  };
  std::vector<AffineExpr> acc_o = batch_access(out);
  acc_o.push_back(dim(dD));
  acc_o.push_back(dim(dK));
  std::vector<AffineExpr> acc_a = batch_access(a);
  if (s.transpose_a) {
    acc_a.push_back(dim(dC));
    acc_a.push_back(dim(dD));
  } else {
    acc_a.push_back(dim(dD));
    acc_a.push_back(dim(dC));
  }
  std::vector<AffineExpr> acc_b = batch_access(bm);
  if (s.transpose_b) {
    acc_b.push_back(dim(dK));
    acc_b.push_back(dim(dC));
  } else {
    acc_b.push_back(dim(dC));
    acc_b.push_back(dim(dK));
  }
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  op.operands.push_back(operand(b, ta, OperandSlot::I1, std::move(acc_a)));
  op.operands.push_back(operand(b, tb, OperandSlot::I2, std::move(acc_b)));
  if (bias) {
    const Shape& bs = b.tensor(*bias).shape;
    if (bs.empty() || bs.size() > out.size() || bs.back() != out.back() ||
        element_count(bs) != out.back()) {
      fail(op.origin, op.name, "bias shape " + to_string(bs) + " should be [" + std::to_string(out.back()) + "]");
    }
    std::vector<AffineExpr> acc(bs.size() - 1, AffineExpr::constant(0));
    acc.push_back(dim(dK));
    op.operands.push_back(operand(b, *bias, OperandSlot::I2, std::move(acc)));
  }
  op.attributes["transA"] = {s.transpose_a ? 1 : 0};
  op.attributes["transB"] = {s.transpose_b ? 1 : 0};
  (void)names;
  return b.add_operator(std::move(op));
}

// ----------------------------------------------------------------------------------------- elementwise

OperatorId elementwise(GraphBuilder& b, Operator op, const std::vector<TensorId>& inputs, TensorId output,
                       double ops_per_element) {
  const Shape out = b.tensor(output).shape;
  std::vector<Shape> in_shapes;
  for (TensorId t : inputs) in_shapes.push_back(b.tensor(t).shape);
  const Shape expected = broadcast_shapes(in_shapes, op.origin, op.name);
  if (!inputs.empty() && expected != out) {
    fail(op.origin, op.name, "output shape " + to_string(out) + " should be " + to_string(expected));
  }
  op.kind = op.kind == OpKind::view ? OpKind::elementwise : op.kind;
  op.ops_per_iteration = ops_per_element;
  const auto names = axis_dim_names(out.size());
  std::vector<int> dims;
  for (std::size_t i = 0; i < out.size(); ++i) dims.push_back(add_dim(op, names[i], out[i]));
  std::vector<AffineExpr> acc_o;
  for (int d : dims) acc_o.push_back(dim(d));
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = in_shapes[k];
    std::vector<AffineExpr> acc;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t axis = out.size() - s.size() + i;
      acc.push_back(s[i] == 1 && out[axis] != 1 ? AffineExpr::constant(0) : dim(dims[axis]));
    }
    op.operands.push_back(operand(b, inputs[k], k == 0 ? OperandSlot::I1 : OperandSlot::I2, std::move(acc)));
  }
  return b.add_operator(std::move(op));
}

// ------------------------------------------------------------------------------------------------- pool

Shape pool2d_output_shape(const Shape& in, const Pool2dSpec& s, const SourceLocation& where, const std::string& name) {
  if (in.size() != 4) fail(where, name, "2-D pooling needs an NCHW input, got shape " + to_string(in));
  for (int i = 0; i < 2; ++i) {
    if (s.kernel[i] <= 0 || s.stride[i] <= 0 || s.dilation[i] <= 0) {
      fail(where, name, "kernel, stride and dilation must be positive");
    }
  }
  const std::int64_t oy = window_out(in[2], s.pads[0] + s.pads[2], s.dilation[0], s.kernel[0], s.stride[0], s.ceil_mode);
  const std::int64_t ox = window_out(in[3], s.pads[1] + s.pads[3], s.dilation[1], s.kernel[1], s.stride[1], s.ceil_mode);
  if (oy <= 0 || ox <= 0) fail(where, name, "the pooling window does not fit the input " + to_string(in));
  return Shape{in[0], in[1], oy, ox};
}

OperatorId pool2d(GraphBuilder& b, Operator op, TensorId input, TensorId output, const Pool2dSpec& s) {
  const Shape out = b.tensor(output).shape;
  op.kind = OpKind::pooling;
  const int dB = add_dim(op, "B", out.at(0));
  const int dK = add_dim(op, "K", out.at(1));
  const int dOY = add_dim(op, "OY", out.at(2));
  const int dOX = add_dim(op, "OX", out.at(3));
  const int dFY = add_dim(op, "FY", s.kernel[0]);
  const int dFX = add_dim(op, "FX", s.kernel[1]);
  op.operands.push_back(operand(b, output, OperandSlot::O, {dim(dB), dim(dK), dim(dOY), dim(dOX)}));
  op.operands.push_back(operand(b, input, OperandSlot::I1,
                                {dim(dB), dim(dK), linear2(dOY, s.stride[0], dFY, s.dilation[0], -s.pads[0]),
                                 linear2(dOX, s.stride[1], dFX, s.dilation[1], -s.pads[1])}));
  op.attributes["kernel_shape"] = {s.kernel[0], s.kernel[1]};
  op.attributes["strides"] = {s.stride[0], s.stride[1]};
  op.attributes["pads"] = {s.pads[0], s.pads[1], s.pads[2], s.pads[3]};
  return b.add_operator(std::move(op));
}

// ------------------------------------------------------------------------------- norms, softmax, lookup

namespace {
/// An operand reading a tensor whose shape is the trailing part of the output's (or broadcast to it).
std::vector<AffineExpr> trailing_access(const Shape& operand, const Shape& out, const std::vector<int>& dims) {
  std::vector<AffineExpr> acc;
  for (std::size_t i = 0; i < operand.size(); ++i) {
    const std::size_t axis = out.size() - operand.size() + i;
    acc.push_back(operand[i] == 1 && out[axis] != 1 ? AffineExpr::constant(0) : dim(dims[axis]));
  }
  return acc;
}
std::vector<int> axis_dims(Operator& op, const Shape& out) {
  const auto names = axis_dim_names(out.size());
  std::vector<int> dims;
  for (std::size_t i = 0; i < out.size(); ++i) dims.push_back(add_dim(op, names[i], out[i]));
  return dims;
}
std::vector<AffineExpr> all_of(const std::vector<int>& dims) {
  std::vector<AffineExpr> acc;
  for (int d : dims) acc.push_back(dim(d));
  return acc;
}
}  // namespace

OperatorId batch_norm(GraphBuilder& b, Operator op, TensorId x, TensorId scale, TensorId bias,
                      std::optional<TensorId> mean, std::optional<TensorId> var, TensorId output, bool training) {
  const Shape out = b.tensor(output).shape;
  if (out.size() < 2 || b.tensor(x).shape != out) {
    fail(op.origin, op.name, "batch normalization needs an [N, C, ...] input and an output of the same shape");
  }
  for (std::optional<TensorId> t : {std::optional<TensorId>(scale), std::optional<TensorId>(bias), mean, var}) {
    if (t && b.tensor(*t).shape != Shape{out[1]}) {
      fail(op.origin, op.name, "'" + b.tensor(*t).name + "' should have shape [" + std::to_string(out[1]) + "]");
    }
  }
  op.kind = OpKind::norm;
  if (op.type.empty()) op.type = "BatchNormalization";
  op.ops_per_iteration = training ? kBatchNormTrainingOps : kBatchNormInferenceOps;
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  for (std::optional<TensorId> t : {std::optional<TensorId>(scale), std::optional<TensorId>(bias), mean, var}) {
    if (t) op.operands.push_back(operand(b, *t, OperandSlot::I2, {dim(dims[1])}));
  }
  op.attributes["training_mode"] = {training ? 1 : 0};
  return b.add_operator(std::move(op));
}

OperatorId layer_norm(GraphBuilder& b, Operator op, TensorId x, std::optional<TensorId> scale,
                      std::optional<TensorId> bias, TensorId output, std::size_t axis) {
  const Shape out = b.tensor(output).shape;
  if (b.tensor(x).shape != out || axis >= out.size()) {
    fail(op.origin, op.name, "layer normalization: bad axis or output shape");
  }
  const Shape normalized(out.begin() + static_cast<std::ptrdiff_t>(axis), out.end());
  op.kind = OpKind::norm;
  if (op.type.empty()) op.type = "LayerNormalization";
  op.ops_per_iteration = kLayerNormOps;
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  for (std::optional<TensorId> t : {scale, bias}) {
    if (!t) continue;
    if (b.tensor(*t).shape != normalized) {
      fail(op.origin, op.name, "'" + b.tensor(*t).name + "' should have shape " + to_string(normalized));
    }
    op.operands.push_back(operand(b, *t, OperandSlot::I2, trailing_access(normalized, out, dims)));
  }
  op.attributes["axis"] = {static_cast<std::int64_t>(axis)};
  return b.add_operator(std::move(op));
}

OperatorId softmax(GraphBuilder& b, Operator op, TensorId x, std::optional<TensorId> mask, TensorId output,
                   std::size_t axis) {
  const Shape out = b.tensor(output).shape;
  if (b.tensor(x).shape != out || axis >= out.size()) fail(op.origin, op.name, "softmax: bad axis or output shape");
  op.kind = OpKind::softmax;
  if (op.type.empty()) op.type = "Softmax";
  op.ops_per_iteration = kSoftmaxOps + (mask ? 1 : 0);
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  if (mask) {
    const Shape& ms = b.tensor(*mask).shape;
    if (broadcast_shapes({ms, out}, op.origin, op.name) != out) {
      fail(op.origin, op.name, "mask " + to_string(ms) + " does not broadcast to " + to_string(out));
    }
    op.operands.push_back(operand(b, *mask, OperandSlot::I2, trailing_access(ms, out, dims)));
  }
  op.attributes["axis"] = {static_cast<std::int64_t>(axis)};
  return b.add_operator(std::move(op));
}

OperatorId embedding(GraphBuilder& b, Operator op, TensorId table, std::optional<TensorId> indices, TensorId output) {
  const Shape out = b.tensor(output).shape;
  const Shape& ts = b.tensor(table).shape;
  if (ts.size() != 2 || out.empty() || out.back() != ts[1]) {
    fail(op.origin, op.name, "embedding: table " + to_string(ts) + " and output " + to_string(out) + " disagree");
  }
  op.kind = OpKind::embedding;
  if (op.type.empty()) op.type = "Gather";
  op.ops_per_iteration = 0;
  const std::vector<int> dims = axis_dims(op, out);
  const int lookup = out.size() >= 2 ? dims[dims.size() - 2] : -1;
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  Operand tab = operand(b, table, OperandSlot::I2,
                        {lookup >= 0 ? dim(lookup) : AffineExpr::constant(0), dim(dims.back())});
  if (indices) {
    const Shape& is = b.tensor(*indices).shape;
    if (Shape(out.begin(), out.end() - 1) != is) {
      fail(op.origin, op.name, "embedding: indices " + to_string(is) + " do not match output " + to_string(out));
    }
    std::vector<AffineExpr> acc(dims.size() - 1);
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) acc[i] = dim(dims[i]);
    op.operands.push_back(operand(b, *indices, OperandSlot::I1, std::move(acc)));
    tab.indirect = true;
  } else if (lookup < 0 || out[out.size() - 2] > ts[0]) {
    fail(op.origin, op.name, "embedding: more positions than table rows");
  }
  op.operands.push_back(std::move(tab));
  return b.add_operator(std::move(op));
}

// ------------------------------------------------------------------------------------------------- view

OperatorId view(GraphBuilder& b, Operator op, TensorId input, TensorId output) {
  if (b.tensor(input).elements() != b.tensor(output).elements()) {
    fail(op.origin, op.name, "a view cannot change the element count: " + to_string(b.tensor(input).shape) + " -> " +
                                 to_string(b.tensor(output).shape));
  }
  op.kind = OpKind::view;
  op.ops_per_iteration = 0;
  op.operands.push_back(operand(b, output, OperandSlot::O, {}));
  op.operands.push_back(operand(b, input, OperandSlot::I1, {}));
  return b.add_operator(std::move(op));
}

}  // namespace monet::ops
