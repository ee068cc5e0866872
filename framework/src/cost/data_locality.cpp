// ZigZag's inter-layer data-locality search (../shared/design/cost-model-zigzag.md, section 9), on monet's graph.
#include "monet/cost/data_locality.hpp"

#include <algorithm>
#include <unordered_map>

namespace monet {

namespace {

constexpr int kI1 = static_cast<int>(OperandSlot::I1);
constexpr int kI2 = static_cast<int>(OperandSlot::I2);
constexpr int kO = static_cast<int>(OperandSlot::O);

/// A layer reads an activation on both inputs (an addition) when its second input is not a constant.
bool two_activation_inputs(const Graph& g, const Operator& op) {
  for (const Operand& o : op.operands) {
    if (o.is_output() || o.slot != OperandSlot::I2) continue;
    const Tensor& t = g.tensor(o.tensor);
    return !(t.producer == kNone && (t.role == TensorRole::weight || t.role == TensorRole::buffer));
  }
  return false;
}

std::int64_t instances(const Core& core, const MemoryLevel& m) {
  std::int64_t n = 1;
  for (const ArrayDim& d : core.array.dims) {
    if (std::find(m.served_dims.begin(), m.served_dims.end(), d.name) == m.served_dims.end()) n *= d.size;
  }
  return n;
}

bool holds(const MemoryLevel& m, int slot) { return m.serves(static_cast<OperandSlot>(slot)); }

}  // namespace

std::vector<Residency> data_locality(const Graph& graph, const Core& core, std::span<const LocalityLayer> layers) {
  const std::size_t n = layers.size();
  std::vector<Residency> out(n);
  if (n == 0) return out;
  std::unordered_map<OperatorId, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[layers[i].op->id] = i;

  // Layer edges through non-layer operators (ZigZag removes its "dummy" nodes the same way).
  std::vector<std::vector<std::size_t>> preds(n), succs(n);
  auto link = [&](std::size_t from, std::size_t to) {
    if (std::find(succs[from].begin(), succs[from].end(), to) != succs[from].end()) return;
    succs[from].push_back(to);
    preds[to].push_back(from);
  };
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<OperatorId> stack;
    std::vector<bool> seen(graph.operators().size(), false);
    auto push_sources = [&](const Operator& op) {
      for (const Operand& o : op.operands) {
        if (o.is_output()) continue;
        const OperatorId p = graph.tensor(o.tensor).producer;
        if (p != kNone) stack.push_back(p);
      }
      for (OperatorId p : op.after) stack.push_back(p);
    };
    push_sources(*layers[v].op);
    while (!stack.empty()) {
      const OperatorId p = stack.back();
      stack.pop_back();
      if (seen[static_cast<std::size_t>(p)]) continue;
      seen[static_cast<std::size_t>(p)] = true;
      if (auto it = index.find(p); it != index.end()) {
        link(it->second, v);
      } else {
        push_sources(graph.op(p));
      }
    }
  }

  // The top memory of each operand, and the layers' sizes (a two-input layer's input is both inputs).
  auto top_of = [&](int slot) {
    int top = -1;
    for (std::size_t m = 0; m < core.memories.size(); ++m) {
      if (holds(core.memories[m], slot)) top = static_cast<int>(m);
    }
    return top;
  };
  const int top_act = top_of(kI1);
  const int top_weight = top_of(kI2);
  const int top_output = top_of(kO);
  std::vector<bool> adder(n);
  std::vector<std::int64_t> act_bits(n), out_bits(n);
  std::int64_t all_weights = 0;
  for (std::size_t i = 0; i < n; ++i) {
    adder[i] = two_activation_inputs(graph, *layers[i].op);
    act_bits[i] = layers[i].bits.bits[kI1] + (adder[i] ? layers[i].bits.bits[kI2] : 0);
    out_bits[i] = layers[i].bits.bits[kO];
    if (!adder[i]) all_weights += layers[i].bits.bits[kI2];
  }

  std::vector<int> act(n, -1), output(n, -1);
  auto lower = [](int& level, int target) {
    if (level == -1 || level > target) level = target;
  };
  int weight_level = top_weight;
  for (std::size_t i = 0; i < n; ++i) {
    const bool first = i == 0;
    const bool branch_start = succs[i].size() > 1;
    const bool branch_end = succs[i].size() == 1 && preds[succs[i][0]].size() > 1;
    if (!first) lower(act[i], preds[i].empty() ? top_act : output[preds[i][0]]);
    if (branch_start || branch_end) {
      if (first) lower(act[i], top_act);
      lower(output[i], top_output);
      continue;
    }
    for (std::size_t mi = core.memories.size(); mi-- > 0;) {
      const MemoryLevel& mem = core.memories[mi];
      const auto m = static_cast<int>(mi);
      // Every layer's activation input is memory operand I1, so "holds the next layer's input" is "holds I1"
      // (for the last layer ZigZag asks the same of its own input).
      const bool io_both = holds(mem, kI1) && holds(mem, kO);
      const bool weights_here = holds(mem, kI2);
      if (!io_both && !weights_here) continue;
      // An addition keeping its data here counts only its inputs and output (ZigZag narrows the memory's
      // operands to those two), yet may still lower the weights' memory below.
      std::int64_t need = 0;
      if (adder[i] && io_both) {
        need = act_bits[i] + out_bits[i];
      } else {
        if (holds(mem, kI1)) need += act_bits[i];
        if (holds(mem, kO)) need += out_bits[i];
        if (weights_here) need += all_weights;
      }
      if (need > mem.size_bits * instances(core, mem)) continue;
      if (io_both) {
        if (first) lower(act[i], m);
        lower(output[i], m);
      }
      if (weights_here && m < weight_level && mem.served_dims.size() == core.array.dims.size()) weight_level = m;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (act[i] < 0) act[i] = top_act;
    if (output[i] < 0) output[i] = top_output;
    out[i].top[kI1] = act[i];
    out[i].top[kO] = output[i];
    out[i].top[kI2] = adder[i] ? act[i] : weight_level;
  }
  return out;
}

}  // namespace monet
