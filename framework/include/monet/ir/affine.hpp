#pragma once
// Index ranges and affine access relations of loop nests: a tensor axis is indexed by
// offset + Σ coeff·dim, e.g. the input row of a convolution  iy = s·oy + d·fy − p.
#include <cstdint>
#include <optional>
#include <string_view>
#include <span>
#include <string>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

/// Half-open integer interval [begin, end).
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end > begin ? end - begin : 0; }
  [[nodiscard]] bool empty() const { return end <= begin; }
  [[nodiscard]] Range intersect(const Range& o) const {
    return Range{begin > o.begin ? begin : o.begin, end < o.end ? end : o.end};
  }
  bool operator==(const Range&) const = default;
};

/// offset + Σ coeff · dims[dim]; dims are indices into the operator's loop dimensions.
struct AffineExpr {
  struct Term {
    int dim = 0;
    std::int64_t coeff = 1;
    bool operator==(const Term&) const = default;
  };
  std::vector<Term> terms;
  std::int64_t offset = 0;

  static AffineExpr of_dim(int dim) { return AffineExpr{{Term{dim, 1}}, 0}; }
  static AffineExpr constant(std::int64_t c) { return AffineExpr{{}, c}; }

  /// The smallest interval holding every value the expression takes over the loop ranges (a bounding box:
  /// strided accesses are counted with their gaps, as the data between them has to be fetched anyway).
  [[nodiscard]] MONET_API Range bounds(std::span<const Range> loop_ranges) const;
  /// True when the expression is exactly one loop dimension (coefficient 1, no offset).
  [[nodiscard]] bool is_plain_dim() const { return terms.size() == 1 && terms[0].coeff == 1 && offset == 0; }
  /// "s*OY + FY - 1" style text using the given dimension names.
  [[nodiscard]] MONET_API std::string str(std::span<const std::string> dim_names) const;
  bool operator==(const AffineExpr&) const = default;
};

/// Parses "2*OY + FY - 3" (terms: integer, dim, integer*dim, dim*integer; + and -) against dimension names.
/// Returns nullopt and sets `error` when the text is not such an expression.
MONET_API std::optional<AffineExpr> parse_affine(std::string_view text, std::span<const std::string> dim_names,
                                                 std::string* error);

}  // namespace monet
