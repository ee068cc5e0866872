#include "monet/training/checkpoint_optimal.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "chain_dp.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/training/checkpoint_micro_batches.hpp"
#include "monet/training/checkpoint_milp.hpp"
#include <stdexcept>
#include "monet/training/checkpoint_segments.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"
#include "monet/util/strings.hpp"
#include "recompute_names.hpp"

namespace monet {

namespace {

/// One rewritten graph: the live intervals of its activation storages in the positions of the chain.
struct Measured {
  GraphPtr graph;
  BackwardActivations activations;
};

}  // namespace

std::int64_t CheckpointChain::peak(const std::vector<bool>& c) const {
  std::int64_t peak = 0;
  for (std::size_t p = 0; p < constant.size(); ++p) {
    if (present_if[p] >= 0 && !c[static_cast<std::size_t>(present_if[p])]) continue;
    std::int64_t live = constant[p];
    for (std::size_t b = 0; b < size(); ++b) {
      const bool next = b + 1 < size() && c[b + 1];
      live += table[b][(c[b] ? 2 : 0) + (next ? 1 : 0)][p];
    }
    peak = std::max(peak, live);
  }
  return peak;
}

double CheckpointBlockChoice::total_cost(const std::vector<bool>& c) const {
  double s = 0;
  for (std::size_t b = 0; b < size(); ++b) s += c[b] ? cost[b] : 0;
  return s;
}

std::vector<CheckpointRegion> CheckpointBlockChoice::regions_of(const std::vector<bool>& c) const {
  std::vector<CheckpointRegion> out;
  for (std::size_t b = 0; b < size(); ++b) {
    if (c[b]) out.insert(out.end(), regions[b].begin(), regions[b].end());
  }
  return out;
}

CheckpointChain checkpoint_chain(const GraphPtr& graph, std::vector<std::vector<CheckpointRegion>> blocks,
                                 std::vector<std::string> names, const RecomputeCost& cost, const GraphFinish& finish) {
  CheckpointChain ch;
  ch.names = std::move(names);
  ch.regions = std::move(blocks);
  const std::size_t n = ch.regions.size();
  const std::map<std::string, int> block_of = detail::block_of_operators(*graph, ch.regions);
  auto measure = [&](const std::vector<bool>& c) {
    GraphPtr g = apply_checkpointing(*graph, ch.regions_of(c));
    if (finish) g = finish(g);
    Measured m{g, backward_activations(*g)};
    return m;
  };
  // The four rewrites: every pair (c_b, c_{b+1}) of neighbours occurs in one of them.
  std::vector<bool> all0(n, false), all1(n, true), even(n), odd(n);
  for (std::size_t b = 0; b < n; ++b) {
    even[b] = b % 2 == 0;
    odd[b] = b % 2 == 1;
  }
  const Measured m0 = measure(all0), m1 = measure(all1), me = measure(even), mo = measure(odd);

  // Positions: the operators of the all-checkpointed graph from its first backward operator on (every other
  // rewrite's backward operators are a subsequence of them: recomputations are only inserted).
  std::map<std::string, std::size_t> position;
  const Graph& g1 = *m1.graph;
  for (std::size_t i = m1.activations.start; i < g1.operators().size(); ++i) {
    const Operator& op = g1.op(static_cast<OperatorId>(i));
    position[op.name] = ch.present_if.size();
    int present = -1;
    if (op.phase == Phase::recompute) {
      const auto it = block_of.find(detail::forward_name(op.name));
      present = it == block_of.end() ? -1 : it->second;
    }
    ch.present_if.push_back(present);
  }
  const std::size_t P = ch.present_if.size();
  ch.constant.assign(P, 0);
  ch.table.assign(n, {});
  for (auto& t : ch.table) {
    for (auto& row : t) row.assign(P, 0);
  }

  // The block a storage belongs to: its producer's, else the block of the first forward operator reading it
  // (a graph input); -1 for storages outside the chain (the loss's, the head's).
  auto owner = [&](const Graph& g, TensorId storage) {
    const Tensor& t = g.tensor(storage);
    if (t.producer != kNone) {
      const auto it = block_of.find(detail::forward_name(g.op(t.producer).name));
      return it == block_of.end() ? -1 : it->second;
    }
    int first = -1;
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::forward) continue;
      for (const Operand& o : op.operands) {
        if (o.is_output() || storage_of(g, o.tensor) != storage) continue;
        const auto it = block_of.find(op.name);
        if (it != block_of.end()) first = first < 0 ? it->second : std::min(first, it->second);
      }
    }
    return first;
  };
  auto interval = [&](const Measured& m, const ActivationInterval& iv) {
    const Graph& g = *m.graph;
    const std::size_t from = iv.from == m.activations.start ? 0 : position.at(g.op(static_cast<OperatorId>(iv.from)).name);
    const std::size_t last = position.at(g.op(static_cast<OperatorId>(iv.last)).name);
    return std::pair{from, last};
  };
  // Owners depend only on the forward graph: compute them once per rewrite (storage ids differ between rewrites).
  auto accumulate = [&](const Measured& m, const std::function<std::vector<std::int64_t>*(int block)>& row_of,
                        bool constants) {
    for (const ActivationInterval& iv : m.activations.intervals) {
      const int b = owner(*m.graph, iv.storage);
      std::vector<std::int64_t>* row = b < 0 ? (constants ? &ch.constant : nullptr) : row_of(b);
      if (!row) continue;
      const auto [from, last] = interval(m, iv);
      for (std::size_t p = from; p <= last; ++p) (*row)[p] += iv.bytes;
    }
  };
  accumulate(m0, [&](int b) { return &ch.table[static_cast<std::size_t>(b)][0]; }, true);
  accumulate(m1, [&](int b) { return &ch.table[static_cast<std::size_t>(b)][3]; }, false);
  // Block b is checkpointed in `even` when b is even: there (c_b, c_{b+1}) = (1, 0); for odd b it is (0, 1).
  accumulate(me, [&](int b) { return &ch.table[static_cast<std::size_t>(b)][b % 2 == 0 ? 2 : 1]; }, false);
  accumulate(mo, [&](int b) { return &ch.table[static_cast<std::size_t>(b)][b % 2 == 1 ? 2 : 1]; }, false);
  if (n > 0) {  // the last block has no successor: its "next checkpointed" rows are never read
    ch.table[n - 1][1] = ch.table[n - 1][0];
    ch.table[n - 1][3] = ch.table[n - 1][2];
  }

  // Costs: the recompute operators of each block in the all-checkpointed graph (only those backward needs).
  ch.cost.assign(n, 0);
  ch.macs.assign(n, 0);
  for (const Operator& op : g1.operators()) {
    if (op.phase != Phase::recompute) continue;
    const auto it = block_of.find(detail::forward_name(op.name));
    if (it == block_of.end()) continue;
    const auto b = static_cast<std::size_t>(it->second);
    ch.macs[b] += op.macs();
    ch.cost[b] += cost ? cost(g1, op) : static_cast<double>(op.macs());
  }
  return ch;
}

