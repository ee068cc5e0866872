// Sliding-window operators: convolutions (1-, 2-, 3-D, grouped, transposed) and pooling.
#include <algorithm>

#include "monet/ir/ops.hpp"
#include "ops_detail.hpp"

namespace monet::ops {

using detail::add_dim;
using detail::dim;
using detail::fail;
using detail::linear2;
using detail::window_out;

namespace {

std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

/// Window parameters of every spatial axis, defaults filled in and checked.
struct Window {
  std::vector<std::int64_t> kernel, stride, dilation, begin, end;
};
Window window_of(std::size_t axes, const std::vector<std::int64_t>& kernel, const std::vector<std::int64_t>& stride,
                 const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& pads,
                 const SourceLocation& where, const std::string& name) {
  if (kernel.size() != axes) {
    fail(where, name, "the kernel has " + std::to_string(kernel.size()) + " axes for " + std::to_string(axes) +
                          " spatial axes of the input");
  }
  if ((!stride.empty() && stride.size() != axes) || (!dilation.empty() && dilation.size() != axes) ||
      (!pads.empty() && pads.size() != 2 * axes)) {
    fail(where, name, "strides, dilations and pads must give every spatial axis (pads: begins, then ends)");
  }
  Window w;
  for (std::size_t a = 0; a < axes; ++a) {
    w.kernel.push_back(kernel[a]);
    w.stride.push_back(at_or(stride, a, 1));
    w.dilation.push_back(at_or(dilation, a, 1));
    w.begin.push_back(at_or(pads, a, 0));
    w.end.push_back(at_or(pads, axes + a, 0));
    if (w.kernel[a] <= 0 || w.stride[a] <= 0 || w.dilation[a] <= 0) {
      fail(where, name, "kernel, stride and dilation must be positive");
    }
  }
  return w;
}

std::size_t spatial_axes(const Shape& in, const SourceLocation& where, const std::string& name, const char* what) {
  if (in.size() < 3 || in.size() > 5) {
    fail(where, name, std::string(what) + " needs an input [N, C, L], [N, C, H, W] or [N, C, D, H, W], got " +
                          to_string(in));
  }
  return in.size() - 2;
}

void window_attributes(Operator& op, const Window& w, std::int64_t groups) {
  op.attributes["kernel_shape"] = w.kernel;
  op.attributes["strides"] = w.stride;
  op.attributes["dilations"] = w.dilation;
  std::vector<std::int64_t> pads = w.begin;
  pads.insert(pads.end(), w.end.begin(), w.end.end());
  op.attributes["pads"] = pads;
  if (groups > 0) op.attributes["group"] = {groups};
}

}  // namespace

std::vector<std::string> spatial_dim_names(std::size_t axes, char prefix) {
  static const char* const kAxis[] = {"Z", "Y", "X"};
  std::vector<std::string> names;
  for (std::size_t a = 3 - std::min<std::size_t>(axes, 3); a < 3; ++a) names.push_back(std::string(1, prefix) + kAxis[a]);
  return names;
}

// ------------------------------------------------------------------------------------------------ conv

Shape conv_output_shape(const Shape& in, std::int64_t out_channels, const ConvSpec& s, const SourceLocation& where,
                        const std::string& name) {
  const std::size_t axes = spatial_axes(in, where, name, "a convolution");
  if (s.groups <= 0 || in[1] % s.groups != 0 || out_channels % s.groups != 0) {
    fail(where, name, "groups = " + std::to_string(s.groups) + " must divide input channels (" +
                          std::to_string(in[1]) + ") and output channels (" + std::to_string(out_channels) + ")");
  }
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, where, name);
  Shape out{in[0], out_channels};
  for (std::size_t a = 0; a < axes; ++a) {
    const std::int64_t o = window_out(in[2 + a], w.begin[a] + w.end[a], w.dilation[a], w.kernel[a], w.stride[a], false);
    if (o <= 0) {
      std::string k;
      for (std::size_t j = 0; j < axes; ++j) k += (j ? "x" : "") + std::to_string(w.kernel[j]);
      fail(where, name, "the " + k + " window does not fit the input " + to_string(in) + " with the given padding");
    }
    out.push_back(o);
  }
  return out;
}

