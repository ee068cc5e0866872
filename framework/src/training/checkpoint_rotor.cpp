// Rotor's nested recomputation (checkpoint_rotor.hpp): the chain's model from the graph, the DP over Pareto fronts,
// and the schedule as recomputations.
#include "monet/training/checkpoint_rotor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <spdlog/spdlog.h>

#include "monet/training/checkpoint_micro_batches.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"
#include "recompute_names.hpp"

namespace monet {

namespace {

bool is_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw; }

/// Adds bytes to a maximum that may be "no position".
std::int64_t plus(std::int64_t peak, std::int64_t bytes) { return peak == kNoPosition ? kNoPosition : peak + bytes; }

// ---- The model's formulas, shared by the DP and the evaluation of one schedule. ----
// Every peak counts the storages of the sub-problem: the owned part of its first block's input (all of it when
// it is "fresh": a checkpoint or a result of the same recomputation; after an F_all of the previous block, only
// what that block's backward does not read), what it computes, and the chain's constant bytes where it runs.

std::int64_t owned_input(const RotorChain& c, std::size_t s, int mode) {
  if (s == 0) return 0;
  const RotorChain::Block& p = c.blocks[s - 1];
  return mode == 0 ? p.out : p.out_not_saved;
}
std::int64_t owned_input_read_by_backward(const RotorChain& c, std::size_t s, int mode) {
  if (s == 0) return 0;
  const RotorChain::Block& p = c.blocks[s - 1];
  return mode == 0 ? p.out_read_next : p.out_not_saved_read_next;
}

/// Nested "all" at s over s..t: F_all of s, then s + 1 .. t (peak `rest`, kNoPosition when s == t), then B_s.
std::int64_t peak_all(const RotorChain& c, std::size_t s, std::size_t t, int mode, std::int64_t rest) {
  const RotorChain::Block& b = c.blocks[s];
  const RotorChain::Forward& f = s < t ? b.all : b.all_last;
  const std::int64_t ob = owned_input_read_by_backward(c, s, mode);
  const std::int64_t pf = plus(f.peak[mode == 0 ? 2 : 3], ob + c.blocks[t].constant_before);
  return std::max({pf, plus(rest, ob + b.saved), b.backward_peak[mode]});
}
double cost_all(const RotorChain& c, std::size_t s, std::size_t t) {
  return s < t ? c.blocks[s].all.cost : c.blocks[s].all_last.cost;
}
std::int64_t macs_all(const RotorChain& c, std::size_t s, std::size_t t) {
  return s < t ? c.blocks[s].all.macs : c.blocks[s].all_last.macs;
}
/// Nested "checkpoint" at s over s..t, next checkpoint at `split`: the forwards of s .. split - 1.
std::int64_t peak_forwards(const RotorChain& c, std::size_t s, std::size_t split, std::size_t t, int mode) {
  const std::int64_t base = owned_input(c, s, mode) + c.blocks[t].constant_before;
  std::int64_t p = plus(c.blocks[s].f.peak[0], base);
  for (std::size_t k = s + 1; k < split; ++k) p = std::max(p, plus(c.blocks[k].f.peak[1], base));
  return p;
}
double cost_forwards(const RotorChain& c, std::size_t s, std::size_t split) {
  double x = 0;
  for (std::size_t k = s; k < split; ++k) x += c.blocks[k].f.cost;
  return x;
}
std::int64_t macs_forwards(const RotorChain& c, std::size_t s, std::size_t split) {
  std::int64_t x = 0;
  for (std::size_t k = s; k < split; ++k) x += c.blocks[k].f.macs;
  return x;
}
std::int64_t peak_checkpoint(const RotorChain& c, std::size_t s, std::size_t split, std::size_t t, int mode,
                             std::int64_t later, std::int64_t again) {
  return std::max({peak_forwards(c, s, split, t, mode), plus(later, owned_input(c, s, mode)), again});
}
/// Top level "keep" at s, then s + 1 .. (peak `rest`).
std::int64_t peak_keep(const RotorChain& c, std::size_t s, int mode, std::int64_t rest) {
  const RotorChain::Block& b = c.blocks[s];
  return std::max(plus(rest, owned_input_read_by_backward(c, s, mode) + b.saved), b.backward_peak[mode]);
}
/// Top level "segment" s..e, then e + 1 .. (peak `rest`), then the nested step over s..e (peak `inner`).
std::int64_t peak_segment(const RotorChain& c, std::size_t s, int mode, std::int64_t rest, std::int64_t inner) {
  return std::max(plus(rest, owned_input(c, s, mode)), inner);
}

struct Eval {
  std::int64_t peak = 0;
  double cost = 0;
  std::int64_t macs = 0;
};

/// A nested step over first .. last (its own bounds) or a top-level step from `first` on, evaluated.
Eval evaluate(const RotorChain& c, const RotorStep* x, int mode, bool top) {
  if (!x) return {top ? c.tail_peak[mode] : kNoPosition, 0, 0};
  switch (x->kind) {
    case RotorStep::Kind::keep: {
      const Eval r = evaluate(c, x->next.get(), 1, true);
      return {peak_keep(c, x->first, mode, r.peak), r.cost, r.macs};
    }
    case RotorStep::Kind::segment: {
      const Eval r = evaluate(c, x->next.get(), 0, true);
      const Eval in = evaluate(c, x->inner.get(), mode, false);
      return {peak_segment(c, x->first, mode, r.peak, in.peak), r.cost + in.cost, r.macs + in.macs};
    }
    case RotorStep::Kind::all: {
      const Eval r = evaluate(c, x->next.get(), 1, false);
      return {peak_all(c, x->first, x->last, mode, r.peak), cost_all(c, x->first, x->last) + r.cost,
              macs_all(c, x->first, x->last) + r.macs};
    }
    case RotorStep::Kind::checkpoint: {
      const Eval later = evaluate(c, x->next.get(), 0, false);
      const Eval again = evaluate(c, x->inner.get(), mode, false);
      return {peak_checkpoint(c, x->first, x->split, x->last, mode, later.peak, again.peak),
              cost_forwards(c, x->first, x->split) + later.cost + again.cost,
              macs_forwards(c, x->first, x->split) + later.macs + again.macs};
    }
  }
  return {};
}

/// The forward and backward events of a schedule in the order they run: (block, true) a recomputation of the
/// block, (block, false) its backward.
void events(const RotorStep* x, std::vector<std::pair<std::size_t, bool>>& out) {
  if (!x) return;
  switch (x->kind) {
    case RotorStep::Kind::keep:
      events(x->next.get(), out);
      out.emplace_back(x->first, false);
      return;
    case RotorStep::Kind::segment:
      events(x->next.get(), out);
      events(x->inner.get(), out);
      return;
    case RotorStep::Kind::all:
      out.emplace_back(x->first, true);
      events(x->next.get(), out);
      out.emplace_back(x->first, false);
      return;
    case RotorStep::Kind::checkpoint:
      for (std::size_t k = x->first; k < x->split; ++k) out.emplace_back(k, true);
      events(x->next.get(), out);
      events(x->inner.get(), out);
      return;
  }
}

std::string describe_nested(const RotorChain& c, const RotorStep* x) {
  if (!x) return "";
  const auto& n = c.names;
  if (x->kind == RotorStep::Kind::all) {
    const std::string rest = describe_nested(c, x->next.get());
    return "all " + n[x->first] + (rest.empty() ? "" : "; " + rest);
  }
  const std::string span = x->first + 1 == x->split ? n[x->first] : n[x->first] + " .. " + n[x->split - 1];
  return "keep the input of " + span + " {" + describe_nested(c, x->next.get()) + "} then {" +
         describe_nested(c, x->inner.get()) + "}";
}

}  // namespace

