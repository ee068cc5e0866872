#pragma once
// The fusion-strategy plugin kind (`fusion`): a graph cut into computation nodes (tiles), in priority order.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/schedule/computation_node.hpp"

namespace monet {

/// Splits a graph into computation nodes (tiles) grouped into stacks, in execution-priority order.
/// The kernel derives the dependencies between them (connect_tiles).
class MONET_API FusionStrategy : public Plugin {
 public:
  ~FusionStrategy() override;
  /// `allowed_cores`: per operator, the cores it may run on (its inter-core splits may spread over them).
  [[nodiscard]] virtual std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& acc,
                                                               const std::vector<std::vector<int>>& allowed_cores) const = 0;
};

}  // namespace monet
