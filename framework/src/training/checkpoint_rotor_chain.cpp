// Rotor's chain model from the graph (checkpoint_rotor.hpp): the blocks of ModuleTree::blocks(), and per block what
// each kind of its recomputation keeps, peaks at and costs, its backward's peak and the bytes outside the chain.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "monet/training/checkpoint.hpp"
#include "monet/training/checkpoint_rotor.hpp"
#include "monet/training/memory.hpp"

namespace monet {

namespace {

bool is_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw; }

}  // namespace

RotorChain rotor_chain(const GraphPtr& graph, const RecomputeCost& cost, const GraphFinish& finish,
                       RecomputeSemantics semantics) {
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
  CheckpointBlocks cb = checkpoint_blocks(*graph, semantics);
  RotorChain c;
  c.semantics = semantics;
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
  // read in it: the whole block (pytorch) or the operators backward needs (minimal, as the rewrite prunes them),
  // and their live bytes.
  auto forward = [&](std::size_t b, const std::set<TensorId>& keep, const std::set<TensorId>& dying) {
    RotorChain::Forward f;
    const auto& ops = c.blocks[b].operators;
    std::set<TensorId> needed = keep;
    std::vector<bool> run(ops.size(), semantics == RecomputeSemantics::pytorch);
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

}  // namespace monet