namespace {
/// The loop nest of a convolution, plain (gather: the input read at s·o + d·f − p) or transposed (scatter: the
/// output written at s·i + d·f − p). Loop dims B, (G), K, C, the iterated positions (output or input), the taps.
OperatorId conv_nest(GraphBuilder& b, Operator op, TensorId input, TensorId weight, std::optional<TensorId> bias,
                     TensorId output, const Window& w, std::int64_t G, bool transposed) {
  const Shape& in = b.tensor(input).shape;
  const Shape& out = b.tensor(output).shape;
  const std::size_t axes = in.size() - 2;
  const std::int64_t K = out.at(1) / G;
  const std::int64_t C = in.at(1) / G;
  Shape expected_w = transposed ? Shape{in[1], K} : Shape{out[1], C};
  expected_w.insert(expected_w.end(), w.kernel.begin(), w.kernel.end());
  if (b.tensor(weight).shape != expected_w) {
    fail(op.origin, op.name, "weight shape " + to_string(b.tensor(weight).shape) + " does not match " +
                                 to_string(expected_w));
  }
  op.kind = OpKind::conv;
  if (op.type.empty()) op.type = transposed ? "ConvTranspose" : "Conv";
  const Shape& iterated = transposed ? in : out;  // the positions the loop runs over
  const auto p_names = spatial_dim_names(axes, transposed ? 'I' : 'O');
  const auto f_names = spatial_dim_names(axes, 'F');
  const int dB = add_dim(op, "B", out[0]);
  const int dG = G > 1 ? add_dim(op, "G", G) : -1;
  const int dK = add_dim(op, "K", K);
  const int dC = add_dim(op, "C", C);
  std::vector<int> dP, dF;
  for (std::size_t a = 0; a < axes; ++a) dP.push_back(add_dim(op, p_names[a], iterated[2 + a]));
  for (std::size_t a = 0; a < axes; ++a) dF.push_back(add_dim(op, f_names[a], w.kernel[a]));
  auto channel = [&](int d, std::int64_t per_group) { return dG >= 0 ? linear2(dG, per_group, d, 1, 0) : dim(d); };
  std::vector<AffineExpr> acc_o{dim(dB), channel(dK, K)};
  std::vector<AffineExpr> acc_i{dim(dB), channel(dC, C)};
  std::vector<AffineExpr> acc_w = transposed ? std::vector{channel(dC, C), dim(dK)} : std::vector{channel(dK, K), dim(dC)};
  for (std::size_t a = 0; a < axes; ++a) {
    const AffineExpr window = linear2(dP[a], w.stride[a], dF[a], w.dilation[a], -w.begin[a]);
    acc_o.push_back(transposed ? window : dim(dP[a]));
    acc_i.push_back(transposed ? dim(dP[a]) : window);
    acc_w.push_back(dim(dF[a]));
  }
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  op.operands.push_back(operand(b, input, OperandSlot::I1, std::move(acc_i)));
  op.operands.push_back(operand(b, weight, OperandSlot::I2, std::move(acc_w)));
  if (bias) {
    if (b.tensor(*bias).shape != Shape{out[1]}) {
      fail(op.origin, op.name, "bias shape " + to_string(b.tensor(*bias).shape) + " should be [" +
                                   std::to_string(out[1]) + "]");
    }
    op.operands.push_back(operand(b, *bias, OperandSlot::I2, {channel(dK, K)}));
  }
  window_attributes(op, w, G);
  return b.add_operator(std::move(op));
}
}  // namespace

OperatorId conv(GraphBuilder& b, Operator op, TensorId input, TensorId weight, std::optional<TensorId> bias,
                TensorId output, const ConvSpec& s) {
  const std::size_t axes = spatial_axes(b.tensor(input).shape, op.origin, op.name, "a convolution");
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, op.origin, op.name);
  return conv_nest(b, std::move(op), input, weight, bias, output, w, s.groups, false);
}

Shape conv_transpose_output_shape(const Shape& in, std::int64_t out_channels, const ConvSpec& s,
                                  const SourceLocation& where, const std::string& name) {
  const std::size_t axes = spatial_axes(in, where, name, "a transposed convolution");
  if (s.groups <= 0 || in[1] % s.groups != 0) {
    fail(where, name, "groups = " + std::to_string(s.groups) + " must divide input channels (" +
                          std::to_string(in[1]) + ")");
  }
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, where, name);
  if (!s.output_padding.empty() && s.output_padding.size() != axes) {
    fail(where, name, "output_padding must give every spatial axis");
  }
  Shape out{in[0], out_channels};
  for (std::size_t a = 0; a < axes; ++a) {
    const std::int64_t o = (in[2 + a] - 1) * w.stride[a] - w.begin[a] - w.end[a] + w.dilation[a] * (w.kernel[a] - 1) +
                           at_or(s.output_padding, a, 0) + 1;
    if (o <= 0) fail(where, name, "the transposed convolution of " + to_string(in) + " has no output positions");
    out.push_back(o);
  }
  return out;
}

