#include "monet/ir/view.hpp"

#include <algorithm>
#include <string>

namespace monet {
namespace {

std::vector<Range> whole(const Shape& s) {
  std::vector<Range> r;
  for (std::int64_t d : s) r.push_back(Range{0, d});
  return r;
}

std::int64_t attr(const Operator& op, const char* key, std::size_t i, std::int64_t fallback) {
  auto it = op.attributes.find(key);
  return it != op.attributes.end() && i < it->second.size() ? it->second[i] : fallback;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

/// Bounding box in shape `to` of the elements of box `box` in shape `from`, the two shapes holding the same
/// elements in the same row-major order. Axes are matched in groups with equal products, each group mapped
/// through its linear index range.
std::vector<Range> reshape_region(const Shape& from, std::span<const Range> box, const Shape& to) {
  std::vector<Range> out(to.size(), Range{0, 0});
  for (const Range& r : box) {
    if (r.empty()) return out;
  }
  std::size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    // One group: axes [i, i2) of `from` and [j, j2) of `to` whose sizes multiply to the same number.
    std::size_t i2 = i, j2 = j;
    std::int64_t pf = i2 < from.size() ? from[i2++] : 1;
    std::int64_t pt = j2 < to.size() ? to[j2++] : 1;
    while (pf != pt) {
      if ((pf < pt && i2 < from.size()) || j2 >= to.size()) {
        if (i2 >= from.size()) return whole(to);  // not the same element count: give up exactness
        pf *= from[i2++];
      } else {
        pt *= to[j2++];
      }
    }
    // The group's linear index range, then its bounding box in `to`: exact down to the first axis where the
    // first and last element differ, whole below it.
    std::int64_t lo = 0, hi = 0;
    for (std::size_t a = i; a < i2; ++a) {
      lo = lo * from[a] + box[a].begin;
      hi = hi * from[a] + box[a].end - 1;
    }
    std::vector<std::int64_t> a_lo(j2 - j), a_hi(j2 - j);
    for (std::size_t b = j2; b-- > j;) {
      a_lo[b - j] = lo % to[b];
      a_hi[b - j] = hi % to[b];
      lo /= to[b];
      hi /= to[b];
    }
    bool split = false;
    for (std::size_t b = j; b < j2; ++b) {
      out[b] = split ? Range{0, to[b]} : Range{a_lo[b - j], a_hi[b - j] + 1};
      split = split || a_lo[b - j] != a_hi[b - j];
    }
    i = i2;
    j = j2;
  }
  return out;
}

}  // namespace

std::vector<Range> view_input_region(const Graph& graph, const Operator& view, std::size_t operand,
                                     std::span<const Range> out) {
  const Tensor& in_t = graph.tensor(view.operands.at(operand).tensor);
  const Shape& in = in_t.shape;
  const Tensor* out_t = nullptr;
  std::size_t part = 0;  // index of `operand` among the inputs
  for (std::size_t k = 0; k < view.operands.size(); ++k) {
    if (view.operands[k].is_output()) {
      if (!out_t) out_t = &graph.tensor(view.operands[k].tensor);
    } else if (k < operand) {
      ++part;
    }
  }
  if (!out_t || out.size() != out_t->shape.size()) return whole(in);
  const Shape& os = out_t->shape;
  std::string type = view.type;
  const bool grad = type.size() > 5 && type.ends_with(".grad");
  if (grad) type.resize(type.size() - 5);

  if (type == "Reshape" || type == "Flatten" || type == "Squeeze" || type == "Unsqueeze" || type == "Identity") {
    return reshape_region(os, out, in);
  }
  if (type == "Transpose" && view.attributes.contains("perm") && in.size() == os.size()) {
    const auto& perm = view.attributes.at("perm");
    if (perm.size() != in.size()) return whole(in);
    std::vector<Range> r(in.size());
    for (std::size_t a = 0; a < in.size(); ++a) {
      const auto p = static_cast<std::size_t>(perm[a]);
      if (grad) r[a] = out[p];  // dY[a] comes from dX[perm[a]]
      else r[p] = out[a];       // Y[a] = X[perm[a]]
    }
    return r;
  }
  if (in.size() != os.size()) return whole(in);
  std::vector<Range> r(out.begin(), out.end());
  auto shift = [&](std::size_t axis, std::int64_t by) {
    r[axis] = Range{r[axis].begin + by, r[axis].end + by}.intersect(Range{0, in[axis]});
  };
  if (type == "Concat" && view.attributes.contains("axis")) {
    const auto axis = static_cast<std::size_t>(attr(view, "axis", 0, 0));
    const std::int64_t offset = attr(view, "offsets", grad ? static_cast<std::size_t>(attr(view, "part", 0, 0)) : part, 0);
    shift(axis, grad ? offset : -offset);
    return r;
  }
  if (type == "Split" && view.attributes.contains("axis")) {
    const auto axis = static_cast<std::size_t>(attr(view, "axis", 0, 0));
    const std::int64_t offset = attr(view, "offset", 0, 0);
    shift(axis, grad ? -offset : offset);
    return r;
  }
  if (type == "Slice" && view.attributes.contains("slice_start")) {
    for (std::size_t a = 0; a < in.size(); ++a) {
      const std::int64_t start = attr(view, "slice_start", a, 0);
      const std::int64_t step = attr(view, "slice_step", a, 1);
      if (out[a].empty() || step == 0) {
        r[a] = Range{0, 0};
      } else if (!grad) {  // X[start + step * y]
        const std::int64_t first = start + step * out[a].begin;
        const std::int64_t last = start + step * (out[a].end - 1);
        r[a] = Range{std::min(first, last), std::max(first, last) + 1}.intersect(Range{0, in[a]});
      } else {  // dY[y] for the y with start + step * y inside the region of dX
        const std::int64_t e1 = out[a].begin - start, e2 = out[a].end - 1 - start;
        const std::int64_t lo = step > 0 ? ceil_div(e1, step) : ceil_div(e2, step);
        const std::int64_t hi = step > 0 ? floor_div(e2, step) : floor_div(e1, step);
        r[a] = Range{lo, hi + 1}.intersect(Range{0, in[a]});
      }
    }
    return r;
  }
  if (type == "Expand") {
    for (std::size_t a = 0; a < in.size(); ++a) {
      if (!grad && in[a] == 1) r[a] = Range{0, 1};         // broadcast: every output index reads index 0
      if (grad && os[a] == 1 && in[a] != 1) r[a] = Range{0, in[a]};  // the gradient sums over the broadcast axis
    }
    return r;
  }
  return whole(in);
}

}  // namespace monet
