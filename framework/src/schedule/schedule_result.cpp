// The schedule's result once every CN is placed: its latency and idle energy, each memory's timeline and what a
// core held at its peak (from the copies the scheduler kept), and the peaks against the memories' capacities.
#include <algorithm>

#include "monet/util/strings.hpp"
#include "scheduler.hpp"

namespace monet {

std::string to_string(MemoryUse u) {
  switch (u) {
    case MemoryUse::activations: return "activations";
    case MemoryUse::recomputed: return "recomputed activations";
    case MemoryUse::weights: return "weights";
    case MemoryUse::gradients: return "gradients";
    case MemoryUse::optimizer_states: return "optimizer states";
    case MemoryUse::streaming: return "streaming";
    case MemoryUse::other: return "other";
  }
  return "?";
}

namespace detail {

/// The timeline of a memory from its allocation events (and, with `with_uses`, the bits of each use at every
/// step); `peak_uses` gets the bits of each use at the peak either way. At equal times releases come first, so
/// a step's bits are what the memory holds from then on.
MemoryTimeline Scheduler::timeline(std::vector<MemoryEvent>& events, bool with_uses, std::int64_t& peak,
                                   std::int64_t& peak_step, std::array<std::int64_t, kMemoryUses>& peak_uses) {
  std::sort(events.begin(), events.end());  // equal (time, delta): any order, the step is the same
  MemoryTimeline tl;
  std::int64_t live = 0;
  std::array<std::int64_t, kMemoryUses> uses{};
  peak = 0;
  peak_step = 0;
  peak_uses = uses;
  tl.steps.emplace_back(0, 0);
  if (with_uses) tl.by_use.emplace_back(uses);
  for (const MemoryEvent& ev : events) {
    live += ev.delta;
    uses[static_cast<std::size_t>(ev.use)] += ev.delta;
    if (tl.steps.back().first != ev.time) {
      tl.steps.emplace_back(ev.time, live);
      if (with_uses) tl.by_use.emplace_back(uses);
    }
    tl.steps.back().second = live;
    if (with_uses) tl.by_use.back() = uses;
    if (live > peak) {  // later allocations at the same time come here again: the step's final bits win
      peak = live;
      peak_step = static_cast<std::int64_t>(tl.steps.size()) - 1;
      peak_uses = uses;
    }
  }
  return tl;
}

/// What a core copy holds, for the composition of the core's memory.
MemoryUse Scheduler::use_of(const Copy& cp) const {
  if (cp.item == kStaging) return MemoryUse::streaming;
  const auto i = static_cast<std::size_t>(cp.item);
  switch (items_[i].role) {
    case TensorRole::activation:
      return i < cns_.nodes.size() && g_.op(cns_.nodes[i].op).phase == Phase::recompute ? MemoryUse::recomputed
                                                                                           : MemoryUse::activations;
    case TensorRole::weight:
    case TensorRole::buffer: return MemoryUse::weights;
    case TensorRole::gradient:
    case TensorRole::weight_gradient: return MemoryUse::gradients;
    case TensorRole::optimizer_state: return MemoryUse::optimizer_states;
    default: return MemoryUse::other;
  }
}

void Scheduler::finish() {
  ScheduleSummary& s = result_.summary;
  std::int64_t latency = 0;
  for (const ScheduledNode& nd : result_.nodes) latency = std::max(latency, nd.end);
  for (const Transfer& t : result_.transfers) latency = std::max(latency, t.end);
  s.latency_cycles = latency;
  s.over_capacity = overflow_;
  if (acc_.idle_power_w > 0) s.energy.idle_pj = acc_.idle_power_w * static_cast<double>(latency) / acc_.frequency_hz * 1e12;

  const std::size_t cores = acc_.cores.size();
  std::vector<std::vector<MemoryEvent>> events(cores);
  for (const Copy& cp : copies_) {
    if (cp.bits == 0) continue;
    const std::int64_t free = cp.free == kNever ? latency : cp.free;
    if (free <= cp.alloc) continue;
    const MemoryUse use = use_of(cp);
    events[static_cast<std::size_t>(cp.core)].push_back({cp.alloc, cp.bits, use});
    events[static_cast<std::size_t>(cp.core)].push_back({free, -cp.bits, use});
  }
  s.peak_memory_bits.assign(cores, 0);
  result_.memory.resize(cores);
  result_.peak_composition.resize(cores);
  for (std::size_t c = 0; c < cores; ++c) {
    std::int64_t peak_step = 0;
    std::array<std::int64_t, kMemoryUses> at{};
    const MemoryTimeline& tl = result_.memory[c] =
        timeline(events[c], in_.memory_by_use, s.peak_memory_bits[c], peak_step, at);
    const auto k = static_cast<std::size_t>(peak_step);
    auto bits = [&](MemoryUse u) { return at[static_cast<std::size_t>(u)]; };
    PeakComposition& pc = result_.peak_composition[c];
    pc.time = tl.steps[k].first;
    pc.activations = bits(MemoryUse::activations);
    pc.recomputed = bits(MemoryUse::recomputed);
    pc.weights = bits(MemoryUse::weights);
    pc.gradients = bits(MemoryUse::gradients);
    pc.optimizer_states = bits(MemoryUse::optimizer_states);
    pc.streaming = bits(MemoryUse::streaming);
    pc.other = bits(MemoryUse::other);
  }
  // Off-chip memory: every source tensor from the start, plus what is written there.
  std::vector<MemoryEvent> dram;
  std::vector<bool> counted(g_.tensors().size(), false);
  for (const SourceItem& si : cns_.source_items) {
    const auto t = static_cast<std::size_t>(si.tensor);
    if (counted[t]) continue;
    counted[t] = true;
    dram.push_back({0, g_.tensor(si.tensor).bits()});
  }
  for (const Copy& cp : dram_copies_) {
    if (cp.bits == 0) continue;
    dram.push_back({cp.alloc, cp.bits});
    if (cp.free != kNever) dram.push_back({std::max(cp.free, cp.alloc), -cp.bits});
  }
  for (const auto& [time, bits] : dram_releases_) dram.push_back({time, -bits});
  std::int64_t peak_step = 0;
  std::array<std::int64_t, kMemoryUses> peak_uses{};  // not kept: off-chip uses are not told apart
  result_.offchip_memory = timeline(dram, false, s.peak_offchip_bits, peak_step, peak_uses);
  check_capacities();
}

/// Every memory's peak against its capacity: the relative excesses add up to the constraint violation.
void Scheduler::check_capacities() {
  ScheduleSummary& s = result_.summary;
  auto over = [&](std::int64_t peak, std::int64_t capacity, const std::string& what) {
    if (peak <= capacity) return;
    s.capacity_violation += static_cast<double>(peak - capacity) / static_cast<double>(std::max<std::int64_t>(capacity, 1));
    if (!s.capacity_reason.empty()) s.capacity_reason += "; ";
    s.capacity_reason += what + " holds " + si_bytes(peak) + " at its peak but has " + si_bytes(capacity);
  };
  for (std::size_t c = 0; c < acc_.cores.size(); ++c) {
    over(s.peak_memory_bits[c], capacity_[c], "core '" + acc_.cores[c].name + "'");
    if (s.peak_memory_bits[c] > capacity_[c]) s.over_capacity = true;
  }
  over(s.peak_offchip_bits, acc_.offchip.size_bits, "off-chip memory '" + acc_.offchip.name + "'");
  s.offchip_over_capacity = s.peak_offchip_bits > acc_.offchip.size_bits;
}

}  // namespace detail
}  // namespace monet
