// Rotor's nested recomputation (checkpoint_rotor.hpp), the solver: the chain's model (checkpoint_rotor_chain.cpp),
// its front (checkpoint_rotor_dp.cpp), the cheapest schedule within the budget rewritten and measured
// (checkpoint_rotor_schedule.cpp: the schedule as recomputations).
#include "monet/training/checkpoint_rotor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <spdlog/spdlog.h>

#include "monet/training/checkpoint_micro_batches.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"

namespace monet {

GraphPtr apply_rotor(const GraphPtr& graph, const RotorChain& chain, const RotorSchedule& schedule) {
  return apply_recomputations(*graph, chain.plan(schedule));
}

std::vector<CheckpointRegion> rotor_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                            const RecomputeCost& cost, const GraphFinish& finish, CheckpointSolve* solve,
                                            GraphPtr* step_out) {
  const auto t0 = std::chrono::steady_clock::now();
  // Several micro-batches: the same problem each, solved on the first (checkpoint_micro_batches.hpp).
  const MicroBatchSteps steps = micro_batch_steps(graph, policy.where);
  RotorChain chain;
  try {
    chain = rotor_chain(steps.first, cost, finish, policy.semantics);
  } catch (const UserError& e) {
    throw UserError(policy.where, e.message());
  }
  const std::vector<RotorChoice> front = rotor_front(chain);
  spdlog::info("checkpoint rotor ({} blocks): model and DP {:.3f} s, {} schedules on the front", chain.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), front.size());
  // The front is by increasing peak and decreasing cost: the cheapest within the budget is the last that fits.
  const RotorChoice* best = nullptr;
  for (const RotorChoice& x : front) {
    if (x.peak <= policy.budget) best = &x;
  }
  if (!best) {
    throw UserError(policy.where, "checkpoint budget " + std::to_string(policy.budget) +
                                      " B is below the smallest backward activation peak any nested schedule of the " +
                                      std::to_string(chain.size()) + " blocks of " + graph->name() + " reaches (" +
                                      std::to_string(front.empty() ? 0 : front.front().peak) + " B)");
  }
  // The model is exact only on a chain of blocks: the choice is rewritten and measured, and refused (as dp and
  // segments refuse theirs) when the step's peak or recompute cost is not the model's.
  const std::vector<Recomputation> plan = chain.plan(best->schedule);
  const GraphPtr one = apply_recomputations(*steps.first, plan);
  const GraphPtr measured_graph = finish ? finish(one) : one;
  const std::int64_t measured = peak_live_bytes(backward_activations(*measured_graph), measured_graph->operators().size());
  double measured_cost = 0;
  for (const Operator& op : measured_graph->operators()) {
    if (op.phase == Phase::recompute) measured_cost += cost ? cost(*measured_graph, op) : static_cast<double>(op.macs());
  }
  spdlog::info("checkpoint rotor: {} (peak {} B, the model's {} B; cost {}, the model's {})", chain.describe(best->schedule),
               measured, best->peak, format_number(measured_cost), format_number(best->cost));
  if (measured != best->peak || std::abs(measured_cost - best->cost) > 1e-9 * std::max(1.0, std::abs(best->cost))) {
    throw UserError(policy.where,
                    "solver = \"rotor\" models the blocks of " + graph->name() +
                        " as a chain, but they do not form one: its choice peaks at " + std::to_string(measured) +
                        " B, not the " + std::to_string(best->peak) + " B its model predicts" +
                        (measured > policy.budget ? ", over the budget of " + std::to_string(policy.budget) + " B" : "") +
                        (measured_cost != best->cost ? ", and recomputes " + format_number(measured_cost) + ", not " +
                                                           format_number(best->cost)
                                                     : std::string()) +
                        " (a block reads the output of one two or more before it, or one module's operators belong "
                        "to several calls); use solver = \"milp\", which assumes no chain");
  }
  // Every micro-batch recomputes its own operators as the first does; the step of all of them is measured too.
  GraphPtr g = one;
  if (steps.count > 1) {
    g = apply_recomputations(*graph, every_micro_batch(steps, plan));
    check_every_micro_batch(steps, one, g, best->peak, policy, cost, finish, "rotor");
  }
  if (solve) {
    *solve = CheckpointSolve{};
    solve->solver = "rotor";
    solve->status = "optimal";  // the DP is exact for its model, and the step confirmed the model
    solve->cost = policy.cost;
    solve->budget = policy.budget;
    solve->objective = solve->best_bound = static_cast<double>(steps.count) * best->cost;
    solve->peak = measured;
    solve->blocks = chain.size();
    for (const RotorStep* s = best->schedule.get(); s; s = s->next.get()) {
      if (s->kind == RotorStep::Kind::segment) {
        solve->checkpointed.push_back(s->first == s->split ? chain.names[s->first]
                                                           : chain.names[s->first] + " .. " + chain.names[s->split]);
      }
    }
  }
  if (step_out) *step_out = g;
  return every_micro_batch(steps, chain.regions(best->schedule));
}

}  // namespace monet