CheckpointBlocks checkpoint_blocks(const Graph& graph, RecomputeSemantics semantics) {
  std::set<std::string> suffixes;
  for (const Operator& op : graph.operators()) {
    if (op.phase == Phase::forward) suffixes.insert(micro_batch_suffix(op));
  }
  CheckpointBlocks out;
  for (const std::string& suffix : suffixes) {
    const ModuleTree tree = module_tree(graph, suffix);
    const std::vector<ModuleItem> items = tree.blocks();
    if (out.regions.empty()) {
      out.regions.resize(items.size());
      for (const ModuleItem& i : items) out.names.push_back(tree.label(graph, i));
    }
    for (std::size_t b = 0; b < items.size() && b < out.regions.size(); ++b) {
      CheckpointRegion r{tree.label(graph, items[b]) + (suffix.empty() ? "" : " (micro-batch " + suffix.substr(1) + ")"),
                         tree.operators_of(items[b]), semantics};
      std::sort(r.operators.begin(), r.operators.end());
      out.regions[b].push_back(std::move(r));
    }
  }
  return out;
}

CheckpointChain checkpoint_chain(const GraphPtr& graph, const RecomputeCost& cost, const GraphFinish& finish,
                                 RecomputeSemantics semantics) {
  CheckpointBlocks blocks = checkpoint_blocks(*graph, semantics);
  return checkpoint_chain(graph, std::move(blocks.regions), std::move(blocks.names), cost, finish);
}

namespace {

/// A partial choice of blocks 0..k-1: the bytes already summed at each open position, the largest sum at the
/// closed ones, its cost.
using State = detail::ChainState<std::vector<bool>>;

}  // namespace

