#include "monet/system/tied_parameters.hpp"

#include <algorithm>

namespace monet {

TiedCopies find_tied_copies(const Graph& g, const std::vector<std::int64_t>& chunk_of_op, std::int64_t chunks,
                            std::int64_t stages) {
  TiedCopies tied;
  if (chunks <= 1 || stages <= 1) return tied;
  auto chunk = [&](OperatorId op) { return chunk_of_op[static_cast<std::size_t>(op)]; };
  std::vector<bool> is_tied(g.tensors().size(), false);
  for (const Tensor& t : g.tensors()) {
    if (!t.is_parameter() || t.producer != kNone) continue;  // the stored parameter, not its updated copy
    bool first = false;
    std::vector<OperatorId> last;
    for (OperatorId c : t.consumers) {
      if (g.op(c).phase != Phase::forward) continue;
      if (chunk(c) == 0) first = true;
      if (chunk(c) == chunks - 1) last.push_back(c);
    }
    if (!first || last.empty()) continue;
    tied.parameters.push_back(t.id);
    is_tied[static_cast<std::size_t>(t.id)] = true;
    tied.weight_bytes += t.bytes();
    tied.last_chunk_readers.insert(tied.last_chunk_readers.end(), last.begin(), last.end());
  }
  if (tied.empty()) return tied;
  // What a tensor is the parameter of: a gradient through gradient_of, an updated copy or unscaled gradient through
  // in_place_of.
  auto owner = [&](TensorId t) {
    for (int hops = 0; t != kNone && hops < 64; ++hops) {
      const Tensor& x = g.tensor(t);
      if (is_tied[static_cast<std::size_t>(t)]) return t;
      t = x.gradient_of != kNone ? x.gradient_of : x.in_place_of;
    }
    return kNone;
  };
  auto base = [&](TensorId t) {  // a state's storage: the tensor it overwrites in place, if any
    while (g.tensor(t).in_place_of != kNone) t = g.tensor(t).in_place_of;
    return t;
  };
  for (const Tensor& t : g.tensors()) {
    if (t.role == TensorRole::weight_gradient && t.gradient_of != kNone && is_tied[static_cast<std::size_t>(t.gradient_of)]) {
      tied.gradient_bytes += t.bytes();
      tied.gradient_elements += t.elements();
    }
  }
  // Their optimizer operators: those reading or writing something of theirs, then those reading their states
  // (a master copy has no link to its parameter: LAMB's norm of it).
  std::vector<bool> state(g.tensors().size(), false), taken(g.operators().size(), false);
  auto is_state = [](const Tensor& x) {
    return x.role == TensorRole::optimizer_state || x.role == TensorRole::master_weight;
  };
  for (int round = 0; round < 2; ++round) {
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::optimizer || taken[static_cast<std::size_t>(op.id)]) continue;
      bool ours = false;
      for (const Operand& o : op.operands) {
        ours = ours || (round == 0 ? owner(o.tensor) != kNone : state[static_cast<std::size_t>(base(o.tensor))]);
      }
      if (!ours) continue;
      taken[static_cast<std::size_t>(op.id)] = true;
      tied.optimizer_ops.push_back(op.id);
      for (const Operand& o : op.operands) {
        if (is_state(g.tensor(o.tensor))) state[static_cast<std::size_t>(base(o.tensor))] = true;
      }
    }
  }
  std::sort(tied.optimizer_ops.begin(), tied.optimizer_ops.end());
  for (const Tensor& t : g.tensors()) {
    if (state[static_cast<std::size_t>(t.id)] && t.in_place_of == kNone) tied.state_bytes += t.bytes();
  }
  // The last chunk's weight-gradient pieces: written by a backward operator of a last-chunk reader, shaped like a
  // tied parameter (the reader's other weights' gradients have other shapes or an owner of their own).
  for (const Operator& op : g.operators()) {
    if (op.derived_from == kNone || op.phase == Phase::forward || op.phase == Phase::recompute) continue;
    if (std::find(tied.last_chunk_readers.begin(), tied.last_chunk_readers.end(), op.derived_from) ==
        tied.last_chunk_readers.end()) {
      continue;
    }
    for (const Operand& o : op.operands) {
      const Tensor& x = g.tensor(o.tensor);
      if (!o.is_output() || x.role != TensorRole::weight_gradient) continue;
      const bool shaped = std::any_of(tied.parameters.begin(), tied.parameters.end(),
                                      [&](TensorId w) { return g.tensor(w).shape == x.shape; });
      if (shaped && (x.gradient_of == kNone || is_tied[static_cast<std::size_t>(x.gradient_of)])) {
        tied.last_chunk_gradients.push_back(x.id);
      }
    }
  }
  return tied;
}

}  // namespace monet