std::int64_t RotorChain::peak(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).peak; }
double RotorChain::cost(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).cost; }
std::int64_t RotorChain::macs(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).macs; }

std::vector<Recomputation> RotorChain::plan(const RotorSchedule& s) const {
  std::vector<std::pair<std::size_t, bool>> ev;
  events(s.get(), ev);
  std::vector<Recomputation> out;
  std::vector<std::size_t> run;
  for (const auto& [b, forward] : ev) {
    if (forward) {
      run.push_back(b);
      continue;
    }
    if (run.empty()) continue;
    Recomputation r;
    r.name = names[run.front()] + (run.size() > 1 ? " .. " + names[run.back()] : "") + " before the backward of " + names[b];
    for (std::size_t k : run) r.operators.insert(r.operators.end(), blocks[k].operators.begin(), blocks[k].operators.end());
    std::sort(r.operators.begin(), r.operators.end());
    r.before = blocks[b].before;
    out.push_back(std::move(r));
    run.clear();
  }
  return out;
}

std::vector<CheckpointRegion> RotorChain::regions(const RotorSchedule& s) const {
  std::vector<CheckpointRegion> out;
  for (const RotorStep* x = s.get(); x; x = x->next.get()) {
    if (x->kind != RotorStep::Kind::segment) continue;
    CheckpointRegion r{x->first == x->split ? names[x->first] : "segment: " + names[x->first] + " .. " + names[x->split], {}};
    for (std::size_t k = x->first; k <= x->split; ++k) {
      r.operators.insert(r.operators.end(), blocks[k].operators.begin(), blocks[k].operators.end());
    }
    std::sort(r.operators.begin(), r.operators.end());
    out.push_back(std::move(r));
  }
  return out;
}

