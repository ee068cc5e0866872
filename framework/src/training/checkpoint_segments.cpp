// The optimal policy over Rotor's segments (checkpoint_segments.hpp): the model from rewrites and its DP.
#include "monet/training/checkpoint_segments.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <chrono>
#include <spdlog/spdlog.h>

#include "chain_dp.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"
#include "recompute_names.hpp"

namespace monet {

namespace {

/// The states block k may take after block k - 1 took `previous` (-2: k is the first block).
std::vector<int> next_states(const CheckpointSegments& m, std::size_t k, int previous) {
  if (previous >= 0 && m.segments[static_cast<std::size_t>(previous)].last >= k) return {previous};  // inside it
  std::vector<int> out{-1};
  for (std::size_t s = 0; s < m.segments.size(); ++s) {
    if (m.segments[s].first == k) out.push_back(static_cast<int>(s));
  }
  return out;
}

}  // namespace

bool CheckpointSegments::valid(const SegmentState& st) const {
  if (st.size() != size()) return false;
  for (std::size_t k = 0; k < size(); ++k) {
    if (st[k] < -1 || st[k] >= static_cast<int>(segments.size())) return false;
    const auto allowed = next_states(*this, k, k == 0 ? -2 : st[k - 1]);
    if (std::find(allowed.begin(), allowed.end(), st[k]) == allowed.end()) return false;
  }
  return size() == 0 || st.back() < 0 || segments[static_cast<std::size_t>(st.back())].last == size() - 1;
}

std::int64_t CheckpointSegments::peak(const SegmentState& st) const {
  std::vector<std::int64_t> live = constant;
  for (std::size_t k = 0; k < size(); ++k) {
    const auto& row = table.at({static_cast<int>(k), st[k], k + 1 < size() ? st[k + 1] : -1});
    for (std::size_t p = 0; p < live.size(); ++p) live[p] += row[p];
  }
  std::set<int> chosen(st.begin(), st.end());
  std::int64_t peak = 0;
  for (std::size_t p = 0; p < live.size(); ++p) {
    if (present_if[p] < 0 || chosen.contains(present_if[p])) peak = std::max(peak, live[p]);
  }
  return peak;
}

double CheckpointSegments::total_cost(const SegmentState& st) const {
  double c = 0;
  for (int s : std::set<int>(st.begin(), st.end())) c += s >= 0 ? cost[static_cast<std::size_t>(s)] : 0;
  return c;
}

std::vector<CheckpointRegion> CheckpointSegments::regions_of(const SegmentState& st) const {
  std::vector<CheckpointRegion> out;
  for (int s : std::set<int>(st.begin(), st.end())) {
    if (s < 0) continue;
    const CheckpointSegment& seg = segments[static_cast<std::size_t>(s)];
    for (std::size_t mb = 0; mb < blocks[seg.first].size(); ++mb) {
      CheckpointRegion r{seg.first == seg.last ? blocks[seg.first][mb].name
                                               : "segment: " + blocks[seg.first][mb].name + " .. " + blocks[seg.last][mb].name,
                         {}, blocks[seg.first][mb].semantics};
      for (std::size_t k = seg.first; k <= seg.last; ++k) {
        if (mb < blocks[k].size()) r.operators.insert(r.operators.end(), blocks[k][mb].operators.begin(), blocks[k][mb].operators.end());
      }
      std::sort(r.operators.begin(), r.operators.end());
      out.push_back(std::move(r));
    }
  }
  return out;
}

SegmentState CheckpointSegments::per_block(const std::vector<bool>& c) const {
  SegmentState st(size(), -1);
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (segments[s].first == segments[s].last && c[segments[s].first]) st[segments[s].first] = static_cast<int>(s);
  }
  return st;
}

