#pragma once
// The design-space kernel: evaluates points of an experiment's [space]. A point's value genes become changes
// to the experiment, built from memory (files are read once); its preparation is memoised — the experiment
// variant per value-gene vector, graphs by the settings they depend on, costs by content — so an allocation
// search never re-tiles and two hardware points with equal cores share their costs. Allocation genes fix the
// cores of computation nodes. Thread-safe; an infeasible point is a result (violation, reason), never an
// exception.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "monet/experiment/quality.hpp"
#include "monet/experiment/runner.hpp"
#include "monet/search/space_spec.hpp"

namespace monet {

class MONET_API DesignEvaluator {
 public:
  /// `spec` may be absent: a space with no genes and the default objectives (latency, energy).
  /// `preload_costs`: e.g. costs stored by earlier runs. `check_quality`: assess the configured point's quality now,
  /// so that a key its [quality] plugin cannot find is an error before any work (a resumed search, which did that
  /// check when it started, recalls its journal's values instead: recall_quality).
  DesignEvaluator(ExperimentSource source, std::optional<SpaceSpec> spec, const Registry& registry,
                  std::function<void(CostCache&)> preload_costs = {}, bool check_quality = true);
  ~DesignEvaluator();
  DesignEvaluator(const DesignEvaluator&) = delete;
  DesignEvaluator& operator=(const DesignEvaluator&) = delete;

  [[nodiscard]] const DesignSpace& space() const;
  /// Points to start a search from: the configured point, then (with checkpoint genes) no checkpointing,
  /// sqrt(n) and the optimal policy's front.
  [[nodiscard]] std::vector<DesignPoint> seeds() const;
  /// The experiment of the configured point (the base of every variant).
  [[nodiscard]] const PreparedExperiment& base() const;
  [[nodiscard]] Evaluation evaluate(const DesignPoint& point) const;
  /// The experiment's [quality] plugin (created once: its caches serve every point), or none.
  [[nodiscard]] const std::optional<QualityPlugin>& quality() const;
  /// Remembers the quality values of evaluations made earlier (a journal): their points are not assessed again.
  void recall_quality(const std::vector<Evaluation>& evaluations) const;

  /// Everything about one point, for its full report: its prepared experiment and schedule. Throws UserError
  /// when the point cannot be evaluated. `memory_by_use = false` skips the per-step memory composition, which
  /// only the plots need (evaluate() does, for speed).
  struct Detail {
    std::shared_ptr<const PreparedExperiment> prepared;
    ScheduleResult schedule;
    std::vector<Metric> quality;  // the [quality] plugin's metrics of the point (none without one)
  };
  [[nodiscard]] Detail detail(const DesignPoint& point, bool memory_by_use = true) const;

  struct Stats {
    std::size_t variants = 0;        // experiment variants prepared
    std::size_t graphs = 0;          // graphs built (forward, training)
    std::uint64_t cost_hits = 0;
    std::uint64_t cost_misses = 0;
  };
  [[nodiscard]] Stats stats() const;
  /// The shared cost cache (thread-safe): what --cost-cache stores when the run ends.
  [[nodiscard]] CostCache& costs() const;

 private:
  /// The point's prepared variant (UserError when it has none) and the cores its allocation genes fix per CN.
  [[nodiscard]] std::pair<std::shared_ptr<const PreparedExperiment>, std::vector<int>> placed(
      const DesignPoint& point) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace monet
