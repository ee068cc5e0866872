// The optimal checkpointing solvers on a step of several micro-batches (checkpoint_micro_batches.hpp): the first
// micro-batch's step alone, its choice for every copy, and the check of the whole step against it.
#include "monet/training/checkpoint_micro_batches.hpp"

#include <cctype>
#include <cmath>
#include <spdlog/spdlog.h>

#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

bool in_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw || p == Phase::recompute; }

/// `name` without the micro-batch tag ("b0_fcA@2/dX" -> "b0_fcA/dX" for "@2"; "@20" stays).
std::string without_tag(std::string name, const std::string& tag) {
  for (std::size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at)) {
    const std::size_t end = at + tag.size();
    if (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) {
      at = end;
      continue;
    }
    name.erase(at, tag.size());
  }
  return name;
}

/// The recomputed MACs and cost of a (finished) step.
std::pair<std::int64_t, double> recomputed(const Graph& g, const RecomputeCost& cost) {
  std::int64_t macs = 0;
  double c = 0;
  for (const Operator& op : g.operators()) {
    if (op.phase != Phase::recompute) continue;
    macs += op.macs();
    c += cost ? cost(g, op) : static_cast<double>(op.macs());
  }
  return {macs, c};
}

}  // namespace

OperatorId MicroBatchSteps::counterpart(OperatorId op, std::size_t m) const {
  if (op != kNone) return static_cast<OperatorId>(static_cast<std::size_t>(op) + begins[m]);
  const std::size_t after = begins[m] + length;
  return after < operators ? static_cast<OperatorId>(after) : kNone;
}

MicroBatchSteps micro_batch_steps(const GraphPtr& step, const SourceLocation& where) {
  const Graph& g = *step;
  const std::size_t n = g.operators().size();
  MicroBatchSteps s;
  s.length = s.operators = n;
  s.first = step;
  std::size_t start = n;
  for (const Operator& op : g.operators()) {
    if (in_backward(op.phase)) {
      start = static_cast<std::size_t>(op.id);
      break;
    }
  }
  // Each later micro-batch begins with a forward operator after the previous one's backward pass.
  for (std::size_t i = start; i < n; ++i) {
    if (g.op(static_cast<OperatorId>(i)).phase != Phase::forward) continue;
    if (g.op(static_cast<OperatorId>(i - 1)).phase != Phase::forward) s.begins.push_back(i);
  }
  s.count = s.begins.size();
  if (s.count == 1) return s;
  s.length = s.begins[1];
  const auto not_copies = [&](const std::string& what) {
    return UserError(where, "the optimal checkpoint solvers solve the first of the " + std::to_string(s.count) +
                                " micro-batches of " + g.name() + " and apply its choice to every one, but they are " +
                                "not copies of it: " + what);
  };
  for (std::size_t m = 1; m < s.count; ++m) {
    const std::string tag = "@" + std::to_string(m + 1);
    const std::size_t end = m + 1 < s.count ? s.begins[m + 1] : n;
    if (s.begins[m] + s.length > end) {
      throw not_copies("micro-batch " + std::to_string(m + 1) + " has fewer operators than the first");
    }
    for (std::size_t j = 0; j < s.length; ++j) {
      const Operator& a = g.op(static_cast<OperatorId>(j));
      const Operator& b = g.op(static_cast<OperatorId>(s.begins[m] + j));
      if (a.phase != b.phase || a.type != b.type || without_tag(b.name, tag) != a.name) {
        throw not_copies("operator '" + b.name + "' of micro-batch " + std::to_string(m + 1) + " stands where the first has '" +
                         a.name + "'");
      }
    }
    // After the copy: operators of no micro-batch (the accumulation of its gradients), never a forward one.
    for (std::size_t i = s.begins[m] + s.length; i < end; ++i) {
      if (g.op(static_cast<OperatorId>(i)).phase == Phase::forward) {
        throw not_copies("forward operator '" + g.op(static_cast<OperatorId>(i)).name + "' follows micro-batch " +
                         std::to_string(m + 1) + "'s backward pass");
      }
    }
  }
  // The first micro-batch's step: its operators, every tensor (those of the others are left unread).
  GraphBuilder b(g.name());
  for (const Tensor& t : g.tensors()) b.add_tensor(t);
  for (std::size_t j = 0; j < s.length; ++j) {
    Operator op = g.op(static_cast<OperatorId>(j));
    std::erase_if(op.after, [&](OperatorId a) { return static_cast<std::size_t>(a) >= s.length; });
    b.add_operator(std::move(op));
  }
  s.first = std::move(b).build();
  return s;
}

