#pragma once
// Evaluation of design points: a pure function of (prepared experiment, point). The evaluator is immutable
// after construction except for its cost cache, which only ever memoises deterministic results, so many
// threads may evaluate points at once and get the same numbers as one.
#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "monet/experiment/cost_cache.hpp"
#include "monet/plugin/interfaces.hpp"

namespace monet {

class MONET_API Evaluator {
 public:
  Evaluator(GraphPtr graph, AcceleratorPtr accelerator, std::vector<std::shared_ptr<const CostModel>> core_models,
            CNGraph cns, std::vector<std::vector<int>> allowed_cores, ScheduleOptions options = {});

  /// Schedules with `allocation` (per operator: a fixed core, or -1 to let the scheduler choose; empty: all -1).
  [[nodiscard]] ScheduleResult evaluate(const std::vector<int>& allocation) const;
  [[nodiscard]] const std::vector<std::vector<int>>& allowed_cores() const { return allowed_cores_; }
  [[nodiscard]] const ScheduleOptions& options() const { return options_; }
  [[nodiscard]] const Graph& graph() const { return *graph_; }
  [[nodiscard]] const CNGraph& cns() const { return cns_; }
  [[nodiscard]] const Accelerator& accelerator() const { return *accelerator_; }
  [[nodiscard]] const CostCache& cache() const { return cache_; }
  /// Cost of a CN on a core (with some operands streaming from off-chip memory) through the cache.
  [[nodiscard]] Cost cost(const ComputationNode& cn, int core, const StreamedOperands& streamed = {}) const;

 private:
  ScheduleOptions options_;
  GraphPtr graph_;
  AcceleratorPtr accelerator_;
  std::vector<std::shared_ptr<const CostModel>> core_models_;  // per core id
  std::vector<int> core_type_;                                 // per core id: index of its distinct core type
  std::vector<std::vector<int>> mapping_entry_;                // [core][operator]: the core's mapping entry, -1: none
  /// Per core id, streamed-operand mask (0..7) and on-chip shift: the core as the cost model sees it (the
  /// off-chip memory appended for streamed operands). Built once, so evaluations share them without locking.
  static constexpr int kVariants = 8 * (StreamedOperands::kMaxShift + 1);
  std::vector<std::array<std::shared_ptr<const Core>, kVariants>> variants_;
  CNGraph cns_;
  std::vector<std::vector<int>> allowed_cores_;  // per operator, sorted core ids
  mutable CostCache cache_;
};

}  // namespace monet
