#pragma once
// Helpers shared by the operator constructors (ops*.cpp): loop dims, access expressions, window sizes.
#include <string>
#include <vector>

#include "monet/ir/ops.hpp"

namespace monet::ops::detail {

[[noreturn]] inline void fail(const SourceLocation& where, const std::string& name, const std::string& message) {
  throw UserError(where, "operator '" + name + "': " + message);
}

inline int add_dim(Operator& op, std::string name, std::int64_t size) {
  op.dims.push_back(LoopDim{std::move(name), size});
  return static_cast<int>(op.dims.size()) - 1;
}

inline AffineExpr dim(int d) { return AffineExpr::of_dim(d); }

inline AffineExpr linear2(int a, std::int64_t ca, int b, std::int64_t cb, std::int64_t offset) {
  AffineExpr e;
  e.terms = {{a, ca}, {b, cb}};
  e.offset = offset;
  return e;
}

/// Output positions of a sliding window (0 when it does not fit).
inline std::int64_t window_out(std::int64_t in, std::int64_t pad_sum, std::int64_t dilation, std::int64_t kernel,
                               std::int64_t stride, bool ceil_mode) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t avail = in + pad_sum - span;
  if (avail < 0) return 0;
  return (ceil_mode ? (avail + stride - 1) / stride : avail / stride) + 1;
}

/// One loop dim per axis of `out`, named by rank (axis_dim_names).
inline std::vector<int> axis_dims(Operator& op, const Shape& out) {
  const auto names = axis_dim_names(out.size());
  std::vector<int> dims;
  for (std::size_t i = 0; i < out.size(); ++i) dims.push_back(add_dim(op, names[i], out[i]));
  return dims;
}

inline std::vector<AffineExpr> all_of(const std::vector<int>& dims) {
  std::vector<AffineExpr> acc;
  for (int d : dims) acc.push_back(dim(d));
  return acc;
}

/// An operand reading a tensor whose shape is the trailing part of the output's (or broadcast to it).
inline std::vector<AffineExpr> trailing_access(const Shape& operand, const Shape& out, const std::vector<int>& dims) {
  std::vector<AffineExpr> acc;
  for (std::size_t i = 0; i < operand.size(); ++i) {
    const std::size_t axis = out.size() - operand.size() + i;
    acc.push_back(operand[i] == 1 && out[axis] != 1 ? AffineExpr::constant(0) : dim(dims[axis]));
  }
  return acc;
}

}  // namespace monet::ops::detail
