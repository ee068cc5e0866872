#include "monet/training/memory.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace monet {

TensorId storage_of(const Graph& g, TensorId t) {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    const Tensor& x = g.tensor(t);
    if (x.in_place_of != kNone) {
      t = x.in_place_of;
      continue;
    }
    if (x.producer == kNone) return t;
    const Operator& op = g.op(x.producer);
    if (!op.is_view()) return t;
    TensorId single = kNone;
    int inputs = 0;
    for (const Operand& o : op.operands) {
      if (!o.is_output()) {
        single = o.tensor;
        ++inputs;
      }
    }
    if (inputs != 1) return t;  // concatenation: a new storage
    t = single;
  }
  return t;
}

namespace {
// Recompute operators run in the backward pass: what they read from the forward pass stays saved.
bool is_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw || p == Phase::recompute; }
bool is_forward(Phase p) { return p == Phase::forward || p == Phase::loss; }
bool stored_state(TensorRole r) {
  return r == TensorRole::weight || r == TensorRole::buffer || r == TensorRole::optimizer_state ||
         r == TensorRole::master_weight;
}

/// Activation storages (forward and recomputed results, inputs, labels, constant-derived tensors) live at each
/// operator of the backward pass: each from its producer (sources: the start) to its last reader.
std::map<TensorId, std::size_t> last_uses(const Graph& g, const std::vector<TensorId>& root) {
  std::map<TensorId, std::size_t> last_use;
  for (const Operator& op : g.operators()) {
    auto use = [&](TensorId t) {
      auto& l = last_use[root[static_cast<std::size_t>(t)]];
      l = std::max(l, static_cast<std::size_t>(op.id));
    };
    for (const Operand& o : op.operands) use(o.tensor);
    for (TensorId k : op.keeps_alive) use(k);
  }
  return last_use;
}

std::vector<TensorId> roots(const Graph& g) {
  std::vector<TensorId> root(g.tensors().size());
  for (const Tensor& t : g.tensors()) root[static_cast<std::size_t>(t.id)] = storage_of(g, t.id);
  return root;
}

BackwardActivations backward_activations(const Graph& g, const std::map<TensorId, std::size_t>& last_use,
                                         const std::vector<TensorId>& root) {
  BackwardActivations out;
  const std::size_t n = g.operators().size();
  out.start = n;
  for (const Operator& op : g.operators()) {
    if (is_backward(op.phase)) {
      out.start = static_cast<std::size_t>(op.id);
      break;
    }
  }
  if (out.start == n) return out;
  // The backward passes: a forward operator after the start (the next micro-batch's) leaves them, the next
  // backward or recompute operator comes back; losses and optimizer steps stay where they are.
  std::vector<bool> in(n, false);
  bool inside = true;
  for (std::size_t i = out.start; i < n; ++i) {
    const Phase p = g.op(static_cast<OperatorId>(i)).phase;
    if (p == Phase::forward) inside = false;
    if (is_backward(p)) inside = true;
    in[i] = inside;
    if (!inside && (out.skipped.empty() || out.skipped.back().second != i)) out.skipped.emplace_back(i, i);
    if (!inside) out.skipped.back().second = i + 1;
  }
  std::vector<std::size_t> next_in(n + 1, n), pass_start(n, out.start);  // first position of a pass at or after i
  for (std::size_t i = n; i-- > out.start;) next_in[i] = in[i] ? i : next_in[i + 1];
  for (std::size_t i = out.start; i < n; ++i) {
    if (in[i]) pass_start[i] = i > out.start && in[i - 1] ? pass_start[i - 1] : i;
  }
  std::set<TensorId> read_by_backward;  // storages a backward_dx / backward_dw operator reads or keeps alive
  for (const Operator& op : g.operators()) {
    if (op.phase != Phase::backward_dx && op.phase != Phase::backward_dw) continue;
    for (const Operand& o : op.operands) {
      if (!o.is_output()) read_by_backward.insert(root[static_cast<std::size_t>(o.tensor)]);
    }
    for (TensorId k : op.keeps_alive) read_by_backward.insert(root[static_cast<std::size_t>(k)]);
  }
  // A graph input (or label) is there from its own micro-batch's pass on: the pass of its first reader.
  std::map<TensorId, std::size_t> first_use;
  for (const Operator& op : g.operators()) {
    for (const Operand& o : op.operands) first_use.try_emplace(root[static_cast<std::size_t>(o.tensor)], op.id);
    for (TensorId k : op.keeps_alive) first_use.try_emplace(root[static_cast<std::size_t>(k)], op.id);
  }
  for (const auto& [r, last] : last_use) {
    const Tensor& t = g.tensor(r);
    if (last < out.start) continue;
    // As the saved set: no stored state, no gradients; sources too (inputs, labels, constant masks, position ids).
    if (stored_state(t.role) || t.role == TensorRole::gradient || t.role == TensorRole::weight_gradient) continue;
    std::size_t from = 0;
    if (t.producer != kNone) {
      const Phase p = g.op(t.producer).phase;
      if (!is_forward(p) && p != Phase::recompute) continue;
      from = next_in[std::max(static_cast<std::size_t>(t.producer), out.start)];
    } else {
      from = next_in[std::max(first_use.at(r), out.start)];
      if (from < n) from = pass_start[from];
    }
    if (from > last) continue;  // made and freed between two passes (a later micro-batch's forward pass)
    const bool saved = t.producer == kNone || g.op(t.producer).phase != Phase::recompute || read_by_backward.contains(r);
    out.intervals.push_back(ActivationInterval{r, t.bytes(), from, last, saved});
  }
  return out;
}

}  // namespace

