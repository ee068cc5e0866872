#pragma once
// The name a recomputed operator carries (checkpoint.cpp appends the tag to its forward operator's name), and the
// checkpoint models' map from forward operator names to their blocks (names survive a rewrite; ids do not).
#include <map>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/training/checkpoint.hpp"

namespace monet::detail {

inline constexpr const char* kRecomputeTag = "@recompute";

/// The forward operator's name of `name` (itself when it is not a recomputation): without the tag and the copy
/// number after it ("x@recompute2", the second copy of a nested recomputation, recompute_plan.hpp).
inline std::string forward_name(std::string name) {
  const std::string tag = kRecomputeTag;
  const auto at = name.find(tag);
  if (at != std::string::npos) {
    std::size_t end = at + tag.size();
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    name.erase(at, end - at);
  }
  return name;
}

/// Which block each forward operator of `blocks` belongs to, by name.
inline std::map<std::string, int> block_of_operators(const Graph& graph,
                                                     const std::vector<std::vector<CheckpointRegion>>& blocks) {
  std::map<std::string, int> block_of;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (const CheckpointRegion& r : blocks[b]) {
      for (OperatorId o : r.operators) block_of[graph.op(o).name] = static_cast<int>(b);
    }
  }
  return block_of;
}

}  // namespace monet::detail
