#pragma once
// Memory of one training step, by tensor class, and the tensors autograd keeps between forward and backward.
#include <cstdint>
#include <utility>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet {

/// The tensor whose storage a tensor uses: through single-input views (reshape, transpose, split, slice ...)
/// and in-place updates. Multi-input views (concat) allocate their own storage.
MONET_API TensorId storage_of(const Graph& graph, TensorId tensor);

struct SavedStorage {
  TensorId storage = kNone;     // the storage root
  std::int64_t bytes = 0;
  OperatorId producer = kNone;  // the forward operator that produced it (kNone: a graph input or label)
};

/// The saved set: distinct storages of forward tensors (activations, inputs, labels, indices, statistics)
/// that backward operators read or keep alive, and the inputs of checkpointed regions that recompute operators
/// read. Parameters and buffers are not counted.
MONET_API std::vector<SavedStorage> saved_tensors(const Graph& graph);

/// An activation storage live in the backward pass: from `from` (its producer, or the first backward operator for
/// what the forward pass made) to `last` (its last reader), operator indices of the graph.
struct ActivationInterval {
  TensorId storage = kNone;
  std::int64_t bytes = 0;
  std::size_t from = 0;
  std::size_t last = 0;
  /// Kept for backward: read by a backward operator, or made by the forward pass (a recomputed tensor only the next
  /// recompute operator reads is a transient: PyTorch allocates it too, but no saved_tensors_hook sees it).
  bool saved = true;
};
/// The backward passes of a step: from the first backward (or recompute) operator on, except the forward passes
/// (and losses) of later micro-batches (gradient accumulation runs forward + backward once per micro-batch), which
/// are `skipped`: as the forward pass of a single micro-batch, they are not part of the activation peak. An
/// interval starts at its producer (a graph input or label: its first reader), or at the start of the backward
/// pass that follows when that lies before the pass or in a skipped range; so a later micro-batch's inputs and
/// activations count from its own backward pass on. With one micro-batch nothing is skipped.
struct BackwardActivations {
  std::size_t start = 0;  // the first backward operator (the operators count when there is none)
  std::vector<ActivationInterval> intervals;
  std::vector<std::pair<std::size_t, std::size_t>> skipped;  // [first, end) operator ranges outside every pass
};
/// What peak_activation_bytes sums: the activation storages live at each operator of the backward passes.
MONET_API BackwardActivations backward_activations(const Graph& graph);
/// The largest sum of the intervals' bytes (of the saved ones only, with `saved_only`) live at one operator from
/// `a.start` on, outside `a.skipped` (`operators`: the graph's count).
MONET_API std::int64_t peak_live_bytes(const BackwardActivations& a, std::size_t operators, bool saved_only = false);

struct TrainingMemory {
  std::int64_t parameter_bytes = 0;         // weights (trainable and frozen)
  std::int64_t buffer_bytes = 0;            // non-trainable stored tensors
  std::int64_t saved_activation_bytes = 0;  // the saved set
  std::int64_t gradient_bytes = 0;          // gradients of parameters (accumulators included)
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t master_weight_bytes = 0;
  std::int64_t input_bytes = 0;             // inputs and labels of the step
  std::int64_t peak_bytes = 0;              // sequential liveness walk in operator order
  /// The largest sum of live saved and recomputed activation storages at any operator of the backward pass
  /// (from the first backward or recompute operator on, graph order; with several micro-batches, the largest over
  /// their backward passes: BackwardActivations); gradients and stored state excluded.
  std::int64_t peak_activation_bytes = 0;
  /// The same peak over saved storages only (ActivationInterval::saved): what PyTorch's saved_tensors_hooks see
  /// live in the backward pass, recomputed copies included.
  std::int64_t peak_saved_activation_bytes = 0;
  std::vector<SavedStorage> saved;
};

/// Memory accounting of a graph (a training step, or a forward graph).
MONET_API TrainingMemory training_memory(const Graph& graph);

}  // namespace monet

namespace monet {

/// Work of a training step by phase.
struct PhaseTotals {
  std::int64_t operators = 0;
  std::int64_t macs = 0;
  double vector_ops = 0;
};
struct TrainingSummary {
  PhaseTotals forward;
  PhaseTotals loss;
  PhaseTotals backward_dx;
  PhaseTotals backward_dw;
  PhaseTotals optimizer;
  PhaseTotals recompute;
  TrainingMemory memory;
};
MONET_API TrainingSummary training_summary(const Graph& graph);

}  // namespace monet
