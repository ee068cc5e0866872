#pragma once
// A computation node (CN): an operator restricted to a sub-range of every loop dimension (a tile), the unit a
// fusion strategy produces and the scheduler places on a core. Apart from the CN graph (cn_graph.hpp) because it
// is the fusion plugins' contract, and they need nothing of the scheduler.
#include <cstddef>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet {

struct ComputationNode {
  int id = 0;
  OperatorId op = kNone;
  std::vector<Range> ranges;  // one per loop dimension of the operator
  int stack = 0;              // fused stack it belongs to (layer-by-layer: one stack per operator)
  int group = 0;              // inter-core group: tiles of one operator spread over cores (group g -> g-th allowed core)
  int groups = 1;             // number of inter-core groups of its operator
  bool streamed = false;      // operands stream from off-chip memory while it runs (Stream's single-layer stacks)
};

/// The core of an inter-core group when its operator is split over exactly its allowed cores (group g runs on
/// the g-th); -1 otherwise (the scheduler chooses).
inline int group_core(const ComputationNode& cn, const std::vector<int>& allowed) {
  return cn.groups > 1 && static_cast<int>(allowed.size()) == cn.groups ? allowed[static_cast<std::size_t>(cn.group)] : -1;
}

}  // namespace monet
