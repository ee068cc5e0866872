#pragma once
// The `optimal` policy with Rotor's nested recomputation (solver = "rotor"; Beaumont et al. 2019, "Optimal
// checkpointing for heterogeneous chains"; docs/training.md#rotors-nested-recomputation). In the backward pass a
// recomputed run of blocks may itself keep some of its recomputed block outputs as checkpoints and recompute the
// runs between them again, down to blocks whose recomputation keeps all their activations for their backward
// (Rotor's F_all) — so an operator can run three or more times. The DP is Rotor's persistent formulation over the
// chain of ModuleTree::blocks(), with memory in bytes measured from the graph (no slots): for each sub-chain it
// keeps the whole (peak, cost) front, so the result is exact for the model. The schedule becomes real operators
// through apply_recomputations, and its rewritten graph is measured before it is used.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/recompute_plan.hpp"

namespace monet {

/// A Rotor schedule as a tree. Top level (the forward pass ran every block once, for free):
///   keep       block `first` saves what its backward reads; `next` schedules blocks first + 1 ..
///   segment    blocks first .. split are a run that keeps only its input; `next` schedules split + 1 .., then
///              `inner` (a nested step over first .. split) recomputes the run.
/// Nested, over blocks first .. last with block first's input available:
///   all        recompute block `first` keeping what its backward reads (F_all); `next` does first + 1 .. last,
///              then block first's backward runs
///   checkpoint recompute first .. split - 1 keeping only block first's input (F_ck, F_n) up to block split's input,
///              the next checkpoint; `next` does split .. last, then `inner` does first .. split - 1 again.
struct RotorStep {
  enum class Kind { keep, segment, all, checkpoint };
  Kind kind = Kind::keep;
  std::size_t first = 0, last = 0, split = 0;
  std::shared_ptr<const RotorStep> next, inner;  // null: nothing left
};
using RotorSchedule = std::shared_ptr<const RotorStep>;

/// A step of a schedule (the DP builds them; tests write schedules by hand).
MONET_API RotorSchedule rotor_step(RotorStep::Kind kind, std::size_t first, std::size_t last, std::size_t split,
                                   RotorSchedule next, RotorSchedule inner);

/// The chain's model: per block, what each kind of computation of it keeps and costs (measured on the graph).
struct RotorChain {
  struct Forward {                 // one recomputation of a block
    // its largest live bytes, by which of its input's storages die in it: none (F_ck), all (F_n), those the
    // backward does not read (F_all with the input owned fresh), and of those, the ones the previous block's F_all
    // did not keep (F_all after F_all); kNoPosition: no operator runs
    std::int64_t peak[4] = {};
    double cost = 0;
    std::int64_t macs = 0;
  };
  struct Block {
    std::vector<OperatorId> operators;  // forward operators (one micro-batch), graph order
    Forward f, all, all_last;  // F_ck / F_n (only its output), F_all followed by the next block, F_all last of a run
    std::int64_t out = 0;            // bytes the next block reads (Rotor's x)
    std::int64_t saved = 0;          // bytes its backward reads, its output's included when read (Rotor's x̄)
    std::int64_t out_not_saved = 0;  // of `out`, those its backward does not read
    std::int64_t out_read_next = 0, out_not_saved_read_next = 0;  // of those, what the next block's backward reads
    std::int64_t backward_peak[2] = {};  // its backward's largest live bytes: input owned fresh / after F_all
    std::int64_t constant_before = 0;    // bytes outside the chain live where its recomputations run
    OperatorId before = kNone;           // where recomputations before its backward go
  };
  std::vector<std::string> names;
  std::vector<Block> blocks;
  RecomputeSemantics semantics = RecomputeSemantics::pytorch;  // what a recomputation of a block runs
  std::int64_t tail_peak[2] = {};  // backward operators before the last block's: input owned fresh / after F_all

  [[nodiscard]] std::size_t size() const { return blocks.size(); }
  /// The model's training.peak_activation_bytes and recompute cost (and MACs) of a schedule.
  [[nodiscard]] MONET_API std::int64_t peak(const RotorSchedule& schedule) const;
  [[nodiscard]] MONET_API double cost(const RotorSchedule& schedule) const;
  [[nodiscard]] MONET_API std::int64_t macs(const RotorSchedule& schedule) const;
  /// The schedule as recomputations for apply_recomputations.
  [[nodiscard]] MONET_API std::vector<Recomputation> plan(const RotorSchedule& schedule) const;
  /// The top-level runs (segments) of a schedule as regions, for reports; and a one-line description.
  [[nodiscard]] MONET_API std::vector<CheckpointRegion> regions(const RotorSchedule& schedule) const;
  [[nodiscard]] MONET_API std::string describe(const RotorSchedule& schedule) const;
};

/// No operator (an empty computation or backward): below every sum of bytes.
inline constexpr std::int64_t kNoPosition = INT64_MIN / 4;

/// The model of ModuleTree::blocks() of a training graph with one micro-batch (a UserError otherwise; rotor_regions
/// gives it the first micro-batch's step of a step with several).
/// Under `pytorch` semantics every recomputation of a block runs it whole.
MONET_API RotorChain rotor_chain(const GraphPtr& graph, const RecomputeCost& cost = {}, const GraphFinish& finish = {},
                                 RecomputeSemantics semantics = RecomputeSemantics::pytorch);

struct RotorChoice {
  RotorSchedule schedule;
  std::int64_t peak = 0;
  double cost = 0;
};
/// Every schedule not dominated in (peak, cost) by the model, by increasing peak (each cheaper than the previous).
MONET_API std::vector<RotorChoice> rotor_front(const RotorChain& chain);

/// Rotor's single-level schedules: the segmentation with the runs [first, last] (each recomputed once keeping
/// everything), the other blocks kept — what solver = "segments" chooses among.
MONET_API RotorSchedule rotor_segmentation(std::size_t blocks, const std::vector<std::pair<std::size_t, std::size_t>>& runs);

/// The rewritten step of a schedule (before `finish`).
MONET_API GraphPtr apply_rotor(const GraphPtr& graph, const RotorChain& chain, const RotorSchedule& schedule);

/// solver = "rotor": the cheapest schedule of the model's front within the budget (a UserError at the budget when
/// none is), rewritten and measured: a UserError naming the MILP when the step's peak or recompute cost is not the
/// model's (the blocks are not a chain). With several micro-batches the model is the first micro-batch's step and
/// every micro-batch runs the schedule on its own operators (checkpoint_micro_batches.hpp; the whole step is
/// measured too). Returns the top-level runs as regions (per micro-batch); `step` receives the rewritten step
/// (before `finish`).
MONET_API std::vector<CheckpointRegion> rotor_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                                      const RecomputeCost& cost, const GraphFinish& finish,
                                                      CheckpointSolve* solve, GraphPtr* step);

}  // namespace monet
