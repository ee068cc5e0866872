// Stage 2's ports and stalls (sections 8.1-8.3 of the ZigZag notes; finish() in evaluate_finish.cpp): which port
// each (operand, level, direction) uses (once per evaluator), double buffering from capacity, the periodic
// transfers per port with their allowed and real cycles, and each port's stall.
#include <algorithm>
#include <cmath>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

namespace {

using Activity = MappingEvaluator::Activity;

/// |∪ of [k·p, k·p + allowed)| over one period of the longest activity (8.3).
double union_cycles(const std::vector<const Activity*>& acts) {
  double pmax = 0;
  for (const Activity* a : acts) pmax = std::max(pmax, a->period);
  const auto P = static_cast<std::int64_t>(pmax);
  if (P <= 0) return 0;
  if (P <= (std::int64_t{1} << 22)) {
    std::vector<char> marked(static_cast<std::size_t>(P), 0);
    for (const Activity* a : acts) {
      const auto p = static_cast<std::int64_t>(a->period);
      const auto len = std::min<std::int64_t>(static_cast<std::int64_t>(a->allowed), p);
      if (p <= 0 || len <= 0) continue;
      for (std::int64_t start = 0; start < P; start += p) {
        std::fill(marked.begin() + start, marked.begin() + std::min(P, start + len), 1);
      }
    }
    return static_cast<double>(std::count(marked.begin(), marked.end(), 1));
  }
  // Very long periods: nested periods (each divides the next) — count the union analytically.
  std::vector<const Activity*> sorted = acts;
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->period < b->period; });
  double covered_fraction = 0;  // fraction of time covered, assuming independent nested patterns
  for (const Activity* a : sorted) {
    const double f = std::min(1.0, a->allowed / a->period);
    covered_fraction = covered_fraction + f * (1 - covered_fraction);
  }
  return std::round(covered_fraction * pmax);
}

}  // namespace

/// What stage 2 needs of the hierarchy's ports, once per evaluator: the ports in address order, which port
/// each (operand, level, direction) uses, which (operand, level) pairs share a memory.
void MappingEvaluator::prepare_ports() {
  const Core& core = *h_.core;
  const std::size_t nops = layer_.ops.size();
  // Whether a port carries both input operands (ZigZag's port_is_shared_by_two_input_operands), counting only
  // the operands the hierarchy keeps in that memory.
  auto shared_by_inputs = [&](const Port& port, int memory) {
    bool i1 = false;
    bool i2 = false;
    for (const PortAllocation& pa : port.allocation) {
      if (!h_.holds(static_cast<int>(pa.slot), memory)) continue;
      i1 |= pa.slot == OperandSlot::I1;
      i2 |= pa.slot == OperandSlot::I2;
    }
    return i1 && i2;
  };
  std::vector<std::pair<const Port*, int>> used;
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h_.levels[layer_.ops[o].slot];
    for (int memory : levels) {
      for (int d = 0; d < 4; ++d) {
        const Port* port = core.memories[static_cast<std::size_t>(memory)].port_for(
            static_cast<OperandSlot>(layer_.ops[o].slot), kDirection[d]);
        if (port) used.emplace_back(port, memory);
      }
    }
  }
  std::sort(used.begin(), used.end(), [](const auto& a, const auto& b) { return std::less<const Port*>{}(a.first, b.first); });
  used.erase(std::unique(used.begin(), used.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), used.end());
  for (const auto& [port, memory] : used) ports_.push_back(PortWork{port, memory, shared_by_inputs(*port, memory), {}});
  port_of_.resize(nops);
  table_.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h_.levels[layer_.ops[o].slot];
    port_of_[o].assign(levels.size(), {-1, -1, -1, -1});
    table_[o].resize(levels.size());
    for (std::size_t m = 0; m < levels.size(); ++m) {
      for (int d = 0; d < 4; ++d) {
        const Port* port = core.memories[static_cast<std::size_t>(levels[m])].port_for(
            static_cast<OperandSlot>(layer_.ops[o].slot), kDirection[d]);
        for (std::size_t k = 0; k < ports_.size() && port; ++k) {
          if (ports_[k].port == port) port_of_[o][m][static_cast<std::size_t>(d)] = static_cast<int>(k);
        }
      }
    }
  }
  sharers_.resize(core.memories.size());
  for (std::size_t memory = 0; memory < core.memories.size(); ++memory) {
    for (std::size_t o = 0; o < nops; ++o) {
      const int lv = h_.level_of(layer_.ops[o].slot, static_cast<int>(memory));
      if (lv >= 0) sharers_[memory].emplace_back(o, static_cast<std::size_t>(lv));
    }
  }
  eff_ind_.resize(nops);
  eff_shared_.resize(nops);
  db_.resize(nops);
}