std::vector<ChainChoice> chain_front(const CheckpointChain& ch) {
  const std::size_t n = ch.size();
  const std::size_t P = ch.constant.size();
  if (n == 0) return {ChainChoice{{}, ch.peak({}), 0}};
  // A position is final once the last block contributing to it has its pair term added (block b's term is added
  // when block b + 1 is chosen, the last block's at the end) and its presence is decided.
  std::vector<std::size_t> closes(P, 0);  // the stage after which it is final (stage s chooses block s; n: the end)
  for (std::size_t p = 0; p < P; ++p) {
    std::size_t s = ch.present_if[p] >= 0 ? static_cast<std::size_t>(ch.present_if[p]) : 0;
    for (std::size_t b = 0; b < n; ++b) {
      for (const auto& row : ch.table[b]) {
        if (row[p] != 0) s = std::max(s, b + 1);
      }
    }
    closes[p] = std::min(s, n);
  }
  std::vector<std::size_t> open_positions(P);
  for (std::size_t p = 0; p < P; ++p) open_positions[p] = p;

  std::vector<State> states{State{{}, ch.constant, 0, 0}};
  for (std::size_t s = 0; s <= n; ++s) {
    std::vector<State> next;
    for (const State& st : states) {
      for (int c = 0; c < (s < n ? 2 : 1); ++c) {
        State x = st;
        if (s < n) {
          x.choice.push_back(c == 1);
          if (c == 1) x.cost += ch.cost[s];
        }
        if (s > 0) {  // block s-1's pair term is now known
          const std::size_t b = s - 1;
          const bool cur = x.choice[b];
          const bool nxt = s < n && x.choice[s];
          const auto& row = ch.table[b][(cur ? 2 : 0) + (nxt ? 1 : 0)];
          for (std::size_t i = 0; i < open_positions.size(); ++i) {
            if (x.open[i] != detail::kAbsent) x.open[i] += row[open_positions[i]];
          }
        }
        if (s < n) {  // positions that are recomputations of block s exist only when it is checkpointed
          for (std::size_t i = 0; i < open_positions.size(); ++i) {
            if (ch.present_if[open_positions[i]] == static_cast<int>(s) && c == 0) x.open[i] = detail::kAbsent;
          }
        }
        next.push_back(std::move(x));
      }
    }
    detail::close_stage(next, open_positions, closes, s);
    states = std::move(next);
  }
  return detail::cheapest_per_peak<ChainChoice>(states);
}

std::optional<ChainChoice> optimal_choice(const CheckpointChain& chain, std::int64_t budget) {
  return detail::cheapest_within(chain_front(chain), budget);
}

std::string CheckpointSolver::text() const {
  if (name != "milp") return name;
  return "milp," + format_number(time_limit_s) + (node_limit >= 0 ? "," + std::to_string(node_limit) : "");
}

CheckpointSolver parse_checkpoint_solver(const std::string& text, const SourceLocation& where) {
  CheckpointSolver solver;
  solver.where = where;
  std::vector<std::string> parts{""};  // split at commas, empty parts kept (an error below)
  for (char ch : text) {
    if (ch == ',') parts.emplace_back();
    else parts.back() += ch;
  }
  const auto bad = [&]() {
    return UserError(where, "expected dp, segments or milp[,SECONDS[,NODES]] (a time limit >= 0 and a node limit >= 0), or rotor, not '" +
                                text + "'");
  };
  if (parts.empty() || (parts[0] != "dp" && parts[0] != "milp" && parts[0] != "segments" && parts[0] != "rotor") ||
      (parts[0] != "milp" && parts.size() > 1) ||
      parts.size() > 3) {
    throw bad();
  }
  solver.name = parts[0];
  if (parts.size() > 1) {
    std::size_t used = 0;
    try {
      solver.time_limit_s = std::stod(parts[1], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (parts[1].empty() || used != parts[1].size() || !(solver.time_limit_s >= 0)) throw bad();
  }
  if (parts.size() > 2) {
    std::size_t used = 0;
    try {
      solver.node_limit = std::stoll(parts[2], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (parts[2].empty() || used != parts[2].size() || solver.node_limit < 0) throw bad();
  }
  return solver;
}

std::vector<CheckpointRegion> optimal_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                              const RecomputeCost& cost, const GraphFinish& finish,
                                              const CheckpointSolver& solver, CheckpointSolve* solve) {
  // Several micro-batches: the same problem each, solved once on the first (checkpoint_micro_batches.hpp).
  if (solver.name != "rotor") {
    const MicroBatchSteps steps = micro_batch_steps(graph, policy.where);
    if (steps.count > 1) {
      return solve_every_micro_batch(graph, steps, policy, cost, finish, solver.name, solve,
                                     [&](const GraphPtr& first, CheckpointSolve* s) {
                                       return optimal_regions(first, policy, cost, finish, solver, s);
                                     });
    }
  }
  if (solver.name == "milp") return milp_regions(graph, policy, solver, cost, finish, solve);
  if (solver.name == "segments") return segment_regions(graph, policy, cost, finish, solve);
  if (solver.name == "rotor") {
    throw std::invalid_argument("solver rotor: its nested schedule is no set of regions; call rotor_regions");
  }
  const CheckpointChain chain = checkpoint_chain(graph, cost, finish, policy.semantics);
  const std::vector<ChainChoice> front = chain_front(chain);
  const ChainChoice best =
      detail::cheapest_or_throw(front, policy, "choice", chain.size(), graph->name(), "dp", solve);
  if (solve) {
    for (std::size_t b = 0; b < chain.size(); ++b) {
      if (best.checkpointed[b]) solve->checkpointed.push_back(chain.names[b]);
    }
  }
  std::vector<CheckpointRegion> regions = chain.regions_of(best.checkpointed);
  detail::check_chain_model(graph, regions, finish, best.peak, policy, "dp");
  return regions;
}

}  // namespace monet