std::string RotorChain::describe(const RotorSchedule& s) const {
  std::vector<std::string> parts;
  for (const RotorStep* x = s.get(); x; x = x->next.get()) {
    if (x->kind != RotorStep::Kind::segment) continue;
    const std::string span = x->first == x->split ? names[x->first] : names[x->first] + " .. " + names[x->split];
    parts.push_back(span + ": " + describe_nested(*this, x->inner.get()));
  }
  return parts.empty() ? "keep every block" : join(parts, "; ");
}

RotorSchedule rotor_segmentation(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& runs) {
  std::function<RotorSchedule(std::size_t)> top = [&](std::size_t s) -> RotorSchedule {
    if (s >= n) return nullptr;
    for (const auto& [a, e] : runs) {
      if (a != s) continue;
      RotorSchedule inner;
      for (std::size_t k = e + 1; k-- > a;) inner = rotor_step(RotorStep::Kind::all, k, e, 0, inner, nullptr);
      return rotor_step(RotorStep::Kind::segment, s, e, e, top(e + 1), inner);
    }
    return rotor_step(RotorStep::Kind::keep, s, s, 0, top(s + 1), nullptr);
  };
  return top(0);
}

RotorChain rotor_chain(const GraphPtr& graph, const RecomputeCost& cost, const GraphFinish& finish) {
  const GraphPtr gf = finish ? finish(graph) : graph;
  const Graph& g = *gf;
  if (g.operators().size() != graph->operators().size()) {
    throw std::logic_error("rotor: finishing the graph changed its operators");
  }
  const std::size_t n_ops = g.operators().size();
  for (const Operator& op : graph->operators()) {
    if (op.phase == Phase::forward && recomputed_in_backward(op)) {
      // apply_checkpointing recomputes these whatever the policy; nested schedules do not model them.
      throw UserError("solver = \"rotor\" does not model operators recomputed in backward whatever the policy ('" +
                      op.name + "', recompute_in_backward)");
    }
  }
  CheckpointBlocks cb = checkpoint_blocks(*graph);
  RotorChain c;
  std::vector<TensorId> root(g.tensors().size());
  for (const Tensor& t : g.tensors()) root[static_cast<std::size_t>(t.id)] = storage_of(g, t.id);
  // A block of views only (a flatten) owns no storage: its output is its predecessor's, which the block after it
  // reads. It joins its predecessor, so that every storage a block reads belongs to the block before it.
  for (std::size_t b = 0; b < cb.regions.size(); ++b) {
    if (cb.regions[b].size() != 1) throw UserError("rotor_chain models the step of one micro-batch (rotor_regions solves several with it)");
    const std::vector<OperatorId>& ops = cb.regions[b][0].operators;
    const bool owns = std::any_of(ops.begin(), ops.end(), [&](OperatorId o) {
      const Operator& op = g.op(o);
      return std::any_of(op.operands.begin(), op.operands.end(), [&](const Operand& x) {
        return x.is_output() && g.tensor(root[static_cast<std::size_t>(x.tensor)]).producer == o;
      });
    });
    if (!owns && !c.blocks.empty()) {
      auto& prev = c.blocks.back().operators;
      prev.insert(prev.end(), ops.begin(), ops.end());
      std::sort(prev.begin(), prev.end());
      c.names.back() += " + " + cb.names[b];
      continue;
    }
    c.names.push_back(cb.names[b]);
    c.blocks.emplace_back();
    c.blocks.back().operators = ops;
  }
  const std::size_t n = c.blocks.size();
  std::vector<int> block_of(n_ops, -1);
  for (std::size_t b = 0; b < n; ++b) {
    for (OperatorId o : c.blocks[b].operators) block_of[static_cast<std::size_t>(o)] = static_cast<int>(b);
  }

  // Activation storages as training.peak_activation_bytes counts them (memory.cpp).
  auto activation = [&](TensorId r) {
    const Tensor& t = g.tensor(r);
    switch (t.role) {
      case TensorRole::weight: case TensorRole::buffer: case TensorRole::optimizer_state:
      case TensorRole::master_weight: case TensorRole::gradient: case TensorRole::weight_gradient: return false;
      default: break;
    }
    return t.producer == kNone || g.op(t.producer).phase == Phase::forward || g.op(t.producer).phase == Phase::loss;
  };
  auto owner = [&](TensorId r) {
    const OperatorId p = g.tensor(r).producer;
    return p == kNone ? -1 : block_of[static_cast<std::size_t>(p)];
  };
  auto producer_block = [&](TensorId t) {
    const OperatorId p = g.tensor(t).producer;
    return p == kNone ? -1 : block_of[static_cast<std::size_t>(p)];
  };
  auto bytes = [&](const std::set<TensorId>& roots) {
    std::int64_t s = 0;
    for (TensorId r : roots) s += g.tensor(r).bytes();
    return s;
  };
  auto reads = [](const Operator& op, const std::function<void(TensorId)>& f) {
    for (const Operand& o : op.operands) {
      if (!o.is_output()) f(o.tensor);
    }
    for (TensorId k : op.keeps_alive) f(k);
  };
  auto uses = [](const Operator& op, const std::function<void(TensorId)>& f) {
    for (const Operand& o : op.operands) f(o.tensor);
    for (TensorId k : op.keeps_alive) f(k);
  };

  std::size_t start = n_ops;
  for (const Operator& op : g.operators()) {
    if (is_backward(op.phase)) {
      start = static_cast<std::size_t>(op.id);
      break;
    }
  }
  auto backward_owner = [&](const Operator& op) {
    return op.derived_from == kNone ? -1 : block_of[static_cast<std::size_t>(op.derived_from)];
  };

  // Per block: its results other forward operators read (X), those its own backward reads (R), and the storages of
  // its results that backward operators of other blocks (the next one, the loss) read (Y).
  std::vector<std::set<TensorId>> xt(n), rt(n), xr(n), rr(n), yr(n);
  std::vector<std::size_t> last(g.tensors().size(), 0);
  for (const Operator& op : g.operators()) {
    const auto i = static_cast<std::size_t>(op.id);
    uses(op, [&](TensorId t) { last[static_cast<std::size_t>(root[static_cast<std::size_t>(t)])] = i; });
    if (op.phase == Phase::forward || op.phase == Phase::loss) {
      const int mine = op.phase == Phase::forward ? block_of[i] : -1;
      reads(op, [&](TensorId t) {
        const int pb = producer_block(t);
        if (pb < 0 || pb == mine) return;
        xt[static_cast<std::size_t>(pb)].insert(t);
        const TensorId r = root[static_cast<std::size_t>(t)];
        if (owner(r) == pb && activation(r)) xr[static_cast<std::size_t>(pb)].insert(r);
      });
    } else if (is_backward(op.phase)) {
      const int ob = backward_owner(op);
      reads(op, [&](TensorId t) {
        const TensorId r = root[static_cast<std::size_t>(t)];
        const int pb = producer_block(t);
        if (pb >= 0 && pb == ob) {
          rt[static_cast<std::size_t>(pb)].insert(t);
          if (owner(r) == pb && activation(r)) rr[static_cast<std::size_t>(pb)].insert(r);
        } else if (owner(r) >= 0 && activation(r)) {
          yr[static_cast<std::size_t>(owner(r))].insert(r);
        }
      });
    }
  }
  auto minus = [](const std::set<TensorId>& a, const std::set<TensorId>& b) {
    std::set<TensorId> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
    return out;
  };
  auto both = [](const std::set<TensorId>& a, const std::set<TensorId>& b) {
    std::set<TensorId> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
    return out;
  };

  // Storages outside the chain (graph inputs, the loss's, operators in no block) live where the graph says.
  std::vector<std::int64_t> constant(n_ops + 1, 0);
  {
    std::vector<std::int64_t> delta(n_ops + 2, 0);
    for (const Tensor& t : g.tensors()) {
      if (root[static_cast<std::size_t>(t.id)] != t.id || !activation(t.id) || owner(t.id) >= 0) continue;
      const std::size_t l = last[static_cast<std::size_t>(t.id)];
      if (l < start) continue;
      const std::size_t from = std::max(start, t.producer == kNone ? std::size_t{0} : static_cast<std::size_t>(t.producer));
      delta[from] += t.bytes();
      delta[l + 1] -= t.bytes();
    }
    std::int64_t live = 0;
    for (std::size_t i = 0; i < n_ops; ++i) constant[i] = live += delta[i];
  }

  // Where recomputations before block b's backward go: before the first backward operator of a block <= b that
  // reads a result of its own block or of the one before (as apply_checkpointing places a region's).
  std::vector<std::size_t> at(n, n_ops);
  for (std::size_t i = start; i < n_ops; ++i) {
    const Operator& op = g.op(static_cast<OperatorId>(i));
    if (!is_backward(op.phase)) continue;
    const int ob = backward_owner(op);
    if (ob < 0) continue;
    bool hit = false;
    reads(op, [&](TensorId t) {
      const int pb = producer_block(t);
      hit = hit || (pb >= 0 && (pb == ob || pb + 1 == ob));
    });
    if (hit) at[static_cast<std::size_t>(ob)] = std::min(at[static_cast<std::size_t>(ob)], i);
  }
  for (std::size_t b = 1; b < n; ++b) at[b] = std::min(at[b], at[b - 1]);

  auto backward_span_peak = [&](std::size_t from, std::size_t to, const std::set<TensorId>& owned) {
    std::int64_t peak = kNoPosition;
    for (std::size_t q = from; q < to; ++q) {
      std::int64_t live = constant[q];
      for (TensorId r : owned) {
        if (q <= last[static_cast<std::size_t>(r)]) live += g.tensor(r).bytes();
      }
      peak = std::max(peak, live);
    }
    return peak;
  };

  // Each operator costed once (an accelerator's cost model is the slow part: 12 simulations per block share it).
  std::map<OperatorId, double> costs;
  auto op_cost = [&](const Operator& op) {
    const auto [it, fresh] = costs.try_emplace(op.id, 0.0);
    if (fresh) it->second = cost ? cost(g, op) : static_cast<double>(op.macs());
    return it->second;
  };

  // One recomputation of block b keeping the tensors `keep`, with the input storages `dying` freed at their last
  // read in it: the operators backward needs (as the rewrite prunes them) and their live bytes.
  auto forward = [&](std::size_t b, const std::set<TensorId>& keep, const std::set<TensorId>& dying) {
    RotorChain::Forward f;
    const auto& ops = c.blocks[b].operators;
    std::set<TensorId> needed = keep;
    std::vector<bool> run(ops.size(), false);
    for (std::size_t k = ops.size(); k-- > 0;) {
      const Operator& op = g.op(ops[k]);
      for (const Operand& o : op.operands) run[k] = run[k] || (o.is_output() && needed.contains(o.tensor));
      if (!run[k]) continue;
      reads(op, [&](TensorId t) {
        if (producer_block(t) == static_cast<int>(b)) needed.insert(t);
      });
    }
    std::map<TensorId, std::pair<std::size_t, std::size_t>> span;  // own storage -> (first, last) position
    std::map<TensorId, std::size_t> input_last;
    std::size_t m = 0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (!run[k]) continue;
      const Operator& op = g.op(ops[k]);
      f.macs += op.macs();
      f.cost += op_cost(op);
      uses(op, [&](TensorId t) {
        const TensorId r = root[static_cast<std::size_t>(t)];
        if (!activation(r)) return;
        if (owner(r) == static_cast<int>(b)) {
          auto [it, fresh] = span.try_emplace(r, m, m);
          it->second.second = m;
        } else if (dying.contains(r)) {
          input_last[r] = m;
        }
      });
      ++m;
    }
    for (TensorId t : keep) {
      const TensorId r = root[static_cast<std::size_t>(t)];
      if (const auto it = span.find(r); it != span.end()) it->second.second = m;
    }
    for (std::int64_t& p : f.peak) p = kNoPosition;
    std::int64_t peak = kNoPosition;
    for (std::size_t k = 0; k < m; ++k) {
      std::int64_t live = 0;
      for (const auto& [r, s] : span) {
        if (s.first <= k && k <= s.second) live += g.tensor(r).bytes();
      }
      for (const auto& [r, l] : input_last) {
        if (k <= l) live += g.tensor(r).bytes();
      }
      peak = std::max(peak, live);
    }
    f.peak[0] = peak;
    return f;
  };

  for (std::size_t b = 0; b < n; ++b) {
    RotorChain::Block& k = c.blocks[b];
    k.out = bytes(xr[b]);
    k.saved = bytes(rr[b]);
    k.out_not_saved = bytes(minus(xr[b], rr[b]));
    k.out_read_next = bytes(both(xr[b], yr[b]));
    k.out_not_saved_read_next = bytes(both(minus(xr[b], rr[b]), yr[b]));
    k.before = at[b] < n_ops ? static_cast<OperatorId>(at[b]) : kNone;
    k.constant_before = at[b] < n_ops ? constant[at[b]] : 0;
    const std::set<TensorId> none;
    const std::set<TensorId> in_all = b > 0 ? xr[b - 1] : none;
    const std::set<TensorId> in_fresh = b > 0 ? minus(xr[b - 1], yr[b - 1]) : none;
    const std::set<TensorId> in_after = b > 0 ? minus(in_fresh, rr[b - 1]) : none;
    std::set<TensorId> x_and_r = xt[b];
    x_and_r.insert(rt[b].begin(), rt[b].end());
    for (auto [f, keep] : {std::pair{&k.f, &xt[b]}, std::pair{&k.all, &x_and_r}, std::pair{&k.all_last, &rt[b]}}) {
      int i = 0;
      for (const std::set<TensorId>* dying : {&none, &in_all, &in_fresh, &in_after}) {
        const RotorChain::Forward x = forward(b, *keep, *dying);
        f->peak[i++] = x.peak[0];
        f->cost = x.cost;
        f->macs = x.macs;
      }
    }
    const std::size_t to = b == 0 ? n_ops : at[b - 1];
    std::set<TensorId> owned = rr[b];
    const std::set<TensorId> read0 = b > 0 ? both(xr[b - 1], yr[b - 1]) : none;
    const std::set<TensorId> read1 = b > 0 ? both(minus(xr[b - 1], rr[b - 1]), yr[b - 1]) : none;
    std::set<TensorId> o0 = owned, o1 = owned;
    o0.insert(read0.begin(), read0.end());
    o1.insert(read1.begin(), read1.end());
    k.backward_peak[0] = backward_span_peak(at[b], to, o0);
    k.backward_peak[1] = backward_span_peak(at[b], to, o1);
  }
  if (n > 0) {
    const std::size_t to = at[n - 1];
    c.tail_peak[0] = backward_span_peak(start, to, both(xr[n - 1], yr[n - 1]));
    c.tail_peak[1] = backward_span_peak(start, to, both(minus(xr[n - 1], rr[n - 1]), yr[n - 1]));
  } else {
    c.tail_peak[0] = c.tail_peak[1] = backward_span_peak(start, n_ops, {});
  }
  return c;
}