CheckpointSegments checkpoint_segments(const GraphPtr& graph, std::vector<std::vector<CheckpointRegion>> blocks,
                                       std::vector<std::string> names, const RecomputeCost& cost,
                                       const GraphFinish& finish) {
  CheckpointSegments m;
  m.names = std::move(names);
  m.blocks = std::move(blocks);
  const std::size_t n = m.blocks.size();
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a; b < n; ++b) m.segments.push_back({a, b});
  }
  const std::map<std::string, int> block_of = detail::block_of_operators(*graph, m.blocks);
  auto block = [&](const std::string& op_name) {
    const auto it = block_of.find(detail::forward_name(op_name));
    return it == block_of.end() ? -1 : it->second;
  };

  // The pairs of neighbouring states to measure, and segmentations that contain them all (greedily packed;
  // the first is "keep everything", which also gives the constants and the backward operators' order).
  using Pair = std::tuple<int, int, int>;
  std::set<Pair> wanted;
  for (std::size_t k = 0; k < n; ++k) {
    std::set<int> here{-1};
    for (std::size_t s = 0; s < m.segments.size(); ++s) {
      if (m.segments[s].first <= k && k <= m.segments[s].last) here.insert(static_cast<int>(s));
    }
    for (int a : here) {
      if (k + 1 == n) {
        wanted.insert({static_cast<int>(k), a, -1});
        continue;
      }
      for (int b : next_states(m, k + 1, a)) wanted.insert({static_cast<int>(k), a, b});
    }
  }
  std::vector<SegmentState> rewrites{SegmentState(n, -1)};
  {
    std::set<Pair> covered;
    auto cover = [&](const SegmentState& st) {
      for (std::size_t k = 0; k < n; ++k) covered.insert({static_cast<int>(k), st[k], k + 1 < n ? st[k + 1] : -1});
    };
    cover(rewrites[0]);
    constexpr int kFree = -2;
    // Sets block k's state (and, for a segment, its other blocks'); false when that contradicts `st`.
    auto assign = [&](SegmentState& st, std::size_t k, int s) {
      if (s < 0) {
        if (st[k] != kFree && st[k] != -1) return false;
        st[k] = -1;
        return true;
      }
      const CheckpointSegment& seg = m.segments[static_cast<std::size_t>(s)];
      for (std::size_t j = seg.first; j <= seg.last; ++j) {
        if (st[j] != kFree && st[j] != s) return false;
      }
      for (std::size_t j = seg.first; j <= seg.last; ++j) st[j] = s;
      return true;
    };
    for (const Pair& want : wanted) {
      if (covered.contains(want)) continue;
      SegmentState st(n, kFree);
      for (const Pair& p : wanted) {
        if (covered.contains(p)) continue;
        SegmentState trial = st;
        const auto [k, a, b] = p;
        if (!assign(trial, static_cast<std::size_t>(k), a)) continue;
        if (static_cast<std::size_t>(k) + 1 < n && !assign(trial, static_cast<std::size_t>(k) + 1, b)) continue;
        st = std::move(trial);
      }
      for (int& s : st) s = s == kFree ? -1 : s;
      cover(st);
      rewrites.push_back(std::move(st));
    }
  }

  struct Measured {
    GraphPtr graph;
    BackwardActivations activations;
    std::vector<std::pair<int, std::string>> order;  // per operator from `start` on: (segment or -1, name)
  };
  m.rewrites = rewrites.size();
  std::vector<Measured> measured;
  for (const SegmentState& st : rewrites) {
    GraphPtr g = apply_checkpointing(*graph, m.regions_of(st));
    if (finish) g = finish(g);
    Measured x{g, backward_activations(*g), {}};
    for (std::size_t i = 0; i < g->operators().size(); ++i) {
      const Operator& op = g->op(static_cast<OperatorId>(i));
      const int b = op.phase == Phase::recompute ? block(op.name) : -1;
      if (i < x.activations.start) {
        if (b >= 0) throw std::logic_error("checkpoint segments: a recomputation before the backward pass");
        continue;
      }
      x.order.emplace_back(b >= 0 ? st[static_cast<std::size_t>(b)] : -1, op.name);
    }
    measured.push_back(std::move(x));
  }

  // Positions: the backward operators in order, each preceded by the recompute operators of every segment whose
  // recomputation goes right before it (at most one of them is chosen at a time: they overlap).
  std::map<std::string, std::map<int, std::vector<std::string>>> before;  // backward op -> segment -> its ops
  for (const Measured& x : measured) {
    std::vector<std::pair<int, std::string>> pending;
    for (const auto& [s, name] : x.order) {
      if (s >= 0) {
        pending.emplace_back(s, name);
        continue;
      }
      for (const auto& [ps, pname] : pending) {
        auto& ops = before[name][ps];
        if (std::find(ops.begin(), ops.end(), pname) == ops.end()) ops.push_back(pname);
      }
      pending.clear();
    }
  }
  std::map<std::pair<int, std::string>, std::size_t> position;
  for (const auto& [s, name] : measured[0].order) {
    const auto it = before.find(name);
    if (it != before.end()) {
      for (const auto& [seg, ops] : it->second) {
        for (const std::string& op : ops) {
          position[{seg, op}] = m.present_if.size();
          m.present_if.push_back(seg);
        }
      }
    }
    position[{-1, name}] = m.present_if.size();
    m.present_if.push_back(-1);
  }
  const std::size_t P = m.present_if.size();
  m.constant.assign(P, 0);

  // The block a storage belongs to: its producer's, else the first forward operator's reading it (-1: outside).
  auto owner = [&](const Graph& g, TensorId storage) {
    const Tensor& t = g.tensor(storage);
    if (t.producer != kNone) return block(g.op(t.producer).name);
    int first = -1;
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::forward) continue;
      for (const Operand& o : op.operands) {
        if (o.is_output() || storage_of(g, o.tensor) != storage) continue;
        const int b = block(op.name);
        if (b >= 0) first = first < 0 ? b : std::min(first, b);
      }
    }
    return first;
  };
  m.cost.assign(m.segments.size(), 0);
  m.macs.assign(m.segments.size(), 0);
  std::vector<bool> costed(m.segments.size(), false);
  for (std::size_t r = 0; r < measured.size(); ++r) {
    const Measured& x = measured[r];
    const SegmentState& st = rewrites[r];
    const Graph& g = *x.graph;
    auto at = [&](std::size_t op) {
      return position.at(x.order[op - x.activations.start]);
    };
    std::vector<std::vector<std::int64_t>*> rows(n, nullptr);  // per block: its row when first measured here
    for (std::size_t k = 0; k < n; ++k) {
      const auto key = std::tuple{static_cast<int>(k), st[k], k + 1 < n ? st[k + 1] : -1};
      if (!m.table.contains(key)) rows[k] = &(m.table[key] = std::vector<std::int64_t>(P, 0));
    }
    for (const ActivationInterval& iv : x.activations.intervals) {
      const int b = owner(g, iv.storage);
      std::vector<std::int64_t>* row = b < 0 ? (r == 0 ? &m.constant : nullptr) : rows[static_cast<std::size_t>(b)];
      if (!row) continue;
      const std::size_t from = iv.from == x.activations.start ? 0 : at(iv.from);
      const std::size_t last = at(iv.last);
      for (std::size_t p = from; p <= last; ++p) (*row)[p] += iv.bytes;
    }
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::recompute) continue;
      const int b = block(op.name);
      if (b < 0) continue;
      const auto s = static_cast<std::size_t>(st[static_cast<std::size_t>(b)]);
      if (costed[s]) continue;
      m.macs[s] += op.macs();
      m.cost[s] += cost ? cost(g, op) : static_cast<double>(op.macs());
    }
    for (int s : std::set<int>(st.begin(), st.end())) {
      if (s >= 0) costed[static_cast<std::size_t>(s)] = true;
    }
  }
  return m;
}

