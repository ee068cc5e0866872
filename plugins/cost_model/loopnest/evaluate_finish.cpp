// Stage 2 of the analytical cost model (sections 7.3-8 of the ZigZag notes; mapping_evaluator.hpp): finish() runs
// its steps in order — energy (evaluate_energy.cpp), double buffering and stalls (evaluate_stalls.cpp), on- and
// off-loading (evaluate_loading.cpp) — then sums the latency and ranks the mapping (here).
#include <algorithm>
#include <cmath>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

const Evaluation& MappingEvaluator::finish() {
  // Stage 2 reads only what make_signature() records (and the layer, hierarchy and options).
  const Layer& L = layer_;
  const Options& opt = options_;
  const Core& core = *h_.core;
  Evaluation& ev = ev_;
  const double T = tf_[0].cycle.back();
  ev.ideal_temporal_cycle = T;
  const double units = static_cast<double>(core.array.pe_count());
  ev.ideal_cycle = std::ceil(L.macs / units);
  ev.spatial_utilization = ev.ideal_cycle / T;
  ev.mac_energy = core.array.unit_energy_pj * L.macs;

  const double mem_energy = memory_energy();  // 7.3, 7.4
  ev.energy = ev.mac_energy + mem_energy;
  record_level_bits();
  double_buffering();  // 8.1
  port_activities();   // 8.2, integer SM
  const double stall = port_stall();  // 8.3
  ev.stall = stall;
  loading(T, stall);  // 8.4
  ev.latency = T + stall + ev.onloading + ev.offloading;
  ev.rank = ev.latency;
  if (opt.stream_mapping_objective) {
    ev.rank = stream_rank(ev);
  } else if (opt.offchip_sharers > 1) {
    ev.rank = sharers_rank(ev);
  }
  return ev;
}

double MappingEvaluator::sharers_rank(const Evaluation& ev) const {
  // Stream's bandwidth-aware objective for CNs streaming in parallel: ceil(used / port) x latency, where the
  // first streamed input counts once (broadcast to the siblings) and the other operands once per sibling.
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const Options& opt = options_;
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  double broadcast = 0;
  double others = 0;
  double port = 0;
  bool first_input = true;
  for (std::size_t o = 0; o < nops; ++o) {
    const auto& levels = h.levels[L.ops[o].slot];
    if (levels.empty()) continue;
    const MemoryLevel& top = core.memories[static_cast<std::size_t>(levels.back())];
    if (!top.offchip) continue;
    const auto& ib = ev.inst_bandwidth[o].back();
    const double used = ib[0] + ib[1] + ib[2] + ib[3];
    port = std::max(port, static_cast<double>(top.read_word_bits()));
    if (!L.ops[o].output && first_input) {
      broadcast += used;
      first_input = false;
    } else {
      others += used;
    }
  }
  return port > 0 ? std::ceil((broadcast + opt.offchip_sharers * others) / port) * ev.latency : ev.latency;
}

double MappingEvaluator::stream_rank(const Evaluation& ev) const {
  // Stream's MinimalBandwidthLatencyStage (21e5ad80): ceil(used / port) x int(latency) once the core has an
  // off-chip level. "Used" counts the operands with the most memory levels only (the others are not seen, even
  // when they stream too); with two or three of them, the first non-output one counts once (broadcast) and the
  // rest once per sibling. Each direction's instantaneous bandwidth is ZigZag 3.8's, truncated twice.
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const Core& core = *h.core;
  std::size_t most = 0;
  double port = 0;
  for (const auto& levels : h.levels) {
    if (levels.empty()) continue;
    most = std::max(most, levels.size());
    const MemoryLevel& top = core.memories[static_cast<std::size_t>(levels.back())];
    if (top.offchip) port = std::max(port, static_cast<double>(top.read_word_bits()));
  }
  if (port <= 0) return ev.latency;
  double counted_once = 0;
  double per_sibling = 0;
  int counted = 0;
  bool broadcast_taken = false;
  constexpr int kOutput = static_cast<int>(OperandSlot::O);
  for (int slot = 0; slot < kSlots; ++slot) {  // I1, I2, O
    if (h.levels[slot].size() != most) continue;
    ++counted;
    double used = 0;
    for (std::size_t o = 0; o < L.ops.size(); ++o) {
      if (L.ops[o].slot != slot) continue;
      for (const double b : ev.inst_bandwidth_truncated[o].back()) used += b;
      used += borrowed_offchip_bw_[o];
    }
    if (slot != kOutput && !broadcast_taken) {
      broadcast_taken = true;
      counted_once += used;
    } else {
      per_sibling += used;
    }
  }
  const double used = counted == 1 ? options_.offchip_sharers * (counted_once + per_sibling)
                                   : counted_once + options_.offchip_sharers * per_sibling;
  return std::ceil(used / port - 1e-12) * std::trunc(ev.latency);
}

}  // namespace monet::loopnest
