// Output shapes (and view strides) of the nodes that are not loop-nest layers: views, copies, reductions and
// pointwise nodes. Folding (constants) and emission (activations) share them.
#include "conversion.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

Converter::SliceParams Converter::slice_params(int i, const std::vector<int>& in) {
  const Shape x = value(in[0]).shape;
  const std::size_t rank = x.size();
  SliceParams sp;
  sp.start.assign(rank, 0);
  sp.step.assign(rank, 1);
  sp.size.assign(x.begin(), x.end());
  const auto starts = const_ints(i, in[1], "starts");
  const auto ends = const_ints(i, in[2], "ends");
  std::vector<std::int64_t> axes;
  if (in.size() > 3 && in[3] >= 0) axes = const_ints(i, in[3], "axes");
  else for (std::size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<std::int64_t>(a));
  std::vector<std::int64_t> steps(starts.size(), 1);
  if (in.size() > 4 && in[4] >= 0) steps = const_ints(i, in[4], "steps");
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const auto a = axis_of(i, axes[k], rank);
    const std::int64_t dim = x.at(a);
    const std::int64_t step = steps[k];
    if (step == 0) fail(i, "slice step 0");
    auto clampi = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    std::int64_t begin;
    std::int64_t end;
    if (step > 0) {
      begin = clampi(starts[k], 0, dim);
      end = clampi(ends[k], 0, dim);
      sp.size[a] = std::max<std::int64_t>(0, (end - begin + step - 1) / step);
    } else {
      begin = clampi(starts[k], -1, dim - 1);
      end = clampi(ends[k], -1, dim - 1);
      sp.size[a] = std::max<std::int64_t>(0, (begin - end + (-step) - 1) / (-step));
    }
    sp.start[a] = begin;
    sp.step[a] = step;
  }
  return sp;
}

std::vector<Shape> Converter::view_shapes(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  const Shape x = value(in[0]).shape;
  const std::size_t rank = x.size();
  if (op == "Identity" || op == "Dropout" || op.rfind("Reduce", 0) == 0) return {x};  // identities
  if (op == "Flatten") {
    const auto axis = attr_int(n, "axis").value_or(1) == static_cast<std::int64_t>(rank)
                          ? static_cast<std::int64_t>(rank)  // Flatten allows axis = rank
                          : static_cast<std::int64_t>(axis_of(i, attr_int(n, "axis").value_or(1), rank));
    std::int64_t outer = 1;
    std::int64_t inner = 1;
    for (std::size_t a = 0; a < rank; ++a) (static_cast<std::int64_t>(a) < axis ? outer : inner) *= x[a];
    return {{outer, inner}};
  }
  if (op == "Reshape") {
    auto target = const_ints(i, in[1], "shape");
    const bool allow_zero = attr_int(n, "allowzero").value_or(0) != 0;
    std::int64_t known = 1;
    int unknown_axis = -1;
    for (std::size_t a = 0; a < target.size(); ++a) {
      if (target[a] == 0 && !allow_zero) target[a] = a < rank ? x[a] : 1;
      if (target[a] == -1) {
        unknown_axis = static_cast<int>(a);
      } else {
        known *= target[a];
      }
    }
    const std::int64_t total = element_count(x);
    if (unknown_axis >= 0) {
      target[static_cast<std::size_t>(unknown_axis)] = known > 0 ? total / known : 0;
    } else if (known != total && original_batch_ > 0 && !target.empty() && target[0] == original_batch_ &&
               known / original_batch_ * options_.batch == total) {
      target[0] = options_.batch;  // a fixed batch in the exported shape constant
    }
    if (element_count(Shape(target.begin(), target.end())) != total) {
      fail(i, "cannot reshape " + to_string(x) + " to " + to_string(Shape(target.begin(), target.end())) +
                  (original_batch_ > 0 ? " (the batch override cannot be applied here)" : ""));
    }
    return {Shape(target.begin(), target.end())};
  }
  if (op == "Transpose") {
    std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
    if (perm.empty()) {
      for (std::size_t a = rank; a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
    }
    if (perm.size() != rank) fail(i, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    Shape s;
    for (auto p : perm) s.push_back(x[axis_of(i, p, rank)]);
    return {s};
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    std::vector<std::int64_t> axes;
    if (in.size() > 1 && in[1] >= 0) axes = const_ints(i, in[1], "axes");
    else if (auto a = attr_ints(n, "axes")) axes = *a;
    if (op == "Squeeze") {
      Shape s;
      std::set<std::int64_t> drop;
      for (auto a : axes) drop.insert(static_cast<std::int64_t>(axis_of(i, a, rank)));
      for (std::size_t a = 0; a < rank; ++a) {
        const bool squeeze = axes.empty() ? x[a] == 1 : drop.contains(static_cast<std::int64_t>(a));
        if (!squeeze) s.push_back(x[a]);
      }
      return {s};
    }
    const std::size_t out_rank = rank + axes.size();
    std::set<std::int64_t> add;
    for (auto a : axes) add.insert(static_cast<std::int64_t>(axis_of(i, a, out_rank)));
    Shape s;
    std::size_t k = 0;
    for (std::size_t a = 0; a < out_rank; ++a) s.push_back(add.contains(static_cast<std::int64_t>(a)) ? 1 : x.at(k++));
    return {s};
  }
  if (op == "Expand") {
    const auto target = const_ints(i, in[1], "shape");
    return {ops::broadcast_shapes({x, Shape(target.begin(), target.end())}, SourceLocation{file_}, node_name(i))};
  }
  if (op == "Slice") {
    const SliceParams sp = slice_params(i, in);
    Shape s = x;
    for (std::size_t a = 0; a < rank; ++a) s[a] = sp.size[a];
    return {s};
  }
  if (op == "Concat") {
    const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), rank);
    Shape s = x;
    s[axis] = 0;
    for (int v : in) {
      if (v < 0) fail(i, "a Concat input is missing");
      // Inputs of another rank or size off the axis would be read out of bounds when folded (found by fuzz_onnx).
      const Shape& part = value(v).shape;
      bool fits = part.size() == rank;
      for (std::size_t a = 0; fits && a < rank; ++a) fits = a == axis || part[a] == x[a];
      if (!fits) fail(i, "cannot concatenate " + to_string(part) + " with " + to_string(x) + " along axis " + std::to_string(axis));
      s[axis] += part[axis];
    }
    return {s};
  }
  if (op == "Split") {
    const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), rank);
    std::vector<std::int64_t> sizes;
    if (in.size() > 1 && in[1] >= 0) sizes = const_ints(i, in[1], "split");
    else if (auto a = attr_ints(n, "split")) sizes = *a;
    const int outputs = n.output_size();
    if (sizes.empty()) {
      const std::int64_t each = (x[axis] + outputs - 1) / outputs;
      for (int k = 0; k < outputs; ++k) sizes.push_back(std::min(each, x[axis] - each * k));
    }
    std::vector<Shape> out;
    for (auto sz : sizes) {
      Shape s = x;
      s[axis] = sz;
      out.push_back(s);
    }
    return out;
  }
  if (op == "Gather") {
    const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), rank);
    const Shape& idx = value(in[1]).shape;
    Shape s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
    s.insert(s.end(), idx.begin(), idx.end());
    s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end());
    return {s};
  }
  fail(i, "no shape rule");
}