CheckpointSegments checkpoint_segments(const GraphPtr& graph, const RecomputeCost& cost, const GraphFinish& finish,
                                       RecomputeSemantics semantics) {
  CheckpointBlocks blocks = checkpoint_blocks(*graph, semantics);
  return checkpoint_segments(graph, std::move(blocks.regions), std::move(blocks.names), cost, finish);
}

namespace {

/// A partial segmentation of blocks 0..k-1, as the per-block DP's states.
using State = detail::ChainState<SegmentState>;

}  // namespace

std::vector<SegmentChoice> segments_front(const CheckpointSegments& m) {
  const std::size_t n = m.size(), P = m.constant.size();
  if (n == 0) return {SegmentChoice{{}, m.peak({}), 0}};
  // A position is final once every block that puts bytes there has its term (block k's is added when k + 1 is
  // chosen, the last block's at the end) and its presence is decided (when its segment's first block is).
  std::vector<std::size_t> closes(P, 0);
  for (std::size_t p = 0; p < P; ++p) {
    if (m.present_if[p] >= 0) closes[p] = m.segments[static_cast<std::size_t>(m.present_if[p])].first + 1;
  }
  for (const auto& [key, row] : m.table) {
    const auto k = static_cast<std::size_t>(std::get<0>(key));
    for (std::size_t p = 0; p < P; ++p) {
      if (row[p] != 0) closes[p] = std::max(closes[p], k + 1);
    }
  }
  std::vector<std::size_t> open_positions(P);
  for (std::size_t p = 0; p < P; ++p) open_positions[p] = p;

  std::vector<State> states{State{{}, m.constant, 0, 0}};
  for (std::size_t s = 0; s <= n; ++s) {
    std::vector<State> next;
    for (const State& st : states) {
      const std::vector<int> options = s < n ? next_states(m, s, s == 0 ? -2 : st.choice.back()) : std::vector<int>{-3};
      for (int c : options) {
        if (s == n && st.choice.back() >= 0 && m.segments[static_cast<std::size_t>(st.choice.back())].last != n - 1) continue;
        State x = st;
        if (s < n) {
          x.choice.push_back(c);
          if (c >= 0 && (s == 0 || st.choice.back() != c)) x.cost += m.cost[static_cast<std::size_t>(c)];
        }
        if (s > 0) {  // block s - 1's term is now known
          const auto& row = m.table.at({static_cast<int>(s - 1), x.choice[s - 1], s < n ? x.choice[s] : -1});
          for (std::size_t i = 0; i < open_positions.size(); ++i) {
            if (x.open[i] != detail::kAbsent) x.open[i] += row[open_positions[i]];
          }
        }
        if (s < n) {  // the recompute positions of segments starting here exist only when that one is chosen
          for (std::size_t i = 0; i < open_positions.size(); ++i) {
            const int q = m.present_if[open_positions[i]];
            if (q >= 0 && m.segments[static_cast<std::size_t>(q)].first == s && q != c) x.open[i] = detail::kAbsent;
          }
        }
        next.push_back(std::move(x));
      }
    }
    detail::close_stage(next, open_positions, closes, s);
    states = std::move(next);
  }
  return detail::cheapest_per_peak<SegmentChoice>(states);
}

