#pragma once
// Evaluation of design points: a pure function of (prepared experiment, point). The evaluator is immutable
// after construction except for its cost cache, which only ever memoises deterministic results, so many
// threads may evaluate points at once and get the same numbers as one.
#include <array>
#include <functional>
#include <string>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "monet/experiment/cost_cache.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/system/parallel_step.hpp"

namespace monet {

/// The cost model of a core and the fingerprint of the model with its parameters (cache keys).
struct CoreModel {
  std::shared_ptr<const CostModel> model;
  std::uint64_t fingerprint = 0;
};

class MONET_API Evaluator {
 public:
  /// `cache` may be shared with other evaluators (a search's points): entries are keyed by content. `offloaded`:
  /// per tensor, the saved activations the scheduler offloads (ScheduleInputs::offloaded; empty: none).
  Evaluator(GraphPtr graph, AcceleratorPtr accelerator, std::vector<CoreModel> core_models,
            std::shared_ptr<const CNGraph> cns, std::vector<std::vector<int>> allowed_cores,
            ScheduleOptions options = {}, std::shared_ptr<CostCache> cache = nullptr, std::vector<bool> offloaded = {});

  /// Schedules with `allocation` (per operator: a fixed core, or -1 to let the scheduler choose; empty: all -1)
  /// and `cn_core` (per CN: a fixed core that wins over the operator's, or -1; empty: none). `memory_by_use`:
  /// see ScheduleInputs (off for a search's points, which need no plots).
  [[nodiscard]] ScheduleResult evaluate(const std::vector<int>& allocation, const std::vector<int>& cn_core = {},
                                        bool memory_by_use = true) const;
  /// evaluate()'s summary without memory_by_use. A system step's shared rank schedule is read, not copied (the points
  /// of a parallelism search only need the summary).
  [[nodiscard]] ScheduleSummary summarize(const std::vector<int>& allocation,
                                          const std::vector<int>& cn_core = {}) const;
  /// Costs every distinct (tile, allowed core) query in parallel, once per evaluator: a cold run's cost-model
  /// work is known before scheduling.
  void prewarm() const;
  /// A step on a system of chips (set once, before the evaluator is shared): every schedule becomes the system's.
  void set_system_step(std::shared_ptr<const SystemStep> step) { system_step_ = std::move(step); }
  /// Where one-chip schedules can be shared between the variants of a system experiment (the points of a
  /// parallelism search that differ only in pipeline, data, global batch or ZeRO share one rank's schedule):
  /// `memo(key, compute)` computes each key once. `key` says what determines the schedule besides the allocation
  /// (graph, CNs, hardware, cost models, options). Only with a system step.
  using ScheduleMemo = std::function<std::shared_ptr<const ScheduleResult>(const std::string& key,
                                                                            const std::function<ScheduleResult()>& compute)>;
  void set_schedule_memo(ScheduleMemo memo, std::string key) {
    memo_ = std::move(memo);
    memo_key_ = std::move(key);
  }
  [[nodiscard]] const SystemStep* system_step() const { return system_step_.get(); }
  [[nodiscard]] const std::vector<std::vector<int>>& allowed_cores() const { return allowed_cores_; }
  [[nodiscard]] const ScheduleOptions& options() const { return options_; }
  [[nodiscard]] const Graph& graph() const { return *graph_; }
  [[nodiscard]] const CNGraph& cns() const { return *cns_; }
  [[nodiscard]] const Accelerator& accelerator() const { return *accelerator_; }
  [[nodiscard]] const CostCache& cache() const { return *cache_; }
  [[nodiscard]] const std::vector<bool>& offloaded() const { return offloaded_; }
  [[nodiscard]] const std::shared_ptr<CostCache>& shared_cache() const { return cache_; }
  /// Cost of a CN on a core (with some operands streaming from off-chip memory) through the cache.
  [[nodiscard]] Cost cost(const ComputationNode& cn, int core, const StreamedOperands& streamed = {}) const;

 private:
  [[nodiscard]] ScheduleResult schedule_now(const std::vector<int>& allocation, const std::vector<int>& cn_core,
                                            bool memory_by_use) const;
  /// The one-chip schedule through the memo (system steps with one only).
  [[nodiscard]] std::shared_ptr<const ScheduleResult> memoized(const std::vector<int>& allocation,
                                                               const std::vector<int>& cn_core,
                                                               bool memory_by_use) const;
  struct Variant {
    std::shared_ptr<const Core> core;
    std::uint64_t fingerprint = 0;
  };
  ScheduleOptions options_;
  GraphPtr graph_;
  AcceleratorPtr accelerator_;
  std::vector<CoreModel> core_models_;  // per core id
  /// Per core id, streamed-operand mask (0..7) and on-chip shift: the core as the cost model sees it (the
  /// off-chip memory appended for streamed operands). Built once, so evaluations share them without locking.
  static constexpr int kVariants = 8 * (StreamedOperands::kMaxShift + 1);
  std::vector<std::array<Variant, kVariants>> variants_;
  std::shared_ptr<const CNGraph> cns_;  // shared with the variants prepared from the same graph and fusion
  std::vector<std::vector<int>> allowed_cores_;  // per operator, sorted core ids
  std::shared_ptr<CostCache> cache_;
  std::vector<bool> offloaded_;  // per tensor (empty: nothing offloaded)
  std::shared_ptr<const SystemStep> system_step_;
  ScheduleMemo memo_;
  std::string memo_key_;
  /// Per CN (ScheduleOptions::padded_tiles): the ranges its cost is queried with; empty: its own ranges.
  std::vector<std::vector<Range>> costed_ranges_;
  [[nodiscard]] std::span<const Range> costed_ranges(const ComputationNode& cn) const;
  mutable std::once_flag warmed_;
};

}  // namespace monet
