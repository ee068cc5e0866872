// Stage 2's energy (sections 7.3, 7.4 of the ZigZag notes; finish() in evaluate_finish.cpp): per operand, level and
// direction the instantaneous bandwidth and the word accesses through the port's min/max widths and the unit
// count, their read/write energy; and the data each level holds.
#include <cmath>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

double MappingEvaluator::memory_energy() {
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const Options& opt = options_;
  const auto& pf = pf_;
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  Evaluation& ev = ev_;
  double mem_energy = 0;
  ev.memory_energy.resize(nops);
  ev.word_accesses.resize(nops);
  ev.inst_bandwidth.resize(nops);
  ev.inst_bandwidth_truncated.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    const LayerOperand& op = L.ops[o];
    const auto& levels = h.levels[op.slot];
    ev.memory_energy[o].assign(levels.size(), 0);
    ev.word_accesses[o].assign(levels.size(), {0, 0, 0, 0});
    ev.inst_bandwidth[o].assign(levels.size(), {0, 0, 0, 0});
    const bool truncated = opt.stream_mapping_objective || opt.stream_bandwidth_rounding;  // only Stream's use them
    ev.inst_bandwidth_truncated[o].assign(truncated ? levels.size() : 0, {0, 0, 0, 0});
    for (std::size_t m = 0; m < levels.size(); ++m) {
      for (int d = 0; d < 4; ++d) {
        const auto& t = pf[o].transfers[m][static_cast<std::size_t>(d)];
        if (t.count > 0 && t.window > 0) {
          ev.inst_bandwidth[o][m][static_cast<std::size_t>(d)] = t.amount * t.prec / t.window;
        }
        if (truncated) ev.inst_bandwidth_truncated[o][m][static_cast<std::size_t>(d)] = pi(o).transfers[m][static_cast<std::size_t>(d)].inst_bw;
      }
    }
    for (std::size_t m = 0; m < levels.size(); ++m) {
      const MemoryLevel& mem = core.memories[static_cast<std::size_t>(levels[m])];
      for (int d = 0; d < 4; ++d) {
        const auto& t = pf[o].transfers[m][static_cast<std::size_t>(d)];
        if (t.amount <= 0 || t.prec <= 0 || t.count <= 0) continue;
        const int k = port_of_[o][m][static_cast<std::size_t>(d)];
        if (k < 0) {
          throw UserError(SourceLocation{core.file}, "memory '" + mem.name + "' of core '" + core.name +
                                                         "' has no port for (" + to_string(static_cast<OperandSlot>(op.slot)) +
                                                         ", " + to_string(kDirection[d]) + "), which this mapping needs");
        }
        const Port* port = ports_[static_cast<std::size_t>(k)].port;
        const auto bmin = static_cast<double>(port->bandwidth_min_bits);
        const auto bmax = static_cast<double>(port->bandwidth_max_bits);
        const double accesses =
            std::trunc(std::ceil(t.amount * t.prec / bmin) * (bmin / bmax) * t.count * pf[o].unit_count[m + 1]);
        const double e = accesses * ((d == kTL || d == kTH) ? mem.read_energy_pj : mem.write_energy_pj);
        mem_energy += e;
        ev.memory_energy[o][m] += e;
        ev.word_accesses[o][m][static_cast<std::size_t>(d)] = accesses;
      }
    }
  }
  return mem_energy;
}

void MappingEvaluator::record_level_bits() {
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const auto& pf = pf_;
  const std::size_t nops = L.ops.size();
  Evaluation& ev = ev_;
  ev.level_bits.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    ev.level_bits[o].clear();
    for (std::size_t m = 0; m < h.levels[L.ops[o].slot].size(); ++m) ev.level_bits[o].push_back(pf[o].data_bits[m + 1]);
  }
}

}  // namespace monet::loopnest
