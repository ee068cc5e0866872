// The memory of every per-block checkpointing choice on a region graph of any shape (checkpoint_milp.hpp). Two
// rewrites suffice: apply_checkpointing only inserts each checkpointed block's recomputation before the first
// backward operator of that block that reads it, and redirects that block's own backward operators to the
// recomputed tensors; what it recomputes depends on the block alone. So the backward pass of any choice is the
// every-block rewrite with the recompute operators of the kept blocks left out, and each reader of a storage is
// present under a condition on one block:
//   - a recompute operator of block x reads it only when x is checkpointed;
//   - a backward operator that reads a forward tensor in the no-block rewrite but its recomputed copy in the
//     every-block one (the block's own backward) reads the forward tensor only when that block is kept;
//   - a recomputed tensor exists only when its block is checkpointed.
#include <algorithm>
#include <map>
#include <set>

#include "monet/training/checkpoint_milp.hpp"
#include "monet/training/memory.hpp"
#include "recompute_names.hpp"

namespace monet {

namespace {

/// Per backward operator (by name), the activation storages (by name) it reads, writes or keeps alive.
std::map<std::string, std::set<std::string>> storage_uses(const Graph& g, std::size_t start,
                                                          const std::set<std::string>& activations) {
  std::map<std::string, std::set<std::string>> out;
  for (std::size_t i = start; i < g.operators().size(); ++i) {
    const Operator& op = g.op(static_cast<OperatorId>(i));
    auto& uses = out[op.name];
    auto use = [&](TensorId t) {
      const std::string& n = g.tensor(storage_of(g, t)).name;
      if (activations.contains(n)) uses.insert(n);
    };
    for (const Operand& o : op.operands) use(o.tensor);
    for (TensorId k : op.keeps_alive) use(k);
  }
  return out;
}

}  // namespace

std::int64_t CheckpointRegionGraph::peak(const std::vector<bool>& c) const {
  const std::size_t P = present_if.size();
  std::vector<std::int64_t> delta(P + 1, 0);
  for (const StorageLiveness& s : storages) {
    if (s.exists_if >= 0 && !c[static_cast<std::size_t>(s.exists_if)]) continue;
    std::size_t last = 0;
    bool read = false;
    for (const auto& [q, lit] : s.readers) {
      if (q >= s.from && lit.holds(c)) {
        last = std::max(last, q);
        read = true;
      }
    }
    if (!read) continue;
    delta[s.from] += s.bytes;
    delta[last + 1] -= s.bytes;
  }
  std::int64_t live = 0, peak = 0;
  for (std::size_t p = 0; p < P; ++p) {
    live += delta[p];
    if (present_if[p] < 0 || c[static_cast<std::size_t>(present_if[p])]) peak = std::max(peak, live);
  }
  return peak;
}

CheckpointRegionGraph checkpoint_region_graph(const GraphPtr& graph, std::vector<std::vector<CheckpointRegion>> blocks,
                                              std::vector<std::string> names, const RecomputeCost& cost,
                                              const GraphFinish& finish) {
  CheckpointRegionGraph m;
  m.names = std::move(names);
  m.regions = std::move(blocks);
  const std::size_t n = m.regions.size();
  const std::map<std::string, int> block_of = detail::block_of_operators(*graph, m.regions);
  auto block = [&](const std::string& op_name) {
    const auto it = block_of.find(detail::forward_name(op_name));
    return it == block_of.end() ? -1 : it->second;
  };
  auto rewrite = [&](bool all) {
    GraphPtr g = apply_checkpointing(*graph, all ? m.regions_of(std::vector<bool>(n, true)) : std::vector<CheckpointRegion>{});
    return finish ? finish(g) : g;
  };
  const GraphPtr g0 = rewrite(false), g1 = rewrite(true);
  const BackwardActivations a0 = backward_activations(*g0), a1 = backward_activations(*g1);

  // Positions: g1's operators from its first backward (or recompute) operator on; g0's are a subsequence.
  std::map<std::string, std::size_t> position;
  for (std::size_t i = a1.start; i < g1->operators().size(); ++i) {
    const Operator& op = g1->op(static_cast<OperatorId>(i));
    position[op.name] = m.present_if.size();
    m.present_if.push_back(op.phase == Phase::recompute ? block(op.name) : -1);
  }

  // The activation storages of either rewrite, by name, with the producer that says what they are.
  std::map<std::string, std::pair<const Graph*, const ActivationInterval*>> found;
  for (const ActivationInterval& iv : a1.intervals) found.emplace(g1->tensor(iv.storage).name, std::pair{g1.get(), &iv});
  for (const ActivationInterval& iv : a0.intervals) found.emplace(g0->tensor(iv.storage).name, std::pair{g0.get(), &iv});
  std::set<std::string> activations;
  for (const auto& [name, where] : found) activations.insert(name);
  const auto uses1 = storage_uses(*g1, a1.start, activations);
  const auto uses0 = storage_uses(*g0, a0.start, activations);

  std::map<std::string, std::size_t> index;
  for (const auto& [name, where] : found) {
    const auto& [g, iv] = where;
    StorageLiveness s;
    s.name = name;
    s.bytes = iv->bytes;
    const Tensor& t = g->tensor(iv->storage);
    const bool recomputed = t.producer != kNone && g->op(t.producer).phase == Phase::recompute;
    if (recomputed) {
      s.exists_if = block(g->op(t.producer).name);
      s.from = position.at(g->op(t.producer).name);
    }
    index[name] = m.storages.size();
    m.storages.push_back(std::move(s));
  }
  // The block that produced a forward storage: its own backward reads the recomputed copy when it is checkpointed.
  auto owner_of = [&](const std::string& storage) {
    const auto& [g, iv] = found.at(storage);
    const Tensor& t = g->tensor(iv->storage);
    return t.producer == kNone ? -1 : block(g->op(t.producer).name);
  };
  for (const auto& [op_name, storages] : uses1) {
    const std::size_t q = position.at(op_name);
    const Operator& op = *g1->find_operator(op_name);
    const auto in0 = uses0.find(op_name);
    for (const std::string& st : storages) {
      StorageLiveness& s = m.storages[index.at(st)];
      RegionLiteral lit;  // always
      if (op.phase == Phase::recompute && s.exists_if < 0) lit = RegionLiteral{block(op_name), true};
      else if (s.exists_if < 0 && (in0 == uses0.end() || !in0->second.contains(st))) lit = RegionLiteral{owner_of(st), true};
      s.readers.emplace_back(q, lit);
    }
  }
  for (const auto& [op_name, storages] : uses0) {
    const std::size_t q = position.at(op_name);
    const auto in1 = uses1.find(op_name);
    for (const std::string& st : storages) {
      if (in1 != uses1.end() && in1->second.contains(st)) continue;  // read in both: always (above)
      // Read when nothing is checkpointed but not when everything is: the block's own backward, redirected to
      // the recomputed copy when the block is checkpointed.
      m.storages[index.at(st)].readers.emplace_back(q, RegionLiteral{owner_of(st), false});
    }
  }
  for (StorageLiveness& s : m.storages) {
    std::sort(s.readers.begin(), s.readers.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.block < b.second.block;
    });
  }

  // Costs: the recompute operators of each block in the every-block rewrite (only those backward needs).
  m.cost.assign(n, 0);
  m.macs.assign(n, 0);
  for (const Operator& op : g1->operators()) {
    if (op.phase != Phase::recompute) continue;
    const int b = block(op.name);
    if (b < 0) continue;
    m.macs[static_cast<std::size_t>(b)] += op.macs();
    m.cost[static_cast<std::size_t>(b)] += cost ? cost(*g1, op) : static_cast<double>(op.macs());
  }
  return m;
}

CheckpointRegionGraph checkpoint_region_graph(const GraphPtr& graph, const RecomputeCost& cost, const GraphFinish& finish,
                                              RecomputeSemantics semantics) {
  CheckpointBlocks blocks = checkpoint_blocks(*graph, semantics);
  return checkpoint_region_graph(graph, std::move(blocks.regions), std::move(blocks.names), cost, finish);
}

}  // namespace monet