namespace {

/// A front entry: its (peak, cost) and how to rebuild its schedule (kind, split, the entries it combines).
struct Entry {
  std::int64_t peak = 0;
  double cost = 0;
  RotorStep::Kind kind = RotorStep::Kind::keep;
  std::size_t split = 0;
  int next = -1, inner = -1;  // indices into the fronts they come from
};

/// Keeps the entries no other beats in (peak, cost), by increasing peak.
void prune(std::vector<Entry>& v) {
  std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.peak != b.peak ? a.peak < b.peak : a.cost < b.cost; });
  std::vector<Entry> out;
  for (const Entry& e : v) {
    if (out.empty() || e.cost < out.back().cost) out.push_back(e);
  }
  v = std::move(out);
}

class Dp {
 public:
  explicit Dp(const RotorChain& c) : c_(c), n_(c.size()), nested_(n_ * n_ * 2), built_(n_ * n_ * 2), top_((n_ + 1) * 2) {}

  const std::vector<Entry>& top(std::size_t s, int mode) {
    std::vector<Entry>& v = top_[s * 2 + static_cast<std::size_t>(mode)];
    if (!v.empty()) return v;
    if (s == n_) {
      v.push_back(Entry{c_.tail_peak[mode], 0, RotorStep::Kind::keep, 0, -1, -1});
      return v;
    }
    const std::vector<Entry>& after_keep = top(s + 1, 1);
    for (std::size_t i = 0; i < after_keep.size(); ++i) {
      v.push_back(Entry{peak_keep(c_, s, mode, after_keep[i].peak), after_keep[i].cost, RotorStep::Kind::keep, 0,
                        static_cast<int>(i), -1});
    }
    for (std::size_t e = s; e < n_; ++e) {
      const std::vector<Entry>& rest = top(e + 1, 0);
      const std::vector<Entry>& inner = nested(s, e, mode);
      for (std::size_t i = 0; i < rest.size(); ++i) {
        for (std::size_t j = 0; j < inner.size(); ++j) {
          v.push_back(Entry{peak_segment(c_, s, mode, rest[i].peak, inner[j].peak), rest[i].cost + inner[j].cost,
                            RotorStep::Kind::segment, e, static_cast<int>(i), static_cast<int>(j)});
        }
      }
      prune(v);  // per run end: the products of two fronts stay small
    }
    prune(v);
    return v;
  }

