#pragma once
// The `optimal` checkpointing policy: which blocks of the chain (ModuleTree::blocks()) to checkpoint, each as its
// own region, for the least recompute cost with training.peak_activation_bytes under a budget
// (docs/training.md#the-optimal-policy). The memory of every choice comes from the rewritten graph itself: four
// rewrites (no block, every block, every other block, the others) give, per block and per choice of the block and
// its successor, the bytes it keeps live at each operator of the backward pass; a dynamic programme over the
// chain then finds the cheapest choice whose peak fits, exactly (no memory discretisation).
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "monet/training/checkpoint.hpp"

namespace monet {

/// The cost of recomputing one operator of a (checkpointed) training graph, in the unit the policy minimises.
using RecomputeCost = std::function<double(const Graph& graph, const Operator& op)>;
/// What happens to the checkpointed graph before its memory is measured (e.g. mixed precision); may be empty.
using GraphFinish = std::function<GraphPtr(const GraphPtr& graph)>;

/// A chain of candidate blocks and the memory and cost of every choice of them.
/// The candidate blocks both exact policies (the chain DP, the MILP) choose among, and what a choice costs.
struct CheckpointBlockChoice {
  std::vector<std::string> names;                          // per block, for reports
  std::vector<std::vector<CheckpointRegion>> regions;      // per block: its region in every micro-batch
  std::vector<double> cost;                                // per block: recompute cost when checkpointed
  std::vector<std::int64_t> macs;                          // per block: recomputed MACs when checkpointed

  [[nodiscard]] std::size_t size() const { return names.size(); }
  [[nodiscard]] MONET_API double total_cost(const std::vector<bool>& checkpointed) const;
  /// The regions of a choice, for apply_checkpointing.
  [[nodiscard]] MONET_API std::vector<CheckpointRegion> regions_of(const std::vector<bool>& checkpointed) const;
};

struct CheckpointChain : CheckpointBlockChoice {
  // Backward-pass positions (operators from the first backward one, recompute operators included).
  std::vector<int> present_if;                             // -1: always; b: only when block b is checkpointed
  std::vector<std::int64_t> constant;                      // bytes live there whatever the choice
  /// table[b][2·c_b + c_{b+1}][p]: bytes of block b's storages live at p for that choice of b and its successor.
  std::vector<std::array<std::vector<std::int64_t>, 4>> table;