void MappingEvaluator::double_buffering() {
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const auto& pf = pf_;
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  auto& eff_ind = eff_ind_;
  auto& eff_shared = eff_shared_;
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h.levels[L.ops[o].slot];
    eff_ind[o].clear();
    for (std::size_t m = 0; m < levels.size(); ++m) {
      const double size = static_cast<double>(core.memories[static_cast<std::size_t>(levels[m])].size_bits);
      eff_ind[o].push_back(pf[o].effective_bits[m + 1] / size);
    }
  }
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h.levels[L.ops[o].slot];
    eff_shared[o].assign(levels.size(), 0);
    for (std::size_t m = 0; m < levels.size(); ++m) {
      for (const auto& [o2, l2] : sharers_[static_cast<std::size_t>(levels[m])]) eff_shared[o][m] += eff_ind[o2][l2];
    }
  }
  auto& db = db_;
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h.levels[L.ops[o].slot];
    db[o].assign(1, false);
    for (std::size_t m = 0; m < levels.size(); ++m) {
      if (eff_shared[o][m] <= 0.5) {
        db[o].push_back(true);
      } else if (eff_ind[o][m] <= 1 - eff_shared[o][m]) {
        db[o].push_back(true);
        for (const auto& [o2, l2] : sharers_[static_cast<std::size_t>(levels[m])]) eff_shared[o2][l2] += eff_ind[o][m];
      } else {
        db[o].push_back(false);
      }
    }
  }
}

void MappingEvaluator::port_activities() {
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const std::size_t nops = L.ops.size();
  const auto& db = db_;
  for (PortWork& pw : ports_) pw.acts.clear();
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h.levels[L.ops[o].slot];
    for (std::size_t m = 0; m < levels.size(); ++m) {
      for (int d = 0; d < 4; ++d) {
        const auto& t = pi(o).transfers[m][static_cast<std::size_t>(d)];
        if (t.count <= 0) continue;
        const int k = port_of_[o][m][static_cast<std::size_t>(d)];
        if (k < 0) continue;
        PortWork& pw = ports_[static_cast<std::size_t>(k)];
        const bool to_low = d == kTL || d == kFL;
        const bool buffered = to_low ? db[o][m] : db[o][m + 1];
        Activity a;
        a.op = static_cast<int>(o);
        a.m = static_cast<int>(m);
        a.dir = d;
        a.period = t.period;
        a.count = t.count;
        a.avg_bw = t.avg_bw;
        a.allowed = buffered ? t.period : t.window;
        a.real = std::ceil(t.amount * t.prec / static_cast<double>(pw.port->bandwidth_max_bits));
        a.ss = (a.real - a.allowed) * (t.count - 1);
        a.muw = a.allowed * (t.count - 1);
        pw.acts.push_back(a);
      }
    }
  }
  // ZigZag visits a port's activities in the port's allocation order; the on-loading water-filling depends on it.
  // (A stable insertion sort: a port has a handful of activities.)
  for (PortWork& pw : ports_) {
    const Port* port = pw.port;
    auto rank = [&](const Activity& a) {
      const PortAllocation want{static_cast<OperandSlot>(L.ops[static_cast<std::size_t>(a.op)].slot), kDirection[a.dir]};
      return std::find(port->allocation.begin(), port->allocation.end(), want) - port->allocation.begin();
    };
    auto& acts = pw.acts;
    for (std::size_t i = 1; i < acts.size(); ++i) {
      for (std::size_t j = i; j > 0 && rank(acts[j]) < rank(acts[j - 1]); --j) std::swap(acts[j], acts[j - 1]);
    }
  }
}

double MappingEvaluator::port_stall() const {
  double stall = 0;
  for (const PortWork& pw : ports_) {
    const auto& acts = pw.acts;
    if (acts.empty()) continue;
    double ss_port = 0;
    if (acts.size() == 1) {
      ss_port = acts[0].ss;
    } else {
      double U = -1;
      for (const Activity& a : acts) {
        if (a.period == a.allowed) {
          U = a.period * a.count;
          break;
        }
      }
      if (U < 0) {
        std::vector<const Activity*> ptrs;
        const Activity* longest = &acts[0];
        for (const Activity& a : acts) {
          ptrs.push_back(&a);
          if (a.period > longest->period) longest = &a;
        }
        U = union_cycles(ptrs) * longest->count;
      }
      double pos = 0;
      double nonpos = 0;
      double muw = 0;
      for (const Activity& a : acts) {
        (a.ss > 0 ? pos : nonpos) += a.ss;
        muw += a.muw;
      }
      ss_port = pos + std::max(0.0, nonpos + muw - U);
    }
    stall = std::max(stall, ss_port);
  }
  stall = std::max(0.0, stall);
  return stall;
}

}  // namespace monet::loopnest
