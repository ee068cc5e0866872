#include "monet/report/metrics.hpp"

#include <limits>
#include <memory>

#include "monet/arch/estimation.hpp"
#include "monet/system/parallel_step.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/offload.hpp"

namespace monet {

std::vector<std::pair<std::string, std::string>> metric_keys() {
  return {{"latency_cycles", "cycles"},
          {"latency_s", "s"},
          {"energy_pj", "pJ"},
          {"edp_pj_cycles", "pJ*cycles"},
          {"energy_breakdown.mac_energy_pj", "pJ"},
          {"energy_breakdown.onchip_memory_energy_pj", "pJ"},
          {"energy_breakdown.offchip_energy_pj", "pJ"},
          {"energy_breakdown.link_energy_pj", "pJ"},
          {"energy_breakdown.spill_energy_pj", "pJ"},
          {"energy_breakdown.idle_energy_pj", "pJ"},
          {"offchip_read_bytes", "B"},
          {"offchip_write_bytes", "B"},
          {"spilled_bytes", "B"},
          {"peak_offchip_bytes", "B"},
          {"peak_onchip_bytes", "B"},
          {"max_core_peak_bytes", "B"},
          {"onchip_capacity_bytes", "B"},
          {"capacity_violation", ""},
          {"pe_count", ""},
          {"cores", ""},
          {"macs", ""},
          {"area_mm2", "mm2"},
          {"mfu", ""},
          {"hfu", ""},
          // The step of the whole system (docs/datacenter.md); on one chip: latency_s, 1 chip, the chip's own.
          {"step_time_s", "s"},
          {"model_tflops_per_chip", "TFLOP/s"},
          {"hardware_tflops_per_chip", "TFLOP/s"},
          {"chips", ""},
          {"energy_per_step_j", "J"},
          {"memory_per_chip_bytes", "B"},
          // Training steps (0 for a forward pass): activation memory and recomputation (docs/training.md).
          {"training.saved_activation_bytes", "B"},
          {"training.peak_activation_bytes", "B"},
          {"training.recompute_macs", ""},
          // Offloading (docs/training.md#offloading): the backward activation peak with offloaded storages counted
          // from their first backward reader on, and the bytes that left the cores (training.peak_activation_bytes
          // and 0 when nothing is offloaded).
          {"training.offload.peak_activation_bytes", "B"},
          {"training.offload.offloaded_bytes", "B"}};
}

bool higher_is_better(const std::string& metric) {
  return metric == "mfu" || metric == "hfu" || metric == "model_tflops_per_chip" || metric == "hardware_tflops_per_chip";
}

namespace {
std::int64_t recomputed_macs(const Graph& g) {
  std::int64_t macs = 0;
  for (const Operator& op : g.operators()) {
    macs += op.recomputed_macs();
  }
  return macs;
}

Utilisation utilisation(const Graph& g, std::int64_t recompute_macs, std::int64_t latency_cycles, std::int64_t pes) {
  const double slots = static_cast<double>(latency_cycles) * static_cast<double>(pes);
  if (slots <= 0) return {};
  const auto macs = static_cast<double>(g.total_macs());
  return Utilisation{(macs - static_cast<double>(recompute_macs)) / slots, macs / slots};
}

std::int64_t pe_count(const Accelerator& acc) {
  std::int64_t pes = 0;
  for (const CoreInstance& c : acc.cores) pes += c.core->array.pe_count();
  return pes;
}
}  // namespace

Utilisation utilisation(const PreparedExperiment& p, const ScheduleSummary& s) {
  return utilisation(*p.graph, recomputed_macs(*p.graph), s.latency_cycles, pe_count(*p.experiment.accelerator));
}

std::vector<Metric> summary_metrics(const PreparedExperiment& p, const ScheduleSummary& s) {
  const Accelerator& acc = *p.experiment.accelerator;
  std::int64_t onchip = 0, max_core = 0, capacity = 0, pes = 0;
  for (std::size_t c = 0; c < s.peak_memory_bits.size(); ++c) {
    onchip += (s.peak_memory_bits[c] + 7) / 8;
    max_core = std::max(max_core, (s.peak_memory_bits[c] + 7) / 8);
  }
  for (const CoreInstance& c : acc.cores) capacity += c.core->resident_capacity_bits() / 8;
  pes = pe_count(acc);
  const std::optional<AcceleratorArea> area = accelerator_area(acc);  // NaN when a core's area is unknown
  const double latency = static_cast<double>(s.latency_cycles);
  // Read, not copied: a search's points share it (its saved set is one entry per saved tensor of the whole step).
  const std::shared_ptr<const TrainingMemory> shared = p.training_memory_shared();
  const TrainingMemory& memory = *shared;
  const std::int64_t recompute_macs = recomputed_macs(*p.graph);
  const Utilisation busy = utilisation(*p.graph, recompute_macs, s.latency_cycles, pes);
  std::int64_t offload_peak = memory.peak_activation_bytes;
  if (p.evaluator && !p.evaluator->offloaded().empty()) {
    const std::vector<bool>& mask = p.evaluator->offloaded();
    std::vector<TensorId> tensors;
    for (std::size_t t = 0; t < mask.size(); ++t) {
      if (mask[t]) tensors.push_back(static_cast<TensorId>(t));
    }
    offload_peak = offloaded_peak_activation_bytes(*p.graph, tensors);
  }
  const double latency_s = acc.frequency_hz > 0 ? latency / acc.frequency_hz : 0;
  const auto total_macs = static_cast<double>(p.graph->total_macs());
  // The system's step, or this chip's.
  double step_s = latency_s, model_tf = latency_s > 0 ? 2 * (total_macs - static_cast<double>(recompute_macs)) / latency_s / 1e12 : 0;
  double hardware_tf = latency_s > 0 ? 2 * total_macs / latency_s / 1e12 : 0, chips = 1, step_j = s.energy_pj() * 1e-12;
  double chip_bytes = static_cast<double>((s.peak_offchip_bits + 7) / 8);
  Utilisation used = busy;
  if (s.parallel) {
    const ParallelStep& ps = *s.parallel;
    step_s = ps.step_time_s, model_tf = ps.model_tflops_per_chip, hardware_tf = ps.hardware_tflops_per_chip;
    chips = static_cast<double>(ps.chips), step_j = ps.energy_j, chip_bytes = static_cast<double>(ps.memory_bytes);
    used = Utilisation{ps.mfu, ps.hfu};
  }
  std::vector<Metric> out;
  for (const auto& [key, unit] : metric_keys()) out.push_back(Metric{key, unit, 0});
  std::size_t i = 0;
  for (double v : {latency, latency_s, s.energy_pj(), s.edp(), s.energy.mac_pj, s.energy.onchip_memory_pj,
                   s.energy.offchip_pj, s.energy.link_pj, s.energy.spill_pj, s.energy.idle_pj, static_cast<double>(s.offchip_read_bits / 8),
                   static_cast<double>(s.offchip_write_bits / 8), static_cast<double>(s.spilled_bits / 8),
                   static_cast<double>((s.peak_offchip_bits + 7) / 8), static_cast<double>(onchip),
                   static_cast<double>(max_core), static_cast<double>(capacity), s.capacity_violation,
                   static_cast<double>(pes), static_cast<double>(acc.cores.size()), static_cast<double>(p.graph->total_macs()),
                   area ? area->total_mm2 : std::numeric_limits<double>::quiet_NaN(), used.mfu, used.hfu, step_s,
                   model_tf, hardware_tf, chips, step_j, chip_bytes,
                   static_cast<double>(memory.saved_activation_bytes), static_cast<double>(memory.peak_activation_bytes),
                   static_cast<double>(recompute_macs), static_cast<double>(offload_peak),
                   static_cast<double>((s.offloaded_bits + 7) / 8)}) {
    out[i++].value = v;
  }
  return out;
}

}  // namespace monet
