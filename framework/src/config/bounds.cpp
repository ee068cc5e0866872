#include "monet/config/bounds.hpp"

#include <cmath>

#include "monet/util/strings.hpp"

namespace monet {

bool Bounds::contains(double v) const {
  if (!std::isfinite(v)) return false;  // no quantity in monet's files is infinite: TOML's inf and nan are typos
  if (min && (min_exclusive ? v <= *min : v < *min)) return false;
  if (max && (max_exclusive ? v >= *max : v > *max)) return false;
  return true;
}

std::string Bounds::describe() const {
  if (min && max) {
    return "a value in " + std::string(min_exclusive ? "(" : "[") + format_number(*min) + ", " +
           format_number(*max) + (max_exclusive ? ")" : "]");
  }
  if (min) return std::string("a value ") + (min_exclusive ? "> " : ">= ") + format_number(*min);
  if (max) return std::string("a value ") + (max_exclusive ? "< " : "<= ") + format_number(*max);
  return {};
}

}  // namespace monet
