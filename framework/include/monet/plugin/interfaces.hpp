#pragma once
// The six kinds of plugin. The kernel only knows these interfaces; every implementation lives in a plugin
// library under plugins/<kind>/<name>/. All methods are const and must be safe to call concurrently:
// evaluation is a pure function of its inputs, and searches evaluate many points in parallel.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/cost/cost.hpp"
#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/schedule/cn_graph.hpp"
#include "monet/schedule/schedule.hpp"
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
  [[nodiscard]] virtual std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& acc) const = 0;
};

// ---------------------------------------------------------------------------------- search algorithm
/// One point of the design space.
struct DesignPoint {
  /// Per operator: the core it runs on, or -1 to let the scheduler pick among its allowed cores.
  std::vector<int> allocation;
  bool operator==(const DesignPoint&) const = default;
};

/// What a search may choose from.
struct DesignSpace {
  std::vector<std::vector<int>> allowed_cores;  // per operator, sorted core ids
};

struct Evaluation {
  DesignPoint point;
  ScheduleSummary summary;
};

/// Services the kernel offers a running search.
class MONET_API SearchContext {
 public:
  virtual ~SearchContext();
  [[nodiscard]] virtual const DesignSpace& space() const = 0;
  [[nodiscard]] virtual std::uint64_t seed() const = 0;
  /// Evaluates points in parallel; results come back in the order of the points, identical for any
  /// thread count.
  [[nodiscard]] virtual std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) = 0;
  /// Reports progress of long searches (done out of total evaluations).
  virtual void progress(std::size_t done, std::size_t total) = 0;
};

/// Explores the design space; returns the evaluated points worth reporting, best first.
class MONET_API SearchAlgorithm : public Plugin {
 public:
  ~SearchAlgorithm() override;
  [[nodiscard]] virtual std::vector<Evaluation> run(SearchContext& context) const = 0;
};

}  // namespace monet
