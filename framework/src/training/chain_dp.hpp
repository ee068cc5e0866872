#pragma once
// What the two chain DPs of checkpointing share (checkpoint_optimal.cpp: a keep/recompute choice per block;
// checkpoint_segments.cpp: runs of blocks): a partial choice with the live bytes of the positions still open, the
// peak of those already final, and its recompute cost; closing the positions final after a stage; pruning the
// dominated choices; the cheapest choice per peak at the end.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "monet/util/error.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/memory.hpp"

namespace monet::detail {

/// An open position a partial choice lacks (a recomputation of a block it keeps).
inline constexpr std::int64_t kAbsent = std::numeric_limits<std::int64_t>::min() / 4;

template <class Choice>
struct ChainState {
  Choice choice;                   // per block chosen so far; back() decides the next block's options
  std::vector<std::int64_t> open;  // per open position (the DP's absent marker: the choice lacks it)
  std::int64_t closed = 0;         // the largest final position
  double cost = 0;
};

/// `a` is no worse than `b` everywhere, with the same last block state (what the next stage depends on).
template <class Choice>
bool dominates(const ChainState<Choice>& a, const ChainState<Choice>& b) {
  if (a.choice.back() != b.choice.back() || a.cost > b.cost || a.closed > b.closed) return false;
  for (std::size_t i = 0; i < a.open.size(); ++i) {
    if (a.open[i] > b.open[i]) return false;
  }
  return true;
}

/// After stage `s`: the positions final by then (`closes[p] <= s`) join each state's closed peak and leave
/// `open_positions`; then only the states no other dominates stay (for equal states, the first).
template <class Choice>
void close_stage(std::vector<ChainState<Choice>>& states, std::vector<std::size_t>& open_positions,
                 const std::vector<std::size_t>& closes, std::size_t s) {
  std::vector<std::size_t> still, keep_index;
  for (std::size_t i = 0; i < open_positions.size(); ++i) {
    if (closes[open_positions[i]] <= s) continue;
    still.push_back(open_positions[i]);
    keep_index.push_back(i);
  }
  for (ChainState<Choice>& x : states) {
    for (std::size_t i = 0; i < x.open.size(); ++i) {
      if (closes[open_positions[i]] <= s) x.closed = std::max(x.closed, x.open[i]);
    }
    std::vector<std::int64_t> open;
    open.reserve(still.size());
    for (std::size_t i : keep_index) open.push_back(x.open[i]);
    x.open = std::move(open);
  }
  open_positions = std::move(still);
  std::vector<bool> dominated(states.size(), false);
  for (std::size_t i = 0; i < states.size(); ++i) {
    for (std::size_t j = 0; j < states.size() && !dominated[i]; ++j) {
      if (i == j || dominated[j] || !dominates(states[j], states[i])) continue;
      dominated[i] = !dominates(states[i], states[j]) || j < i;
    }
  }
  std::vector<ChainState<Choice>> kept;
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (!dominated[i]) kept.push_back(std::move(states[i]));
  }
  states = std::move(kept);
}

/// The final states as `Result{choice, peak, cost}`, by peak, each cheaper than every one with a smaller peak.
template <class Result, class Choice>
std::vector<Result> cheapest_per_peak(const std::vector<ChainState<Choice>>& states) {
  std::vector<Result> front;
  for (const ChainState<Choice>& st : states) front.push_back(Result{st.choice, st.closed, st.cost});
  std::sort(front.begin(), front.end(), [](const Result& a, const Result& b) {
    return a.peak != b.peak ? a.peak < b.peak : a.cost < b.cost;
  });
  std::vector<Result> out;
  for (Result& c : front) {
    if (out.empty() || c.cost < out.back().cost) out.push_back(std::move(c));
  }
  return out;
}

/// The cheapest choice of a front whose peak is within `budget` (none: the budget is below every peak).
template <class Result>
std::optional<Result> cheapest_within(const std::vector<Result>& front, std::int64_t budget) {
  std::optional<Result> best;
  for (const Result& c : front) {
    if (c.peak <= budget && (!best || c.cost < best->cost)) best = c;
  }
  return best;
}

/// The policy's choice on an exact DP's front: the cheapest within its budget (a UserError at the budget when
/// none is), recorded as the proven optimum in `solve` (optional). `what` names the choices ("choice",
/// "segmentation") for the message.
template <class Result>
Result cheapest_or_throw(const std::vector<Result>& front, const CheckpointPolicy& policy, const std::string& what,
                         std::size_t blocks, const std::string& graph, const std::string& solver, CheckpointSolve* solve) {
  const std::optional<Result> best = cheapest_within(front, policy.budget);
  if (!best) {
    throw UserError(policy.where, "checkpoint budget " + std::to_string(policy.budget) +
                                      " B is below the smallest backward activation peak any " + what + " of the " +
                                      std::to_string(blocks) + " blocks of " + graph + " reaches (" +
                                      std::to_string(front.empty() ? 0 : front.front().peak) + " B)");
  }
  if (solve) {  // the DP is exact: its answer is proven optimal
    *solve = CheckpointSolve{};
    solve->solver = solver;
    solve->status = "optimal";
    solve->cost = policy.cost;
    solve->budget = policy.budget;
    solve->objective = solve->best_bound = best->cost;
    solve->peak = best->peak;
    solve->blocks = blocks;
  }
  return *best;
}

/// The chain DPs are exact only on a chain of blocks (a block's storages live as long as its own choice and its
/// successor's say). Their choice is rewritten and measured: a peak other than the model's means the blocks are not
/// a chain here (a block reading a storage of one two or more before it, or a module whose operators several
/// calls share), and the answer would not be what it claims: a UserError at the policy that names the MILP.
inline void check_chain_model(const GraphPtr& graph, const std::vector<CheckpointRegion>& regions,
                              const GraphFinish& finish, std::int64_t predicted, const CheckpointPolicy& policy,
                              const std::string& solver) {
  GraphPtr g = apply_checkpointing(*graph, regions);
  if (finish) g = finish(g);
  const std::int64_t measured = peak_live_bytes(backward_activations(*g), g->operators().size());
  if (measured == predicted) return;
  throw UserError(policy.where, "solver = \"" + solver + "\" models the blocks of " + graph->name() +
                                    " as a chain, but they do not form one: its choice peaks at " +
                                    std::to_string(measured) + " B, not the " + std::to_string(predicted) +
                                    " B its model predicts" +
                                    (measured > policy.budget ? ", over the budget of " + std::to_string(policy.budget) + " B" : "") +
                                    " (a block reads the output of one two or more before it, or one module's "
                                    "operators belong to several calls); use solver = \"milp\", which assumes no chain");
}

}  // namespace monet::detail