std::vector<CheckpointRegion> every_micro_batch(const MicroBatchSteps& steps, const std::vector<CheckpointRegion>& first) {
  std::vector<CheckpointRegion> out;
  for (std::size_t m = 0; m < steps.count; ++m) {
    for (const CheckpointRegion& r : first) {
      CheckpointRegion x{r.name + (m == 0 ? "" : " (micro-batch " + std::to_string(m + 1) + ")"), {}, r.semantics};
      for (OperatorId o : r.operators) x.operators.push_back(steps.counterpart(o, m));
      out.push_back(std::move(x));
    }
  }
  return out;
}

std::vector<Recomputation> every_micro_batch(const MicroBatchSteps& steps, const std::vector<Recomputation>& first) {
  std::vector<Recomputation> out;
  for (std::size_t m = 0; m < steps.count; ++m) {
    for (const Recomputation& r : first) {
      Recomputation x{r.name + (m == 0 ? "" : " (micro-batch " + std::to_string(m + 1) + ")"), {}, steps.counterpart(r.before, m),
                      r.semantics};
      for (OperatorId o : r.operators) x.operators.push_back(steps.counterpart(o, m));
      out.push_back(std::move(x));
    }
  }
  return out;
}

void check_every_micro_batch(const MicroBatchSteps& steps, const GraphPtr& first_rewritten, const GraphPtr& whole_rewritten,
                             std::int64_t predicted_peak, const CheckpointPolicy& policy, const RecomputeCost& cost,
                             const GraphFinish& finish, const std::string& solver) {
  const GraphPtr one = finish ? finish(first_rewritten) : first_rewritten;
  const GraphPtr all = finish ? finish(whole_rewritten) : whole_rewritten;
  const std::int64_t peak = peak_live_bytes(backward_activations(*all), all->operators().size());
  const auto [macs1, cost1] = recomputed(*one, cost);
  const auto [macs, c] = recomputed(*all, cost);
  const auto k = static_cast<std::int64_t>(steps.count);
  const double kc = static_cast<double>(k) * cost1;
  const bool same_cost = std::abs(c - kc) <= 1e-9 * std::max(1.0, std::abs(kc));
  spdlog::info("checkpoint {} on {} micro-batches: peak {} B (one micro-batch: {} B), {} MACs recomputed ({} x {})",
               solver, k, peak, predicted_peak, macs, k, macs1);
  if (peak == predicted_peak && macs == k * macs1 && same_cost) return;
  std::string what = "the step then peaks at " + std::to_string(peak) + " B, not the " + std::to_string(predicted_peak) +
                     " B of one micro-batch";
  if (macs != k * macs1 || !same_cost) {
    what += ", and recomputes " + std::to_string(macs) + " MACs (cost " + format_number(c) + "), not " +
            std::to_string(k) + " x " + std::to_string(macs1) + " (cost " + format_number(kc) + ")";
  }
  throw UserError(policy.where, "solver = \"" + solver + "\" solves the first of the " + std::to_string(k) +
                                    " micro-batches of " + whole_rewritten->name() +
                                    " and applies its choice to every one, but " + what +
                                    ": its micro-batches are not the same problem (a tensor of one is live in "
                                    "another's backward pass)");
}

std::vector<CheckpointRegion> solve_every_micro_batch(
    const GraphPtr& graph, const MicroBatchSteps& steps, const CheckpointPolicy& policy, const RecomputeCost& cost,
    const GraphFinish& finish, const std::string& solver, CheckpointSolve* solve,
    const std::function<std::vector<CheckpointRegion>(const GraphPtr& first, CheckpointSolve* solve)>& solve_first) {
  CheckpointSolve one;
  const std::vector<CheckpointRegion> first = solve_first(steps.first, &one);
  std::vector<CheckpointRegion> regions = every_micro_batch(steps, first);
  check_every_micro_batch(steps, apply_checkpointing(*steps.first, first), apply_checkpointing(*graph, regions), one.peak,
                          policy, cost, finish, solver);
  // The step's cost: every micro-batch recomputes what the first does (the gap, a ratio, stays).
  const auto k = static_cast<double>(steps.count);
  one.objective *= k;
  one.best_bound *= k;
  if (solve) *solve = one;
  return regions;
}

}  // namespace monet