OperatorId conv_transpose(GraphBuilder& b, Operator op, TensorId input, TensorId weight, std::optional<TensorId> bias,
                          TensorId output, const ConvSpec& s) {
  const std::size_t axes = spatial_axes(b.tensor(input).shape, op.origin, op.name, "a transposed convolution");
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, op.origin, op.name);
  op.attributes["transposed"] = {1};
  if (!s.output_padding.empty()) op.attributes["output_padding"] = s.output_padding;
  return conv_nest(b, std::move(op), input, weight, bias, output, w, s.groups, true);
}

namespace {
ConvSpec nd(const Conv2dSpec& s) {
  return ConvSpec{{s.kernel[0], s.kernel[1]},
                  {s.stride[0], s.stride[1]},
                  {s.dilation[0], s.dilation[1]},
                  {s.pads[0], s.pads[1], s.pads[2], s.pads[3]},
                  s.groups,
                  {}};
}
PoolSpec nd(const Pool2dSpec& s) {
  return PoolSpec{{s.kernel[0], s.kernel[1]},
                  {s.stride[0], s.stride[1]},
                  {s.dilation[0], s.dilation[1]},
                  {s.pads[0], s.pads[1], s.pads[2], s.pads[3]},
                  s.ceil_mode};
}
}  // namespace

Shape conv2d_output_shape(const Shape& in, std::int64_t out_channels, const Conv2dSpec& s, const SourceLocation& where,
                          const std::string& name) {
  if (in.size() != 4) fail(where, name, "a 2-D convolution needs an NCHW input, got shape " + to_string(in));
  return conv_output_shape(in, out_channels, nd(s), where, name);
}

OperatorId conv2d(GraphBuilder& b, Operator op, TensorId input, TensorId weight, std::optional<TensorId> bias,
                  TensorId output, const Conv2dSpec& s) {
  return conv(b, std::move(op), input, weight, bias, output, nd(s));
}

// ------------------------------------------------------------------------------------------------- pool

Shape pool_output_shape(const Shape& in, const PoolSpec& s, const SourceLocation& where, const std::string& name) {
  const std::size_t axes = spatial_axes(in, where, name, "pooling");
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, where, name);
  Shape out{in[0], in[1]};
  for (std::size_t a = 0; a < axes; ++a) {
    const std::int64_t o =
        window_out(in[2 + a], w.begin[a] + w.end[a], w.dilation[a], w.kernel[a], w.stride[a], s.ceil_mode);
    if (o <= 0) fail(where, name, "the pooling window does not fit the input " + to_string(in));
    out.push_back(o);
  }
  return out;
}

OperatorId pool(GraphBuilder& b, Operator op, TensorId input, TensorId output, const PoolSpec& s) {
  const Shape out = b.tensor(output).shape;
  const std::size_t axes = spatial_axes(b.tensor(input).shape, op.origin, op.name, "pooling");
  const Window w = window_of(axes, s.kernel, s.stride, s.dilation, s.pads, op.origin, op.name);
  op.kind = OpKind::pooling;
  const auto o_names = spatial_dim_names(axes, 'O');
  const auto f_names = spatial_dim_names(axes, 'F');
  const int dB = add_dim(op, "B", out.at(0));
  const int dK = add_dim(op, "K", out.at(1));
  std::vector<int> dO, dF;
  for (std::size_t a = 0; a < axes; ++a) dO.push_back(add_dim(op, o_names[a], out.at(2 + a)));
  for (std::size_t a = 0; a < axes; ++a) dF.push_back(add_dim(op, f_names[a], w.kernel[a]));
  std::vector<AffineExpr> acc_o{dim(dB), dim(dK)};
  std::vector<AffineExpr> acc_i{dim(dB), dim(dK)};
  for (std::size_t a = 0; a < axes; ++a) {
    acc_o.push_back(dim(dO[a]));
    acc_i.push_back(linear2(dO[a], w.stride[a], dF[a], w.dilation[a], -w.begin[a]));
  }
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  op.operands.push_back(operand(b, input, OperandSlot::I1, std::move(acc_i)));
  window_attributes(op, w, 0);
  op.attributes.erase("dilations");  // as before: pooling records kernel, strides and pads
  if (std::any_of(w.dilation.begin(), w.dilation.end(), [](std::int64_t d) { return d != 1; })) {
    op.attributes["dilations"] = w.dilation;
  }
  return b.add_operator(std::move(op));
}

Shape pool2d_output_shape(const Shape& in, const Pool2dSpec& s, const SourceLocation& where, const std::string& name) {
  if (in.size() != 4) fail(where, name, "2-D pooling needs an NCHW input, got shape " + to_string(in));
  return pool_output_shape(in, nd(s), where, name);
}

OperatorId pool2d(GraphBuilder& b, Operator op, TensorId input, TensorId output, const Pool2dSpec& s) {
  return pool(b, std::move(op), input, output, nd(s));
}

}  // namespace monet::ops
