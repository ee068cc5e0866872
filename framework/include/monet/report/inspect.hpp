#pragma once
// `monet inspect`: what a workload is, operator by operator, with totals.
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/training/checkpoint.hpp"

namespace monet {

struct CheckpointSolve;  // monet/training/checkpoint_optimal.hpp

/// Parameter and memory totals of a forward graph. Stored tensors (no producer) only: views of them are not
/// counted again; a tensor read by several operators (tied weights) is counted once.
struct WorkloadTotals {
  std::int64_t operators = 0;
  std::int64_t macs = 0;
  double vector_ops = 0;
  std::int64_t params_trainable = 0;  // elements
  std::int64_t params_frozen = 0;     // elements
  std::int64_t params_buffers = 0;    // elements
  std::int64_t parameter_bytes = 0;   // trainable + frozen
  std::int64_t activation_bytes = 0;  // every tensor an operator writes, views excluded
  /// Operators a frontend could not model and passed through as zero-cost views on request (attribute
  /// "passthrough"): their costs are missing from every total.
  std::vector<std::string> passthrough;
};
MONET_API WorkloadTotals workload_totals(const Graph& graph);

/// A per-operator text table (name, kind, loop dims, MACs, parameters, output shape, output bytes) and totals.
MONET_API std::string inspect_text(const Graph& graph);
/// The same as JSON: {"workload", "params_trainable", "params_frozen", "params_buffers", "forward_macs",
/// "vector_ops", "activation_bytes", "inputs", "outputs", "operators": [...]}.
/// With `training`, a "training" object; `regions`: the checkpointed regions of the graph (see checkpoint.hpp);
/// `solve`: how the optimal policy chose them (training.checkpoint_solver).
MONET_API std::string inspect_json(const Graph& graph, const std::string& file, bool training = false,
                                   const std::vector<CheckpointRegion>& regions = {},
                                   const CheckpointSolve* solve = nullptr);
/// The training view: operators, MACs and vector operations per phase, and the memory table.
MONET_API std::string inspect_training_text(const Graph& graph, const std::vector<CheckpointRegion>& regions = {});

}  // namespace monet