  RotorSchedule top_schedule(std::size_t s, int mode, int index) {
    if (s == n_) return nullptr;
    const Entry& e = top(s, mode)[static_cast<std::size_t>(index)];
    if (e.kind == RotorStep::Kind::keep) return rotor_step(e.kind, s, s, 0, top_schedule(s + 1, 1, e.next), nullptr);
    return rotor_step(e.kind, s, e.split, e.split, top_schedule(e.split + 1, 0, e.next), nested_schedule(s, e.split, mode, e.inner));
  }

  const std::vector<Entry>& nested(std::size_t s, std::size_t t, int mode) {
    const std::size_t key = (s * n_ + t) * 2 + static_cast<std::size_t>(mode);
    std::vector<Entry>& v = nested_[key];
    if (built_[key]) return v;
    std::vector<Entry> out;
    if (s == t) {
      out.push_back(Entry{peak_all(c_, s, t, mode, kNoPosition), cost_all(c_, s, t), RotorStep::Kind::all, 0, -1, -1});
    } else {
      const std::vector<Entry>& rest = nested(s + 1, t, 1);
      for (std::size_t i = 0; i < rest.size(); ++i) {
        out.push_back(Entry{peak_all(c_, s, t, mode, rest[i].peak), cost_all(c_, s, t) + rest[i].cost,
                            RotorStep::Kind::all, 0, static_cast<int>(i), -1});
      }
      for (std::size_t split = s + 1; split <= t; ++split) {
        const std::vector<Entry>& later = nested(split, t, 0);
        const std::vector<Entry>& again = nested(s, split - 1, mode);
        const double fc = cost_forwards(c_, s, split);
        for (std::size_t i = 0; i < later.size(); ++i) {
          for (std::size_t j = 0; j < again.size(); ++j) {
            out.push_back(Entry{peak_checkpoint(c_, s, split, t, mode, later[i].peak, again[j].peak),
                                fc + later[i].cost + again[j].cost, RotorStep::Kind::checkpoint, split,
                                static_cast<int>(i), static_cast<int>(j)});
          }
        }
        prune(out);
      }
    }
    prune(out);
    v = std::move(out);
    built_[key] = true;
    return nested_[key];
  }

