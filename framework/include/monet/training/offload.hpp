#pragma once
// Activation offloading (POET-style paging, docs/training.md#offloading): the saved activations of chosen modules
// leave the cores after their last forward reader — written to off-chip memory — and come back before their
// first backward (or recompute) reader. The graph does not change; the scheduler moves the data
// (ScheduleInputs::offloaded), so the transfers cost the links' and the off-chip memory's bandwidth and energy.
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/util/error.hpp"

namespace monet {

/// [training.checkpoint] offload: which modules' saved activations are offloaded (next to any checkpoint policy).
struct OffloadPolicy {
  std::vector<std::string> modules;  // module names or globs, as the `modules` checkpoint policy matches them
  SourceLocation where;              // the `offload` key, for messages
  [[nodiscard]] bool active() const { return !modules.empty(); }
  /// "layer1*,fc" (empty when inactive).
  [[nodiscard]] MONET_API std::string text() const;
};

/// The tensors a policy offloads in a training graph (after checkpointing): the outputs of every forward operator
/// of a matched module that writes a tensor a backward or recompute operator reads (all its outputs: a
/// computation node's output tile moves as one), for every micro-batch. A glob that
/// matches no module, or an activation that checkpointing also recomputes (both asked for one module), is a
/// UserError at policy.where. Sorted ids.
MONET_API std::vector<TensorId> offloaded_tensors(const Graph& graph, const OffloadPolicy& policy);

/// training.peak_activation_bytes with offloading: the same walk over the backward pass (training/memory.hpp), an
/// offloaded storage counted only from its first backward reader on.
MONET_API std::int64_t offloaded_peak_activation_bytes(const Graph& graph, const std::vector<TensorId>& tensors);

/// Per tensor of the graph: offloaded or not (what ScheduleInputs::offloaded takes); empty when nothing is.
MONET_API std::vector<bool> offload_mask(const Graph& graph, const std::vector<TensorId>& tensors);

}  // namespace monet