namespace {
std::vector<std::int64_t> contiguous_strides(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t a = s.size(); a-- > 1;) st[a - 1] = st[a] * s[a];
  return st;
}
/// PyTorch's is_contiguous: axes of size 1 may have any stride.
bool is_contiguous(const Shape& s, const std::vector<std::int64_t>& strides) {
  if (strides.empty()) return true;
  std::int64_t expected = 1;
  for (std::size_t a = s.size(); a-- > 0;) {
    if (s[a] == 1) continue;
    if (strides[a] != expected) return false;
    expected *= s[a];
  }
  return true;
}
}  // namespace

std::vector<std::int64_t> Converter::view_strides(int i, const std::vector<int>& in, std::size_t k, const Shape& out) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  const Value& x = value(in[0]);
  const std::vector<std::int64_t> st = x.strides.empty() ? contiguous_strides(x.shape) : x.strides;
  std::vector<std::int64_t> r;
  if (op == "Transpose") {
    std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
    if (perm.empty()) {
      for (std::size_t a = x.shape.size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
    }
    for (auto p : perm) r.push_back(st.at(static_cast<std::size_t>(p)));
  } else if (op == "Slice") {
    const SliceParams sp = slice_params(i, in);
    r = st;
    for (std::size_t a = 0; a < r.size(); ++a) r[a] *= sp.step[a];
  } else if (op == "Split" || op == "Identity" || op == "Dropout" || op.rfind("Reduce", 0) == 0) {
    r = st;
  } else if (op == "Expand") {
    r.assign(out.size(), 0);  // broadcast axes: stride 0
    for (std::size_t a = 0; a < x.shape.size(); ++a) {
      const std::size_t oa = out.size() - x.shape.size() + a;
      r[oa] = x.shape[a] == out[oa] ? st[a] : 0;
    }
  } else if (op == "Squeeze" || op == "Unsqueeze" || op == "Gather") {
    // The axes of size > 1 keep their strides in order; size-1 axes take any stride.
    std::vector<std::int64_t> kept;
    for (std::size_t a = 0; a < x.shape.size(); ++a) {
      if (x.shape[a] != 1) kept.push_back(st[a]);
    }
    if (op == "Gather") {  // a selected index drops its axis
      const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), x.shape.size());
      kept.clear();
      for (std::size_t a = 0; a < x.shape.size(); ++a) {
        if (a != axis && x.shape[a] != 1) kept.push_back(st[a]);
      }
    }
    std::size_t j = 0;
    for (std::int64_t d : out) r.push_back(d == 1 || j >= kept.size() ? 1 : kept[j++]);
  } else {
    return {};  // Reshape, Flatten of contiguous data, Concat: contiguous
  }
  (void)k;
  return is_contiguous(out, r) ? std::vector<std::int64_t>{} : r;
}

