#pragma once
// Numeric bounds of a parameter or a file key. Part of the plugin SDK (ParamSpec::with_bounds): it needs no TOML,
// so it lives apart from the TOML reader that checks file values against it.
#include <optional>
#include <string>

#include "monet/util/export.hpp"

namespace monet {

/// Numeric bounds for a key. Inclusive unless the *_exclusive flag is set; inf and nan are never inside.
struct Bounds {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;

  static Bounds positive() { return {0.0, std::nullopt, true, false}; }
  static Bounds non_negative() { return {0.0, std::nullopt, false, false}; }
  static Bounds at_least(double v) { return {v, std::nullopt, false, false}; }
  static Bounds fraction() { return {0.0, 1.0, true, false}; }  // (0, 1]
  [[nodiscard]] MONET_API bool contains(double v) const;
  /// "a value > 0", "a value in (0, 1]", "" for unbounded.
  [[nodiscard]] MONET_API std::string describe() const;
};

}  // namespace monet
