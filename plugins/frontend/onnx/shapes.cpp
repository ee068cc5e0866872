// Output shapes of the data-movement operators (Reshape, Transpose, Slice, Split, Concat, Gather, ...).
#include "conversion.hpp"

#include <algorithm>
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
    const auto a = static_cast<std::size_t>(normalize_axis(axes[k], rank));
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
  if (op == "Identity") return {x};
  if (op == "Flatten") {
    const auto axis = normalize_axis(attr_int(n, "axis").value_or(1), rank);
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
    for (auto p : perm) s.push_back(x.at(static_cast<std::size_t>(p)));
    return {s};
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    std::vector<std::int64_t> axes;
    if (in.size() > 1 && in[1] >= 0) axes = const_ints(i, in[1], "axes");
    else if (auto a = attr_ints(n, "axes")) axes = *a;
    if (op == "Squeeze") {
      Shape s;
      std::set<std::int64_t> drop;
      for (auto a : axes) drop.insert(normalize_axis(a, rank));
      for (std::size_t a = 0; a < rank; ++a) {
        const bool squeeze = axes.empty() ? x[a] == 1 : drop.contains(static_cast<std::int64_t>(a));
        if (!squeeze) s.push_back(x[a]);
      }
      return {s};
    }
    const std::size_t out_rank = rank + axes.size();
    std::set<std::int64_t> add;
    for (auto a : axes) add.insert(normalize_axis(a, out_rank));
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
    const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
    Shape s = x;
    s[axis] = 0;
    for (int v : in) s[axis] += value(v).shape.at(axis);
    return {s};
  }
  if (op == "Split") {
    const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
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
    const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
    const Shape& idx = value(in[1]).shape;
    Shape s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
    s.insert(s.end(), idx.begin(), idx.end());
    s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end());
    return {s};
  }
  fail(i, "no shape rule");
}

}  // namespace monet::onnx_frontend