std::optional<SegmentChoice> optimal_segmentation(const CheckpointSegments& m, std::int64_t budget) {
  return detail::cheapest_within(segments_front(m), budget);
}

std::vector<CheckpointRegion> segment_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                              const RecomputeCost& cost, const GraphFinish& finish,
                                              CheckpointSolve* solve) {
  const auto t0 = std::chrono::steady_clock::now();
  const CheckpointSegments m = checkpoint_segments(graph, cost, finish, policy.semantics);
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<SegmentChoice> front = segments_front(m);
  spdlog::info("checkpoint segments ({} blocks, {} positions, {} pairs of states from {} rewrites): model {:.3f} s, "
               "DP {:.3f} s, {} segmentations on the front",
               m.size(), m.constant.size(), m.table.size(), m.rewrites, std::chrono::duration<double>(t1 - t0).count(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count(), front.size());
  const SegmentChoice best =
      detail::cheapest_or_throw(front, policy, "segmentation", m.size(), graph->name(), "segments", solve);
  if (solve) {
    for (int s : std::set<int>(best.state.begin(), best.state.end())) {
      if (s < 0) continue;
      const CheckpointSegment& seg = m.segments[static_cast<std::size_t>(s)];
      solve->checkpointed.push_back(seg.first == seg.last ? m.names[seg.first]
                                                          : m.names[seg.first] + " .. " + m.names[seg.last]);
    }
  }
  std::vector<CheckpointRegion> regions = m.regions_of(best.state);
  detail::check_chain_model(graph, regions, finish, best.peak, policy, "segments");
  return regions;
}

}  // namespace monet
