#pragma once
// The `optimal` checkpointing policy solved as a mixed-integer linear programme (Checkmate, Jain et al. 2020) with
// CBC, valid on region graphs of any shape (docs/training.md#the-milp). The choices are the dynamic programme's
// (each block of the chain checkpointed as its own region, or kept), but the memory model does not assume a
// chain: every activation storage's liveness in the backward pass is read off two rewrites of the step (no block
// and every block checkpointed) as "live from `from` to its last reader that is present", each reader present
// under a condition on one block's choice. The peak constraint is one row per backward position, the
// "last present reader" an OR linearised with one continuous variable per storage and reader position.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monet/training/checkpoint_optimal.hpp"

namespace monet {

/// When a reader of a storage is present: always (block < 0), or when `block` is (or is not) checkpointed.
struct RegionLiteral {
  int block = -1;
  bool checkpointed = true;
  [[nodiscard]] bool holds(const std::vector<bool>& c) const { return block < 0 || c[static_cast<std::size_t>(block)] == checkpointed; }
};

/// One activation storage of the backward pass: live at position p when it exists, p >= from, and a reader at a
/// position q >= p is present.
struct StorageLiveness {
  std::string name;
  std::int64_t bytes = 0;
  int exists_if = -1;    // -1: always; b: only when block b is checkpointed (a recomputed tensor)
  std::size_t from = 0;  // backward position it becomes live (0 for what the forward pass made)
  std::vector<std::pair<std::size_t, RegionLiteral>> readers;  // (position, when it reads the storage), sorted
};

/// Candidate blocks on a region graph of any shape, and the memory and cost of every choice of them.
struct CheckpointRegionGraph : CheckpointBlockChoice {
  std::vector<int> present_if;                         // per backward position: -1 always, b when b is checkpointed
  std::vector<StorageLiveness> storages;

  /// training.peak_activation_bytes of the step with the blocks `checkpointed` (as the rewrite measures it).
  [[nodiscard]] MONET_API std::int64_t peak(const std::vector<bool>& checkpointed) const;
};

/// The model of a training graph's blocks (ModuleTree::blocks(), or `blocks` with their names).
MONET_API CheckpointRegionGraph checkpoint_region_graph(const GraphPtr& graph, const RecomputeCost& cost = {},
                                                        const GraphFinish& finish = {},
                                                        RecomputeSemantics semantics = RecomputeSemantics::pytorch);
MONET_API CheckpointRegionGraph checkpoint_region_graph(const GraphPtr& graph,
                                                        std::vector<std::vector<CheckpointRegion>> blocks,
                                                        std::vector<std::string> names, const RecomputeCost& cost = {},
                                                        const GraphFinish& finish = {});

struct MilpSolution {
  std::optional<std::vector<bool>> checkpointed;  // the best choice found (nullopt: none, or infeasible)
  std::int64_t peak = 0;                          // of that choice (exact, from the model)
  double cost = 0;                                // of that choice
  double bound = 0;                               // CBC's lower bound on the optimum cost
  double gap = 0;                                 // (cost - bound) / cost; 0 when proven optimal
  bool optimal = false;                           // proven
  bool infeasible = false;                        // proven: no choice fits the budget
  bool time_limit = false, node_limit = false;    // CBC stopped at that limit before proving optimality
  std::int64_t nodes = 0;                         // branch-and-bound nodes explored
  double seconds = 0;                             // CBC's wall time
  std::size_t variables = 0, rows = 0;
};

/// The least-cost choice with peak <= budget, by CBC within `time_limit_s` and `node_limit` nodes (-1: no limit;
/// from the cheapest feasible of no / every / every other block as a start).
MONET_API MilpSolution solve_checkpoint_milp(const CheckpointRegionGraph& model, std::int64_t budget,
                                             double time_limit_s, std::int64_t node_limit = -1);
/// The choice with the smallest peak (cost ignored): for messages about budgets nothing meets.
MONET_API MilpSolution min_peak_milp(const CheckpointRegionGraph& model, double time_limit_s,
                                     std::int64_t node_limit = -1);

/// The `optimal` policy's regions by the MILP: a UserError at policy.where when no choice fits the budget (with
/// the smallest peak), and at solver.where when CBC finds no choice within its limits. `solve`: as
/// optimal_regions.
MONET_API std::vector<CheckpointRegion> milp_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                                     const CheckpointSolver& solver, const RecomputeCost& cost = {},
                                                     const GraphFinish& finish = {}, CheckpointSolve* solve = nullptr);

}  // namespace monet