bool Converter::is_contiguous_value(int v) const { return is_contiguous(value(v).shape, value(v).strides); }

Shape Converter::pointwise_shape(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  if (op == "RandomUniform" || op == "RandomNormal") {
    const auto shape = attr_ints(n, "shape");
    if (!shape) fail(i, "missing the 'shape' attribute");
    return Shape(shape->begin(), shape->end());
  }
  if (op == "RandomUniformLike" || op == "RandomNormalLike" || op == "Bernoulli" || op == "Dropout" ||
      op == "Clip" || op == "CumSum" || op == "Trilu" || op == "CastLike") {
    return value(in.at(0)).shape;
  }
  std::vector<Shape> shapes;
  for (int v : in) {
    if (v >= 0) shapes.push_back(value(v).shape);
  }
  return ops::broadcast_shapes(shapes, SourceLocation{file_}, node_name(i));
}

std::vector<int> Converter::pointwise_operands(int i, const std::vector<int>& in) {
  const std::string& op = g_.node(i).op_type();
  std::vector<int> tensors;
  // Operands after the first that only parameterise the operation: bounds, ratio and training flag, axes, the
  // diagonal, the type to cast like; the *Like random ops read only their input's shape.
  const bool first_only = op == "Clip" || op == "Dropout" || op == "CumSum" || op == "Trilu" || op == "CastLike";
  if (op == "RandomUniformLike" || op == "RandomNormalLike") return tensors;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const int v = in[k];
    if (v < 0 || (first_only && k > 0)) continue;
    if (value(v).is_scalar_constant() && in.size() > 1) continue;  // a scalar constant is part of the operation
    tensors.push_back(v);
  }
  return tensors;
}

ElementType Converter::pointwise_dtype(int i, const std::vector<int>& operands) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  if (is_boolean_op(op)) return ElementType::boolean;
  if (op == "Cast") {
    const int to = static_cast<int>(attr_int(n, "to").value_or(onnx::TensorProto::FLOAT));
    if (auto t = element_type_of(to)) return *t;
    fail(i, "cannot cast to ONNX element type " + std::to_string(to));
  }
  if (op == "CastLike") return value(find(n.input(1))).dtype;
  if (op == "RandomUniform" || op == "RandomNormal" || op == "RandomUniformLike" || op == "RandomNormalLike" ||
      op == "Bernoulli") {
    if (auto t = attr_int(n, "dtype")) return element_type_of(static_cast<int>(*t)).value_or(ElementType::fp32);
    const bool like = op != "RandomUniform" && op != "RandomNormal";
    return like ? value(find(n.input(0))).dtype : ElementType::fp32;
  }
  if (op == "Where") return value(operands.back()).dtype;
  if (operands.empty()) fail(i, "no tensor input");
  return value(operands[0]).dtype;
}

