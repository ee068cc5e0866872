#include "monet/training/recompute.hpp"

#include <string>

namespace monet {

CheckpointPolicy recompute_policy(std::string_view recompute, const SourceLocation& where) {
  CheckpointPolicy p;
  p.where = where;
  if (recompute == "none") return p;
  p.kind = CheckpointPolicy::Kind::modules;
  if (recompute == "selective") {
    p.modules = {"layers.*.self_attention.core_attention"};
  } else if (recompute == "full") {
    p.modules = {"layers.*"};
  } else {
    throw UserError(where, "recompute = \"" + std::string(recompute) + "\": expected none, selective or full");
  }
  return p;
}

}  // namespace monet
