#include <algorithm>
#include <cctype>
#include <numeric>

#include "monet/ir/graph.hpp"

namespace monet {

// -------------------------------------------------------------------------------------------- affine

Range AffineExpr::bounds(std::span<const Range> loop_ranges) const {
  std::int64_t lo = offset;
  std::int64_t hi = offset;  // inclusive
  for (const Term& t : terms) {
    const Range& r = loop_ranges[static_cast<std::size_t>(t.dim)];
    if (r.empty()) return Range{0, 0};
    const std::int64_t a = t.coeff * r.begin;
    const std::int64_t b = t.coeff * (r.end - 1);
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return Range{lo, hi + 1};
}

std::string AffineExpr::str(std::span<const std::string> dim_names) const {
  std::string s;
  for (const Term& t : terms) {
    if (!s.empty()) s += t.coeff < 0 ? " - " : " + ";
    else if (t.coeff < 0) s += "-";
    const std::int64_t c = t.coeff < 0 ? -t.coeff : t.coeff;
    if (c != 1) s += std::to_string(c) + "*";
    s += dim_names[static_cast<std::size_t>(t.dim)];
  }
  if (offset != 0 || s.empty()) {
    if (s.empty()) return std::to_string(offset);
    s += offset < 0 ? " - " + std::to_string(-offset) : " + " + std::to_string(offset);
  }
  return s;
}

std::optional<AffineExpr> parse_affine(std::string_view text, std::span<const std::string> dim_names,
                                       std::string* error) {
  AffineExpr e;
  std::size_t i = 0;
  auto fail = [&](const std::string& why) -> std::optional<AffineExpr> {
    if (error) *error = "'" + std::string(text) + "': " + why;
    return std::nullopt;
  };
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  auto number = [&](std::int64_t& v) {
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) return false;
    v = std::stoll(std::string(text.substr(start, i - start)));
    return true;
  };
  auto ident = [&](std::string& s) {
    const std::size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    s = std::string(text.substr(start, i - start));
    return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
  };
  auto dim_of = [&](const std::string& name) -> int {
    for (std::size_t d = 0; d < dim_names.size(); ++d) {
      if (dim_names[d] == name) return static_cast<int>(d);
    }
    return -1;
  };
  skip();
  if (i == text.size()) return fail("empty expression");
  std::int64_t sign = 1;
  bool first = true;
  while (i < text.size()) {
    skip();
    if (!first || text[i] == '-' || text[i] == '+') {
      if (text[i] != '+' && text[i] != '-') return fail("expected '+' or '-' at position " + std::to_string(i + 1));
      sign = text[i] == '-' ? -1 : 1;
      ++i;
      skip();
    }
    first = false;
    std::int64_t coeff = 1;
    std::string name;
    if (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      number(coeff);
      skip();
      if (i < text.size() && text[i] == '*') {
        ++i;
        skip();
        if (!ident(name)) return fail("expected a dimension name after '*'");
      }
    } else if (ident(name)) {
      skip();
      if (i < text.size() && text[i] == '*') {
        ++i;
        skip();
        if (!number(coeff)) return fail("expected an integer after '*'");
      }
    } else {
      return fail("expected a dimension name or an integer at position " + std::to_string(i + 1));
    }
    if (name.empty()) {
      e.offset += sign * coeff;
    } else {
      const int d = dim_of(name);
      if (d < 0) return fail("'" + name + "' is not a loop dimension");
      e.terms.push_back(AffineExpr::Term{d, sign * coeff});
    }
    skip();
  }
  return e;
}

// ---------------------------------------------------------------------------------------------- tensor

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// -------------------------------------------------------------------------------------------- operator

std::int64_t Operator::iterations() const {
  std::int64_t n = 1;
  for (const LoopDim& d : dims) n *= d.size;
  return n;
}

std::int64_t Operator::macs() const { return is_mac_kind(kind) ? iterations() : 0; }

std::int64_t Operator::recomputed_macs() const {
  if (phase == Phase::recompute) return macs();
  const auto share = attributes.find("recomputed_macs");
  if (share == attributes.end() || share->second.size() != 2 || share->second[1] <= 0) return 0;
  return macs() / share->second[1] * share->second[0];
}

std::optional<ElementType> Operator::matmul_type() const {
  const auto it = attributes.find("matmul_type");
  if (it == attributes.end() || it->second.size() != 1) return std::nullopt;
  const std::int64_t v = it->second.front();  // a workload file may write any attribute: only a real type counts
  if (v < 0 || v > static_cast<std::int64_t>(ElementType::boolean)) return std::nullopt;
  return static_cast<ElementType>(v);
}

double Operator::vector_ops() const {
  if (is_mac_kind(kind) || kind == OpKind::view || kind == OpKind::copy) return 0.0;
  return static_cast<double>(iterations()) * ops_per_iteration;
}

int Operator::dim_index(std::string_view n) const {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

std::vector<Range> Operator::full_ranges() const {
  std::vector<Range> r;
  r.reserve(dims.size());
  for (const LoopDim& d : dims) r.push_back(Range{0, d.size});
  return r;
}

std::vector<Range> Operator::operand_region(std::size_t operand, std::span<const Range> loop_ranges,
                                            const Tensor& tensor) const {
  const Operand& o = operands.at(operand);
  std::vector<Range> region;
  region.reserve(tensor.shape.size());
  for (std::size_t axis = 0; axis < tensor.shape.size(); ++axis) {
    const Range whole{0, tensor.shape[axis]};
    if (o.access.empty()) {
      region.push_back(whole);
    } else {
      region.push_back(o.access[axis].bounds(loop_ranges).intersect(whole));
    }
  }
  return region;
}

std::vector<int> Operator::reduction_dims() const {
  std::vector<bool> used(dims.size(), false);
  bool any_output = false;
  for (const Operand& o : operands) {
    if (!o.is_output()) continue;
    any_output = true;
    for (const AffineExpr& e : o.access) {
      for (const auto& t : e.terms) used[static_cast<std::size_t>(t.dim)] = true;
    }
  }
  std::vector<int> out;
  if (!any_output) return out;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (!used[i] && dims[i].size > 1) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::int64_t region_elements(std::span<const Range> region) {
  std::int64_t n = 1;
  for (const Range& r : region) n *= r.size();
  return n;
}

}  // namespace monet