  RotorSchedule nested_schedule(std::size_t s, std::size_t t, int mode, int index) {
    const Entry& e = nested(s, t, mode)[static_cast<std::size_t>(index)];
    if (e.kind == RotorStep::Kind::all) {
      return rotor_step(e.kind, s, t, 0, s == t ? nullptr : nested_schedule(s + 1, t, 1, e.next), nullptr);
    }
    return rotor_step(e.kind, s, t, e.split, nested_schedule(e.split, t, 0, e.next), nested_schedule(s, e.split - 1, mode, e.inner));
  }

 private:
  const RotorChain& c_;
  std::size_t n_;
  std::vector<std::vector<Entry>> nested_;
  std::vector<bool> built_;
  std::vector<std::vector<Entry>> top_;
};

}  // namespace

std::vector<RotorChoice> rotor_front(const RotorChain& chain) {
  Dp dp(chain);
  const std::vector<Entry>& front = dp.top(0, 0);
  std::vector<RotorChoice> out;
  for (std::size_t i = 0; i < front.size(); ++i) {
    out.push_back(RotorChoice{dp.top_schedule(0, 0, static_cast<int>(i)), front[i].peak, front[i].cost});
  }
  return out;
}

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
    chain = rotor_chain(steps.first, cost, finish);
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

RotorSchedule rotor_step(RotorStep::Kind kind, std::size_t first, std::size_t last, std::size_t split,
                         RotorSchedule next, RotorSchedule inner) {
  auto x = std::make_shared<RotorStep>();
  x->kind = kind;
  x->first = first;
  x->last = last;
  x->split = split;
  x->next = std::move(next);
  x->inner = std::move(inner);
  return x;
}

}  // namespace monet