std::int64_t peak_live_bytes(const BackwardActivations& a, std::size_t operators, bool saved_only) {
  if (a.start >= operators) return 0;
  std::vector<std::int64_t> delta(operators + 1, 0);
  for (const ActivationInterval& i : a.intervals) {
    if (i.from > i.last || (saved_only && !i.saved)) continue;  // never live, or not counted
    delta[i.from] += i.bytes;
    delta[i.last + 1] -= i.bytes;
  }
  std::int64_t live = 0, peak = 0;
  std::size_t skip = 0;  // the next skipped range
  for (std::size_t i = a.start; i < operators; ++i) {
    live += delta[i];
    while (skip < a.skipped.size() && a.skipped[skip].second <= i) ++skip;
    if (skip < a.skipped.size() && a.skipped[skip].first <= i) continue;
    peak = std::max(peak, live);
  }
  return peak;
}

BackwardActivations backward_activations(const Graph& g) {
  const std::vector<TensorId> root = roots(g);
  return backward_activations(g, last_uses(g, root), root);
}

std::vector<SavedStorage> saved_tensors(const Graph& g) {
  std::set<TensorId> roots;
  auto consider = [&](TensorId id) {
    const TensorId root = storage_of(g, id);
    const Tensor& t = g.tensor(root);
    if (stored_state(t.role) || t.role == TensorRole::gradient || t.role == TensorRole::weight_gradient) return;
    if (t.producer != kNone && !is_forward(g.op(t.producer).phase)) return;
    roots.insert(root);
  };
  for (const Operator& op : g.operators()) {
    if (!is_backward(op.phase)) continue;
    for (const Operand& o : op.operands) {
      if (!o.is_output()) consider(o.tensor);
    }
    for (TensorId k : op.keeps_alive) consider(k);
  }
  std::vector<SavedStorage> out;
  for (TensorId r : roots) {
    const Tensor& t = g.tensor(r);
    out.push_back(SavedStorage{r, t.bytes(), t.producer});
  }
  return out;
}

TrainingMemory training_memory(const Graph& g) {
  TrainingMemory m;
  for (const Tensor& t : g.tensors()) {
    if (t.in_place_of != kNone) continue;  // the same storage as the tensor it updates
    const bool source = t.producer == kNone;
    switch (t.role) {
      case TensorRole::weight: if (source) m.parameter_bytes += t.bytes(); break;
      case TensorRole::buffer: if (source) m.buffer_bytes += t.bytes(); break;
      case TensorRole::weight_gradient:
        if (t.gradient_of != kNone) m.gradient_bytes += t.bytes();  // the complete gradient; pieces are transient
        break;
      case TensorRole::optimizer_state: m.optimizer_state_bytes += t.bytes(); break;
      case TensorRole::master_weight: m.master_weight_bytes += t.bytes(); break;
      case TensorRole::input: case TensorRole::label: if (source) m.input_bytes += t.bytes(); break;
      default: break;
    }
  }
  m.saved = saved_tensors(g);
  for (const SavedStorage& s : m.saved) m.saved_activation_bytes += s.bytes;

  // Sequential liveness: storages are allocated by their producer (stored tensors from the start) and freed
  // after the last operator that reads or keeps alive any tensor using them.
  const std::size_t n = g.operators().size();
  const std::vector<TensorId> root = roots(g);
  const std::map<TensorId, std::size_t> last_use = last_uses(g, root);
  std::int64_t live = 0;
  std::set<TensorId> allocated;
  for (const Tensor& t : g.tensors()) {
    const TensorId r = root[static_cast<std::size_t>(t.id)];
    if (r == t.id && t.producer == kNone && t.in_place_of == kNone) {
      live += t.bytes();
      allocated.insert(r);
    }
  }
  m.peak_bytes = live;
  const BackwardActivations activations = backward_activations(g, last_use, root);
  m.peak_activation_bytes = peak_live_bytes(activations, g.operators().size());
  m.peak_saved_activation_bytes = peak_live_bytes(activations, g.operators().size(), true);
  std::vector<std::vector<TensorId>> frees(n);
  for (const auto& [r, l] : last_use) {
    const Tensor& t = g.tensor(r);
    const bool persistent = t.producer == kNone;  // stored tensors, inputs: live for the whole step
    if (!persistent) frees[l].push_back(r);
  }
  for (const Operator& op : g.operators()) {
    for (const Operand& o : op.operands) {
      if (!o.is_output()) continue;
      const TensorId r = root[static_cast<std::size_t>(o.tensor)];
      if (allocated.insert(r).second) live += g.tensor(r).bytes();
    }
    m.peak_bytes = std::max(m.peak_bytes, live);
    for (TensorId r : frees[static_cast<std::size_t>(op.id)]) {
      if (allocated.erase(r)) live -= g.tensor(r).bytes();
    }
  }
  return m;
}

}  // namespace monet

namespace monet {

TrainingSummary training_summary(const Graph& g) {
  TrainingSummary s;
  for (const Operator& op : g.operators()) {
    PhaseTotals* t = nullptr;
    switch (op.phase) {
      case Phase::forward: t = &s.forward; break;
      case Phase::loss: t = &s.loss; break;
      case Phase::backward_dx: t = &s.backward_dx; break;
      case Phase::backward_dw: t = &s.backward_dw; break;
      case Phase::optimizer: t = &s.optimizer; break;
      case Phase::recompute: t = &s.recompute; break;
    }
    ++t->operators;
    t->macs += op.macs();
    t->vector_ops += op.vector_ops();
  }
  s.memory = training_memory(g);
  return s;
}

}  // namespace monet