std::vector<std::size_t> Converter::reduce_axes(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::size_t rank = value(in[0]).shape.size();
  std::vector<std::int64_t> axes;
  if (n.op_type() == "ArgMax" || n.op_type() == "ArgMin") {
    axes = {attr_int(n, "axis").value_or(0)};
  } else if (in.size() > 1 && in[1] >= 0) {
    axes = const_ints(i, in[1], "axes");  // ReduceSum from opset 13, every reduction from opset 18
  } else if (auto a = attr_ints(n, "axes")) {
    axes = *a;
  }
  std::vector<std::size_t> out;
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes").value_or(0) != 0) return out;
    for (std::size_t a = 0; a < rank; ++a) out.push_back(a);
    return out;
  }
  for (auto a : axes) {
    out.push_back(axis_of(i, a, rank));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::int64_t> Converter::pad_amounts(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::size_t rank = value(in[0]).shape.size();
  std::vector<std::int64_t> pads;
  if (in.size() > 1 && in[1] >= 0) pads = const_ints(i, in[1], "pads");  // opset 11+
  else if (auto p = attr_ints(n, "pads")) pads = *p;
  std::vector<std::int64_t> axes;
  if (in.size() > 3 && in[3] >= 0) {  // opset 18: the axes the pads apply to
    for (auto a : const_ints(i, in[3], "axes")) axes.push_back(static_cast<std::int64_t>(axis_of(i, a, rank)));
  } else {
    for (std::size_t a = 0; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
  }
  if (pads.size() != 2 * axes.size()) {
    fail(i, "expected " + std::to_string(2 * axes.size()) + " pads, got " + std::to_string(pads.size()));
  }
  std::vector<std::int64_t> all(2 * rank, 0);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    all[static_cast<std::size_t>(axes[k])] = pads[k];
    all[rank + static_cast<std::size_t>(axes[k])] = pads[axes.size() + k];
  }
  return all;
}

Shape Converter::copy_shape(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  const Shape x = value(in[0]).shape;
  const std::size_t rank = x.size();
  if (op == "Pad") {
    const auto p = pad_amounts(i, in);
    Shape s = x;
    for (std::size_t a = 0; a < rank; ++a) {
      s[a] += p[a] + p[rank + a];
      if (s[a] <= 0) fail(i, "padding leaves axis " + std::to_string(a) + " of " + to_string(x) + " empty");
    }
    return s;
  }
  if (op == "Resize" || op == "Upsample") {
    // Resize: X, roi, scales, sizes (opset 11+); X, scales (opset 10 and Upsample).
    const int scales_at = op == "Upsample" || opset_ < 11 ? 1 : 2;
    std::vector<std::int64_t> axes;
    if (auto a = attr_ints(n, "axes")) {  // opset 18
      for (auto v : *a) axes.push_back(static_cast<std::int64_t>(axis_of(i, v, rank)));
    } else {
      for (std::size_t a = 0; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    }
    Shape s = x;
    const int sizes_at = 3;
    if (op == "Resize" && opset_ >= 11 && static_cast<int>(in.size()) > sizes_at && in[sizes_at] >= 0 &&
        element_count(value(in[sizes_at]).shape) > 0) {
      const auto sizes = const_ints(i, in[sizes_at], "sizes");
      if (sizes.size() != axes.size()) fail(i, "sizes has " + std::to_string(sizes.size()) + " entries");
      for (std::size_t k = 0; k < axes.size(); ++k) s[static_cast<std::size_t>(axes[k])] = sizes[k];
    } else if (static_cast<int>(in.size()) > scales_at && in[scales_at] >= 0) {
      const auto& scales = const_data(i, in[scales_at], "scales");
      if (scales.size() != axes.size()) fail(i, "scales has " + std::to_string(scales.size()) + " entries");
      for (std::size_t k = 0; k < axes.size(); ++k) {
        auto& d = s[static_cast<std::size_t>(axes[k])];
        d = static_cast<std::int64_t>(std::floor(static_cast<double>(d) * scales[k] + 1e-9));
      }
    } else if (auto sc = attr_ints(n, "scales")) {
      fail(i, "integer scales are not valid ONNX");
    } else {
      fail(i, "needs scales or sizes");
    }
    for (auto d : s) {
      if (d <= 0) fail(i, "resizing " + to_string(x) + " leaves an empty axis");
    }
    return s;
  }
  if (op == "Tile") {
    const auto reps = const_ints(i, in.at(1), "repeats");
    if (reps.size() != rank) fail(i, "repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(rank));
    Shape s = x;
    for (std::size_t a = 0; a < rank; ++a) s[a] *= reps[a];
    return s;
  }
  if (op == "ScatterND" || op == "ScatterElements") return x;
  if (op == "GatherElements") return value(in.at(1)).shape;
  if (op == "GatherND") {
    const Shape& idx = value(in.at(1)).shape;
    const auto batch = static_cast<std::size_t>(attr_int(n, "batch_dims").value_or(0));
    if (idx.empty() || batch + static_cast<std::size_t>(idx.back()) > rank) fail(i, "indices do not fit the data");
    Shape s(idx.begin(), idx.end() - 1);
    s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(batch + static_cast<std::size_t>(idx.back())), x.end());
    return s;
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    const std::int64_t b = attr_int(n, "blocksize").value_or(0);
    if (rank != 4 || b <= 0) fail(i, "needs an NCHW input and a positive blocksize");
    if (op == "DepthToSpace") return {x[0], x[1] / (b * b), x[2] * b, x[3] * b};
    return {x[0], x[1] * b * b, x[2] / b, x[3] / b};
  }
  if (op == "OneHot") {
    const std::int64_t depth = const_ints(i, in.at(1), "depth").at(0);
    Shape s = x;
    const auto axis = static_cast<std::int64_t>(axis_of(i, attr_int(n, "axis").value_or(-1), rank + 1));
    s.insert(s.begin() + axis, depth);
    return s;
  }
  if (op == "Gather") return view_shapes(i, in)[0];  // an index tensor on an activation: index_select
  fail(i, "no shape rule");
}

}  // namespace monet::onnx_frontend
