#pragma once
// The optimal checkpointing solvers with gradient accumulation (docs/training.md#several-micro-batches). A step of
// k micro-batches runs forward, loss and backward k times in one graph (autodiff; micro-batch m's operators carry
// the suffix "@m"), and each micro-batch's activations are freed by its own backward pass before the next one's
// forward pass starts: what lives across them is weights, gradient accumulators and optimizer state, none of them
// activations. Its activation peak is the largest over the micro-batches' backward passes (memory.hpp), and every
// micro-batch is the same problem. So the solvers solve the first micro-batch's step alone and apply its choice to
// every copy; the rewritten step of k micro-batches is then measured against the one-micro-batch answer.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/recompute_plan.hpp"

namespace monet {

/// A training step as k copies of its first micro-batch's operators (forward, loss, backward), each but the first
/// followed by operators of no micro-batch (its gradients added into the accumulators), and after the last what
/// follows it (the optimizer).
struct MicroBatchSteps {
  std::size_t count = 1;   // micro-batches
  std::size_t length = 0;  // operators of one micro-batch (count == 1: the whole step)
  std::size_t operators = 0;  // of the whole step
  std::vector<std::size_t> begins{0};  // where each micro-batch's operators begin
  GraphPtr first;          // the first micro-batch's operators alone (count == 1: the step itself)

  /// Micro-batch m's operator (0-based m) at the place of the first micro-batch's `op`. kNone — the end of the
  /// first micro-batch's step, where a recomputation nothing reads goes — becomes the operator after micro-batch m
  /// (kNone after the last one when nothing follows it).
  [[nodiscard]] MONET_API OperatorId counterpart(OperatorId op, std::size_t m) const;
};

/// The micro-batches of a training step. A UserError at `where` when they are not copies of the first (operator
/// for operator: the same phase, type and name but for the micro-batch's suffix), which the solvers need.
MONET_API MicroBatchSteps micro_batch_steps(const GraphPtr& step, const SourceLocation& where);

/// The first micro-batch's regions (or recomputations) for every micro-batch: each its own operators (names of
/// later micro-batches' regions end in " (micro-batch m)").
MONET_API std::vector<CheckpointRegion> every_micro_batch(const MicroBatchSteps& steps,
                                                          const std::vector<CheckpointRegion>& first);
MONET_API std::vector<Recomputation> every_micro_batch(const MicroBatchSteps& steps,
                                                       const std::vector<Recomputation>& first);

/// What the step of every micro-batch is checked against: the first micro-batch's rewritten step (before `finish`)
/// and the solver's peak for it. A UserError at policy.where when the step of all micro-batches, rewritten
/// (`whole`, before `finish`), does not peak at that peak or does not recompute k times the first one's MACs and
/// cost: then the micro-batches are not the same problem.
MONET_API void check_every_micro_batch(const MicroBatchSteps& steps, const GraphPtr& first_rewritten,
                                       const GraphPtr& whole_rewritten, std::int64_t predicted_peak,
                                       const CheckpointPolicy& policy, const RecomputeCost& cost,
                                       const GraphFinish& finish, const std::string& solver);

/// The optimal policy's regions for a step of several micro-batches: `solve_first` (a solver on one micro-batch's
/// step, filling its CheckpointSolve) on the first micro-batch, its regions applied to every micro-batch, checked
/// (check_every_micro_batch); `solve` reports the first micro-batch's choice with the step's cost (k times its).
MONET_API std::vector<CheckpointRegion> solve_every_micro_batch(
    const GraphPtr& graph, const MicroBatchSteps& steps, const CheckpointPolicy& policy, const RecomputeCost& cost,
    const GraphFinish& finish, const std::string& solver, CheckpointSolve* solve,
    const std::function<std::vector<CheckpointRegion>(const GraphPtr& first, CheckpointSolve* solve)>& solve_first);

}  // namespace monet
