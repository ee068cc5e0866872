#pragma once
// Runs a loaded experiment: read the workload, build the training graph when asked, partition it into
// computation nodes, check the allocation, run the search, and collect what the reports need.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "monet/experiment/evaluator.hpp"
#include "monet/experiment/experiment.hpp"
#include "monet/report/metric.hpp"
#include "monet/training/memory.hpp"

namespace monet {

/// What the optimal checkpointing policy chose for a training step and how (results.json's training).
struct OptimalCheckpoint {
  CheckpointSolve solve;
  std::vector<CheckpointRegion> regions;  // by operator ids of the checkpointed step
};

/// A training step after checkpointing (before mixed precision), with the optimal policy's choice when it has one.
struct CheckpointedStep {
  GraphPtr graph;
  std::shared_ptr<const OptimalCheckpoint> optimal;  // null for the other policies
};

/// An experiment with its plugins instantiated, its graph built and its allocation checked.
struct PreparedExperiment {
  Experiment experiment;
  GraphPtr forward;  // as read by the frontend
  GraphPtr graph;    // what is evaluated: the forward graph, or the training step
  std::shared_ptr<const Evaluator> evaluator;
  std::shared_ptr<const SearchAlgorithm> search;
  std::vector<int> configured_allocation;  // per operator: fixed core or -1
  std::vector<int> configured_cn_core;     // per CN: fixed core from [allocation.group] or -1 (empty: none)
  std::shared_ptr<const OptimalCheckpoint> optimal_checkpoint;  // [training.checkpoint] budget: its choice
  /// training_memory(*graph), computed once per graph: a search's points share it (null: computed when read)
  std::shared_ptr<const TrainingMemory> memory;

  /// `memory`, or the graph's computed now where it was not kept.
  [[nodiscard]] std::shared_ptr<const TrainingMemory> training_memory_shared() const {
    return memory ? memory : std::make_shared<const TrainingMemory>(training_memory(*graph));
  }
};

/// What variants of one experiment share while they are prepared (the points of a design space): graphs by the
/// settings that determine them — the forward graph by workload file and frontend parameters, the training graph
/// by those and the training settings, the CN graph by those, the fusion plugin's parameters and the accelerator's
/// content — and the cost cache. Thread-safe; each entry is computed once.
class MONET_API PreparationCache {
 public:
  PreparationCache();
  ~PreparationCache();
  [[nodiscard]] GraphPtr graph(const std::string& key, const std::function<GraphPtr()>& compute);
  [[nodiscard]] CheckpointedStep step(const std::string& key, const std::function<CheckpointedStep()>& compute);
  /// What is computed from a graph (or another shared input) alone, once: `key` names the input, T what is derived.
  template <class T>
  [[nodiscard]] std::shared_ptr<const T> derived(const std::string& key, const std::function<T()>& compute) {
    return std::static_pointer_cast<const T>(derived_erased(std::string(typeid(T).name()) + "|" + key, [&] {
      return std::shared_ptr<const void>(std::make_shared<const T>(compute()));
    }));
  }
  [[nodiscard]] std::shared_ptr<const CNGraph> cns(const std::string& key, const std::function<CNGraph()>& compute);
  /// One-chip schedules of system experiments (Evaluator::set_schedule_memo).
  [[nodiscard]] std::shared_ptr<const ScheduleResult> schedule(const std::string& key,
                                                               const std::function<ScheduleResult()>& compute);
  [[nodiscard]] const std::shared_ptr<CostCache>& costs() const { return costs_; }
  [[nodiscard]] std::size_t graphs_built() const;

 private:
  [[nodiscard]] std::shared_ptr<const void> derived_erased(const std::string& key,
                                                           const std::function<std::shared_ptr<const void>()>& compute);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<CostCache> costs_;
};

/// The experiment's forward graph: its workload file (with the [workload.set] changes) read by its frontend.
MONET_API GraphPtr read_workload_graph(const Experiment& e);

/// Reads the workload, instantiates plugins and validates the allocation against the graph. With a cache, graphs
/// and costs other variants prepared are reused.
MONET_API PreparedExperiment prepare(Experiment experiment, const Registry& registry, PreparationCache* cache = nullptr);

struct RunResult {
  std::vector<Evaluation> evaluations;  // as returned by the search, best first
  DesignPoint best_point;
  ScheduleResult best;  // full schedule of the best point
  std::vector<Metric> quality;  // the [quality] plugin's metrics of the best point (none without one)
  std::size_t evaluation_count = 0;
  double wall_seconds = 0;
};

using ProgressCallback = std::function<void(std::size_t done, std::size_t total)>;

/// Runs the search plugin over the prepared experiment.
MONET_API RunResult run(const PreparedExperiment& prepared, const ProgressCallback& progress = {});

}  // namespace monet