  /// peak_activation_bytes of the graph with the blocks `checkpointed` (as the rewrite measures it).
  [[nodiscard]] MONET_API std::int64_t peak(const std::vector<bool>& checkpointed) const;
};

/// The candidate blocks of a training graph: ModuleTree::blocks() of the first micro-batch, each with its region
/// in every micro-batch, and their names.
struct CheckpointBlocks {
  std::vector<std::vector<CheckpointRegion>> regions;
  std::vector<std::string> names;
};
/// Each region with `semantics` (the policy's).
MONET_API CheckpointBlocks checkpoint_blocks(const Graph& graph, RecomputeSemantics semantics = RecomputeSemantics::pytorch);

/// The chain of ModuleTree::blocks() of a training graph (or of `blocks`, candidate regions per block in forward
/// order, each with one region per micro-batch). `cost` defaults to MACs.
MONET_API CheckpointChain checkpoint_chain(const GraphPtr& graph, const RecomputeCost& cost = {},
                                           const GraphFinish& finish = {}, RecomputeSemantics semantics = RecomputeSemantics::pytorch);
MONET_API CheckpointChain checkpoint_chain(const GraphPtr& graph, std::vector<std::vector<CheckpointRegion>> blocks,
                                           std::vector<std::string> names, const RecomputeCost& cost = {},
                                           const GraphFinish& finish = {});

struct ChainChoice {
  std::vector<bool> checkpointed;
  std::int64_t peak = 0;
  double cost = 0;
};

/// Every choice not dominated in (peak, cost), by increasing peak (the dynamic programme's last stage).
MONET_API std::vector<ChainChoice> chain_front(const CheckpointChain& chain);
/// The cheapest choice whose peak is at most `budget` (ties: the lower peak); nullopt when none fits.
MONET_API std::optional<ChainChoice> optimal_choice(const CheckpointChain& chain, std::int64_t budget);

/// [training.checkpoint] solver, time_limit_s and node_limit of the optimal policy (kept out of CheckpointPolicy,
/// whose layout is part of the plugin ABI).
struct CheckpointSolver {
  std::string name = "dp";      // "dp": the exact chain DP above; "segments": checkpoint_segments.hpp (Rotor's
                                // runs of blocks); "rotor": checkpoint_rotor.hpp (Rotor's nested recomputation);
                                // "milp": checkpoint_milp.hpp (CBC), any graph
  double time_limit_s = 10;     // milp: CBC stops here and keeps the best choice found (the gap is reported)
  std::int64_t node_limit = -1; // milp: CBC stops after this many branch-and-bound nodes (-1: no limit); unlike
                                // the time limit, the same on every machine
  SourceLocation where;         // the `time_limit_s` (or `solver`, `node_limit`) key, for messages
  /// "dp", "segments", "rotor", "milp,SECONDS" or "milp,SECONDS,NODES" (as --checkpoint-solver takes it; part of cache
  /// keys).
  [[nodiscard]] MONET_API std::string text() const;
};

/// Parses --checkpoint-solver's form (see text(); "milp" alone keeps the default time limit); a UserError at
/// `where` for anything else.
MONET_API CheckpointSolver parse_checkpoint_solver(const std::string& text, const SourceLocation& where);

/// How the optimal policy's choice was found: results.json's and `inspect --json`'s training.checkpoint_solver.
struct CheckpointSolve {
  std::string solver;               // "dp", "segments", "rotor" or "milp"
  /// "optimal" (proven; the DP always is), "time_limit" or "node_limit" (CBC stopped there with a choice within
  /// the budget that is not proven the cheapest: `gap` says how far it may be). No choice within the budget, or
  /// none found within the limits, is a UserError instead.
  std::string status;
  std::string cost;                 // the policy's cost: "macs", "latency" (cycles) or "energy" (pJ)
  std::int64_t budget = 0;          // bytes
  double objective = 0;             // the chosen blocks' recompute cost, in the cost's unit
  double best_bound = 0;            // a lower bound on the least cost (= objective when optimal)
  double gap = 0;                   // (objective - best_bound) / objective; 0 when optimal
  std::int64_t peak = 0;            // the choice's training.peak_activation_bytes
  std::vector<std::string> checkpointed;  // the chosen blocks (segments: "first .. last"), in chain order
  std::size_t blocks = 0;           // candidate blocks
  // milp only:
  double time_limit_s = 0;
  std::int64_t node_limit = -1;     // -1: none
  std::int64_t nodes = 0;           // branch-and-bound nodes CBC explored
  std::size_t variables = 0, rows = 0;
  double seconds = 0;               // CBC's wall time (logged, not in results.json: it is not reproducible)
};

/// The `optimal` policy's regions: a UserError at policy.where when even checkpointing the best blocks cannot
/// bring the peak under the budget (the message gives the smallest feasible peak). `solve`, when given, receives
/// how the choice was found. With several micro-batches every solver solves the first micro-batch's step and its
/// regions are those of every micro-batch, checked on the whole step (checkpoint_micro_batches.hpp); `solve`'s
/// objective and bound are then the whole step's. Not for solver "rotor", whose nested schedule is no set of regions (rotor_regions,
/// checkpoint_rotor.hpp, gives its step): std::invalid_argument.
MONET_API std::vector<CheckpointRegion> optimal_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                                        const RecomputeCost& cost = {}, const GraphFinish& finish = {},
                                                        const CheckpointSolver& solver = {},
                                                        CheckpointSolve* solve = nullptr);

}  // namespace monet
