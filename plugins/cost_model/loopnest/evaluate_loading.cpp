// Stage 2's on- and off-loading (section 8.4 of the ZigZag notes; finish() in evaluate_finish.cpp): the cycles to
// bring the inputs in before the computation and the outputs out after it, one-shot transfers water-filled into
// each port's surplus bandwidth; and the loading bandwidth borrowed from the computation on off-chip ports.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

namespace {

/// ZigZag's water-filling of one-shot transfers into the surplus bandwidth (8.4). `compat` reproduces the
/// issue-#125 behaviour (entries already at their minimum are reduced again, possibly below zero).
std::vector<double> reduce_balanced(const std::vector<double>& need, const std::vector<double>& mins, double surplus,
                                    bool compat) {
  const std::size_t n = need.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return need[a] > need[b]; });
  std::vector<double> c(n), mn(n);
  for (std::size_t k = 0; k < n; ++k) {
    c[k] = need[order[k]];
    mn[k] = mins[order[k]];
  }
  double s = surplus;
  for (std::size_t i = 0; i < n; ++i) {
    // A need below its minimum (the minimum is level 1's data for every level, ZigZag's convention) cannot be
    // reduced; ZigZag's arithmetic would then grow the larger needs by the difference (compat only).
    const double room = compat ? c[i] - mn[i] : std::max(0.0, c[i] - mn[i]);
    const double max_red = room * static_cast<double>(i + 1);
    if (s >= max_red) {
      const double step = room;
      for (std::size_t k = 0; k <= i; ++k) c[k] -= step;
      s -= max_red;
    } else {
      const double step = s / static_cast<double>(i + 1);
      for (std::size_t k = 0; k <= i; ++k) c[k] -= step;
      break;
    }
    if (!compat) {
      for (std::size_t k = 0; k <= i; ++k) c[k] = std::max(c[k], mn[k]);
    }
  }
  if (!compat) {
    for (std::size_t k = 0; k < n; ++k) c[k] = std::max(c[k], mn[k]);
  }
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) out[order[k]] = c[k];
  return out;
}

}  // namespace

void MappingEvaluator::loading(double T, double stall) {
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const Options& opt = options_;
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  Evaluation& ev = ev_;
  auto& table = table_;
  borrowed_offchip_bw_.fill(0);
  for (auto& per_level : table) {
    for (auto& dirs : per_level) dirs.fill(Entry{});
  }
  for (const PortWork& pw : ports_) {
    const auto& acts = pw.acts;
    if (acts.empty()) continue;
    once_.clear();
    double busy = 0;
    for (const Activity& a : acts) {
      const LayerOperand& op = L.ops[static_cast<std::size_t>(a.op)];
      if (op.output && (a.dir == kTL || a.dir == kFH)) continue;  // partial sums
      if (a.count > 1) {
        table[static_cast<std::size_t>(a.op)][static_cast<std::size_t>(a.m)][static_cast<std::size_t>(a.dir)] =
            Entry{a.real, pw.shared, true};
        busy += std::ceil(a.avg_bw);
      } else {
        once_.push_back(&a);
      }
    }
    if (once_.empty()) continue;
    const auto bmax = static_cast<double>(pw.port->bandwidth_max_bits);
    const double surplus = std::max(0.0, (bmax - busy) / bmax * (T + stall));
    need_.clear();
    mins_.clear();
    for (const Activity* a : once_) {
      need_.push_back(a->real);
      // ZigZag takes the data of architecture level 1 for every memory level (bug 9 of the notes).
      mins_.push_back(std::ceil(pi(static_cast<std::size_t>(a->op)).data_bits[1] / bmax));
    }
    const auto reduced = reduce_balanced(need_, mins_, surplus, opt.negative_onloading);
    std::array<double, 3> borrowed{};  // per operand, the last of its loads on this port (ZigZag keys them so)
    for (std::size_t k = 0; k < once_.size(); ++k) {
      const Activity& a = *once_[k];
      table[static_cast<std::size_t>(a.op)][static_cast<std::size_t>(a.m)][static_cast<std::size_t>(a.dir)] =
          Entry{reduced[k], pw.shared, true};
      const double computation = std::ceil(T) + stall;
      if (computation > 0) borrowed[static_cast<std::size_t>(a.op)] = std::ceil((need_[k] - reduced[k]) / computation * bmax - 1e-9);
    }
    if (opt.stream_mapping_objective && core.memories[static_cast<std::size_t>(pw.memory)].offchip) {
      for (std::size_t o = 0; o < borrowed.size(); ++o) borrowed_offchip_bw_[o] += borrowed[o];
    }
  }
  auto entry = [&](std::size_t o, std::size_t m, int d) {
    Entry e;
    if (m >= table[o].size()) return e;
    e = table[o][m][static_cast<std::size_t>(d)];
    if (e.set) return e;
    const int k = port_of_[o][m][static_cast<std::size_t>(d)];
    if (k >= 0) e.shared = ports_[static_cast<std::size_t>(k)].shared;
    return e;
  };
  struct Load {
    double individual = 0, shared = 0, half = 0;
  };
  Load loads[kSlots];
  std::size_t nloads = 0;
  for (std::size_t o = 0; o < nops; ++o) {
    const LayerOperand& op = L.ops[o];
    if (op.output) continue;
    Load ld;
    const std::size_t levels = h.levels[op.slot].size();
    for (std::size_t m = 0; m + 1 < levels; ++m) {
      const Entry a = entry(o, m, kFH);
      const Entry b = entry(o, m + 1, kTL);
      const double x = std::max(a.cycles, b.cycles);
      if (!a.shared && !b.shared) ld.individual += x;
      else if (a.shared && b.shared) ld.shared += x;
      else if (opt.half_shared_assigned) ld.half = x;  // ZigZag assigns instead of adding (bug 8 of the notes)
      else ld.half += x;
    }
    if (nloads < kSlots) loads[nloads++] = ld;
  }
  double onload = 0;
  if (nloads == 1) {
    onload = loads[0].individual;
  } else if (nloads >= 2) {
    const Load& A = loads[0];
    const Load& B = loads[1];
    onload = std::min(A.shared + std::max(B.shared + B.half + B.individual, A.half + A.individual),
                      B.shared + std::max(A.shared + A.half + A.individual, B.half + B.individual));
  }
  double offload = 0;
  for (std::size_t o = 0; o < nops; ++o) {
    if (!L.ops[o].output) continue;
    const std::size_t levels = h.levels[L.ops[o].slot].size();
    for (std::size_t m = 0; m + 1 < levels; ++m) offload += std::max(entry(o, m, kTH).cycles, entry(o, m + 1, kFL).cycles);
  }
  ev.onloading = onload;
  ev.offloading = offload;
}

}  // namespace monet::loopnest
