#pragma once
// The seven kinds of plugin. The kernel only knows these interfaces; every implementation lives in a plugin
// library under plugins/<kind>/<name>/. All methods are const and must be safe to call concurrently:
// evaluation is a pure function of its inputs, and searches evaluate many points in parallel.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/cost/cost.hpp"
#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/search/space.hpp"
#include "monet/schedule/cn_graph.hpp"
#include "monet/schedule/schedule.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/precision.hpp"

namespace monet {

// ----------------------------------------------------------------------------------- workload frontend
/// Reads a workload file into a forward graph.
class MONET_API WorkloadFrontend : public Plugin {
 public:
  ~WorkloadFrontend() override;
  /// Errors in the file are UserErrors with file:line:column where the format allows it.
  [[nodiscard]] virtual GraphPtr load(const std::filesystem::path& file) const = 0;
};

// --------------------------------------------------------------------------------- training settings
/// Kernel-owned [training] settings shared by backward generators and optimizer models.
struct TrainingSettings {
  std::string loss = "cross_entropy";
  std::int64_t micro_batches = 1;  // gradient accumulation: forward + backward this many times per update
  std::optional<Precision> precision;  // [precision] when given (master weights, loss scaling)
  /// [training.checkpoint]: applied by the kernel to the graph the backward generator and optimizer model built.
  CheckpointPolicy checkpoint;
};

// -------------------------------------------------------------------------------- backward generator
/// Turns a forward graph into the graph of one training step: forward, loss, backward.
class MONET_API BackwardGenerator : public Plugin {
 public:
  ~BackwardGenerator() override;
  [[nodiscard]] virtual GraphPtr generate(const Graph& forward, const TrainingSettings& settings) const = 0;
};

// ------------------------------------------------------------------------------- optimizer-state model
/// Adds optimizer states and update operators for every trainable parameter of a training graph.
class MONET_API OptimizerModel : public Plugin {
 public:
  ~OptimizerModel() override;
  [[nodiscard]] virtual GraphPtr apply(const Graph& training_graph, const TrainingSettings& settings) const = 0;
};

// ----------------------------------------------------------------------------------- core cost model
/// Cost of an operator tile on a core. Results are cached by the kernel per (tile signature, core).
class MONET_API CostModel : public Plugin {
 public:
  ~CostModel() override;
  /// Rejects a core this model cannot cost (UserError naming the core file). Called once per core.
  virtual void check_core(const Core& core) const;
  [[nodiscard]] virtual Cost evaluate(const CostQuery& query) const = 0;
  /// Bits of each operand (per slot) the query's tile keeps in memory, as this model counts them; used to
  /// decide which memory can hold a layer's data between layers. Default: elements × precision bits.
  [[nodiscard]] virtual OperandTraffic footprint_bits(const CostQuery& query) const;
};

// ----------------------------------------------------------------------------------- fusion strategy
/// Splits a graph into computation nodes (tiles) grouped into stacks, in execution-priority order.
/// The kernel derives the dependencies between them (connect_tiles).
class MONET_API FusionStrategy : public Plugin {
 public:
  ~FusionStrategy() override;
  /// `allowed_cores`: per operator, the cores it may run on (its inter-core splits may spread over them).
  [[nodiscard]] virtual std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& acc,
                                                               const std::vector<std::vector<int>>& allowed_cores) const = 0;
};

// ---------------------------------------------------------------------------------- search algorithm
/// Thrown by SearchContext::evaluate when the user stopped the search (Ctrl-C, SIGTERM): the batch that was
/// running has been recorded; the plugin lets it propagate (the kernel writes what was evaluated and keeps a
/// journal that `--resume` replays).
class MONET_API SearchStopped : public std::runtime_error {
 public:
  SearchStopped();
  ~SearchStopped() override;
};

/// Services the kernel offers a running search. A search plugin must be a deterministic function of the space,
/// the seed and the evaluations it receives (use monet::Random seeded from seed()): the kernel resumes a stopped
/// search by running the plugin again and replaying the recorded evaluations.
class MONET_API SearchContext {
 public:
  virtual ~SearchContext();
  [[nodiscard]] virtual const DesignSpace& space() const = 0;
  [[nodiscard]] virtual std::uint64_t seed() const = 0;
  /// Points a search should start from, best guesses first: the experiment's configured point, then any the
  /// kernel knows to be good (e.g. checkpointing policies the DP solved). Valid points of space().
  [[nodiscard]] virtual std::vector<DesignPoint> seeds() const { return {space().configured()}; }
  /// Announces how many evaluations the search plans in all (for progress and ETA; 0 = unknown).
  virtual void plan(std::size_t total_evaluations) = 0;
  /// Evaluates a batch of points: in parallel (threads, MPI ranks), results in the order of the points and
  /// identical for any thread or rank count. Points evaluated before come from the archive. Each call is one
  /// generation / iteration in the progress line and in convergence.svg. Throws SearchStopped (see above).
  [[nodiscard]] virtual std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) = 0;
};

/// Explores the design space; returns the points it chose (best first; the kernel also reports the Pareto
/// front of every evaluation it made).
class MONET_API SearchAlgorithm : public Plugin {
 public:
  ~SearchAlgorithm() override;
  [[nodiscard]] virtual std::vector<Evaluation> run(SearchContext& context) const = 0;
};

// ----------------------------------------------------------------------------------------- estimator
/// One instance of a core's memory level, as an estimator sees it.
struct MemoryEstimateQuery {
  std::int64_t size_bits = 0;
  std::int64_t read_word_bits = 0;   // the widest read port: the word read_energy_pj is for
  std::int64_t write_word_bits = 0;  // the widest write port
  int ports = 1;                     // read, write and read-write ports together
  bool offchip = false;              // the accelerator's off-chip memory (DRAM): no on-chip area
  double technology_nm = 0;
};

struct MemoryEstimate {
  double read_energy_pj = 0;   // per read of one read word
  double write_energy_pj = 0;  // per write of one write word
  double area_mm2 = 0;         // one instance
  std::string implementation;  // what the model built it from ("sram", "flip-flops", "dram"), for reports
};

/// A core's operational array: pe_count units, each doing one `operation` on `precision` operands per cycle.
struct ArrayEstimateQuery {
  std::int64_t pe_count = 0;
  ElementType precision = ElementType::int8;
  std::string operation = "mac";  // "mac" (multiply-accumulate) or "add" (vector add / compare)
  double technology_nm = 0;
};

struct ArrayEstimate {
  double unit_energy_pj = 0;  // per operation of one unit
  double area_mm2 = 0;        // the whole array
  std::string implementation;
};

/// Energy per access and area of memories and operational arrays from their parameters (Accelergy's estimators
/// /// for Timeloop): what lets a search resize hardware consistently. The kernel asks only for numbers a core file
/// leaves out; numbers written in the file always win. A query the model cannot answer (an unsupported
/// precision) is a UserError without location: the kernel adds the key it came from.
class MONET_API Estimator : public Plugin {
 public:
  ~Estimator() override;
  /// Technology nodes the model covers (nm, inclusive); the kernel checks a core's technology_nm against them.
  [[nodiscard]] virtual std::pair<double, double> technology_range_nm() const = 0;
  [[nodiscard]] virtual MemoryEstimate memory(const MemoryEstimateQuery& query) const = 0;
  [[nodiscard]] virtual ArrayEstimate array(const ArrayEstimateQuery& query) const = 0;
};

}  // namespace monet
