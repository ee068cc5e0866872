// apply_recomputations (recompute_plan.hpp): copies placed by a plan, each reader taking the latest copy before it.
#include "monet/training/recompute_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "monet/ir/renumber.hpp"
#include "recompute_names.hpp"

namespace monet {

namespace {
bool is_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw; }
}  // namespace

GraphPtr apply_recomputations(const Graph& g, const std::vector<Recomputation>& plan) {
  const std::size_t n_ops = g.operators().size();
  // Run order: by the operator they precede, plan order among equals.
  std::vector<std::size_t> order(plan.size());
  for (std::size_t j = 0; j < plan.size(); ++j) order[j] = j;
  auto at = [&](std::size_t j) {
    const OperatorId b = plan[j].before;
    return b == kNone ? n_ops : static_cast<std::size_t>(b);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return at(a) < at(b); });
  std::set<OperatorId> covered;
  for (const Recomputation& r : plan) {
    for (OperatorId o : r.operators) {
      if (static_cast<std::size_t>(o) >= n_ops || g.op(o).phase != Phase::forward) {
        throw UserError(static_cast<std::size_t>(o) < n_ops ? g.op(o).origin : SourceLocation{},
                        "recomputation '" + r.name + "' lists an operator that is not a forward operator");
      }
      covered.insert(o);
    }
    if (r.before != kNone && static_cast<std::size_t>(r.before) > n_ops) {
      throw UserError("recomputation '" + r.name + "' goes before an operator the graph does not have");
    }
  }

  // A read: the run (index into `order`) whose copy it takes, -1 for the forward tensor, and the tensor.
  using Source = std::pair<int, TensorId>;
  std::map<OperatorId, int> latest;  // forward operator -> the last run so far that copies it
  auto source = [&](TensorId t) -> Source {
    const OperatorId p = g.tensor(t).producer;
    if (p == kNone || !covered.contains(p)) return {-1, t};
    const auto it = latest.find(p);
    return it == latest.end() ? Source{-1, t} : Source{it->second, t};
  };
  struct Copy {
    OperatorId forward;
    std::vector<Source> operands;  // per operand: outputs as {run, tensor}
    std::vector<Source> keeps_alive;
    bool live = false;
  };
  std::vector<std::vector<Copy>> runs(order.size());
  std::map<std::size_t, std::pair<std::vector<Source>, std::vector<Source>>> redirected;  // backward op -> sources
  std::size_t next = 0;  // the next run in `order`
  for (std::size_t i = 0; i <= n_ops; ++i) {
    for (; next < order.size() && at(order[next]) == i; ++next) {
      const Recomputation& r = plan[order[next]];
      std::vector<OperatorId> ops = r.operators;
      std::sort(ops.begin(), ops.end());
      for (OperatorId f : ops) {
        Copy c{f, {}, {}, false};
        for (const Operand& o : g.op(f).operands) {
          c.operands.push_back(o.is_output() ? Source{static_cast<int>(next), o.tensor} : source(o.tensor));
        }
        for (TensorId k : g.op(f).keeps_alive) c.keeps_alive.push_back(source(k));
        latest[f] = static_cast<int>(next);
        runs[next].push_back(std::move(c));
      }
    }
    if (i == n_ops) break;
    const Operator& op = g.op(static_cast<OperatorId>(i));
    if (!is_backward(op.phase)) continue;
    auto& [operands, keeps] = redirected[i];
    for (const Operand& o : op.operands) operands.push_back(o.is_output() ? Source{-1, o.tensor} : source(o.tensor));
    for (TensorId k : op.keeps_alive) keeps.push_back(source(k));
  }

  // What runs: a `pytorch` run whole, as the plan's executor calls the blocks' forward; of a `minimal` one the
  // copies needed, from the backward readers back through the copies they read.
  std::set<Source> needed;
  for (const auto& [i, reads] : redirected) {
    for (const Source& s : reads.first) {
      if (s.first >= 0) needed.insert(s);
    }
    for (const Source& s : reads.second) {
      if (s.first >= 0) needed.insert(s);
    }
  }
  for (std::size_t j = runs.size(); j-- > 0;) {
    const bool whole = plan[order[j]].semantics == RecomputeSemantics::pytorch;
    for (auto it = runs[j].rbegin(); it != runs[j].rend(); ++it) {
      const auto& operands = g.op(it->forward).operands;
      it->live = whole;
      for (std::size_t q = 0; q < operands.size(); ++q) {
        it->live = it->live || (operands[q].is_output() && needed.contains(it->operands[q]));
      }
      if (!it->live) continue;
      for (std::size_t q = 0; q < operands.size(); ++q) {
        if (!operands[q].is_output() && it->operands[q].first >= 0) needed.insert(it->operands[q]);
      }
      for (const Source& s : it->keeps_alive) {
        if (s.first >= 0) needed.insert(s);
      }
    }
  }

  GraphBuilder b(g.name());
  for (const Tensor& t : g.tensors()) b.add_tensor(t);
  std::map<Source, TensorId> copy_of;
  std::map<OperatorId, int> copies;  // forward operator -> live copies so far (its names' numbers)
  std::vector<std::vector<std::string>> tags(runs.size());
  for (std::size_t j = 0; j < runs.size(); ++j) {
    for (const Copy& c : runs[j]) {
      if (!c.live) {
        tags[j].emplace_back();
        continue;
      }
      const int k = ++copies[c.forward];
      tags[j].push_back(std::string(detail::kRecomputeTag) + (k > 1 ? std::to_string(k) : ""));
      for (const Operand& o : g.op(c.forward).operands) {
        if (!o.is_output()) continue;
        Tensor t = g.tensor(o.tensor);
        t.name += tags[j].back();
        t.in_place_of = kNone;
        copy_of[{static_cast<int>(j), o.tensor}] = b.add_tensor(std::move(t));
      }
    }
  }
  auto resolve = [&](const Source& s) { return s.first < 0 ? s.second : copy_of.at(s); };

  std::vector<OperatorId> new_id(n_ops, kNone);
  std::vector<std::pair<OperatorId, OperatorId>> made;  // copy -> forward operator (old id)
  next = 0;
  for (std::size_t i = 0; i <= n_ops; ++i) {
    for (; next < order.size() && at(order[next]) == i; ++next) {
      for (std::size_t x = 0; x < runs[next].size(); ++x) {
        const Copy& c = runs[next][x];
        if (!c.live) continue;
        Operator op = g.op(c.forward);
        op.name += tags[next][x];
        op.phase = Phase::recompute;
        for (std::size_t q = 0; q < op.operands.size(); ++q) op.operands[q].tensor = resolve(c.operands[q]);
        for (std::size_t q = 0; q < op.keeps_alive.size(); ++q) op.keeps_alive[q] = resolve(c.keeps_alive[q]);
        op.after.clear();  // the forward pass's ordering constraints are met by the copies' inputs
        made.emplace_back(b.add_operator(std::move(op)), c.forward);
      }
    }
    if (i == n_ops) break;
    Operator op = g.op(static_cast<OperatorId>(i));
    if (const auto it = redirected.find(i); it != redirected.end()) {
      for (std::size_t q = 0; q < op.operands.size(); ++q) op.operands[q].tensor = resolve(it->second.first[q]);
      for (std::size_t q = 0; q < op.keeps_alive.size(); ++q) op.keeps_alive[q] = resolve(it->second.second[q]);
    }
    new_id[i] = b.add_operator(std::move(op));
  }
  follow_moved_operators(b, new_id);
  for (const auto& [c, f] : made) b.op(c).derived_from = new_id[static_cast<std::size_t>(f)];
  return std::move(b).build();
}

}  // namespace monet
