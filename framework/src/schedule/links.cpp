// How data moves between cores and off-chip memory: bandwidth reserved on links and ports, transfers routed
// over the widest link (or via off-chip memory) and recorded with their energy, and the records of streamed operands.
#include <algorithm>
#include <cmath>

#include "scheduler.hpp"

namespace monet {

std::string to_string(TransferCause c) {
  switch (c) {
    case TransferCause::input: return "input";
    case TransferCause::fetch: return "fetch";
    case TransferCause::writeback: return "writeback";
    case TransferCause::spill: return "spill";
    case TransferCause::refetch: return "refetch";
    case TransferCause::stream: return "stream";
    case TransferCause::offload: return "offload";
    case TransferCause::prefetch: return "prefetch";
  }
  return "?";
}

namespace detail {

/// Where data of a slot resident on a core lives: its highest on-chip memory.
const MemoryLevel& Scheduler::resident_level(int c, OperandSlot slot) const {
  const Core& k = core(c);
  const int top = k.top_onchip_index(slot);
  return top >= 0 ? k.memories[static_cast<std::size_t>(top)] : k.top_level(slot);
}

double Scheduler::write_energy_per_bit(int endpoint, OperandSlot slot) const {
  if (endpoint == Accelerator::kOffChip) return acc_.offchip.write_energy_pj_per_bit;
  return resident_level(endpoint, slot).write_energy_per_bit();
}

double Scheduler::read_energy_per_bit(int endpoint, OperandSlot slot) const {
  if (endpoint == Accelerator::kOffChip) return acc_.offchip.read_energy_pj_per_bit;
  return resident_level(endpoint, slot).read_energy_per_bit();
}

/// Reserves `bw` on link `li` (and on the off-chip ports when the path ends off chip) for `duration` cycles in
/// the earliest window from `earliest` where both have room. Returns the window's start.
std::int64_t Scheduler::reserve(std::size_t li, bool offchip, std::int64_t earliest, std::int64_t duration, double bw) {
  std::int64_t start = earliest;
  while (true) {
    const std::int64_t on_link = links_[li].fit(start, duration, bw);
    const std::int64_t on_port = offchip ? port_.fit(on_link, duration, bw) : on_link;
    if (on_port == on_link) {
      start = on_link;
      break;
    }
    start = on_port;
  }
  links_[li].add(start, start + duration, bw);
  if (offchip) port_.add(start, start + duration, bw);
  return start;
}

/// Moves `bits` between two endpoints no earlier than `earliest` over the widest link (or via off-chip memory
/// when there is none); `share` divides the link bandwidth (parallel siblings). Reserves the resources and
/// records the transfer. Returns its end.
std::int64_t Scheduler::move(int from, int to, std::int64_t bits, OperandSlot slot, std::int64_t earliest, int cn,
                             TensorId tensor, TransferCause cause, int share) {
  if (bits <= 0 || from == to) return earliest;
  const Link* link = link_between(from, to);
  if (!link) {
    const std::int64_t t = move(from, Accelerator::kOffChip, bits, OperandSlot::O, earliest, cn, tensor, cause, share);
    return move(Accelerator::kOffChip, to, bits, slot, t, cn, tensor, cause, share);
  }
  const auto li = static_cast<std::size_t>(link - acc_.links.data());
  const bool offchip = from == Accelerator::kOffChip || to == Accelerator::kOffChip;
  double bw = link->bandwidth_bits_per_cycle / std::max(1, share);
  if (offchip) bw = std::min(bw, acc_.offchip.bandwidth_bits_per_cycle);
  const auto duration = static_cast<std::int64_t>(std::ceil(static_cast<double>(bits) / bw));
  const std::int64_t start = reserve(li, offchip, earliest, duration, bw);
  const std::int64_t end = start + duration;

  const auto b = static_cast<double>(bits);
  const double link_e = b * link->energy_pj_per_bit;
  const double read_e = b * read_energy_per_bit(from, OperandSlot::O);
  const double write_e = b * write_energy_per_bit(to, slot);
  const Transfer t{.tensor = tensor, .from = from, .to = to, .link = static_cast<int>(li), .cn = cn, .start = start,
                   .end = end, .bits = bits, .bandwidth = bw, .cause = cause, .read_energy_pj = read_e,
                   .link_energy_pj = link_e, .write_energy_pj = write_e, .energy_pj = read_e + link_e + write_e};
  EnergyBreakdown& e = result_.summary.energy;
  if (cause == TransferCause::spill || cause == TransferCause::refetch) {
    e.spill_pj += t.energy_pj;
  } else {
    e.link_pj += link_e;
    (from == Accelerator::kOffChip ? e.offchip_pj : e.onchip_memory_pj) += read_e;
    (to == Accelerator::kOffChip ? e.offchip_pj : e.onchip_memory_pj) += write_e;
  }
  if (from == Accelerator::kOffChip) result_.summary.offchip_read_bits += bits;
  if (to == Accelerator::kOffChip) result_.summary.offchip_write_bits += bits;
  if (cause == TransferCause::spill) result_.summary.spilled_bits += bits;
  result_.transfers.push_back(t);
  return end;
}

/// The `stream` records of a CN that streams operands while it runs on core c from `start`: one per streamed
/// operand and direction (reads dram → core, writes core → dram), sharing the bandwidth held on the link in
/// proportion to their bits.
void Scheduler::record_streams(const ComputationNode& cn, int c, const Cost& cost, int link, std::int64_t start,
                               double bandwidth) {
  const std::int64_t total = cost.offchip_read_bits + cost.offchip_write_bits;
  std::int64_t by_slot = 0;
  for (int s = 0; s < kSlotCount; ++s) by_slot += cost.offchip_read_bits_by_slot[s] + cost.offchip_write_bits_by_slot[s];
  ensure(by_slot == total, "cost model of core '" + acc_.cores[static_cast<std::size_t>(c)].name +
                               "' reports off-chip bits without their split per operand slot");
  const double per_bit = acc_.links[static_cast<std::size_t>(link)].energy_pj_per_bit;
  auto record = [&](TensorId tensor, int from, int to, std::int64_t bits) {
    if (bits <= 0) return;
    const double link_e = static_cast<double>(bits) * per_bit;
    result_.summary.energy.link_pj += link_e;
    result_.transfers.push_back(Transfer{.tensor = tensor, .from = from, .to = to, .link = link, .cn = cn.id,
                                         .start = start, .end = start + cost.cycles, .bits = bits,
                                         .bandwidth = bandwidth * static_cast<double>(bits) / static_cast<double>(total),
                                         .cause = TransferCause::stream, .link_energy_pj = link_e, .energy_pj = link_e});
  };
  for (int s = 0; s < kSlotCount; ++s) {
    const TensorId tensor = operand_tensor(cn, static_cast<OperandSlot>(s));
    record(tensor, Accelerator::kOffChip, c, cost.offchip_read_bits_by_slot[s]);
    record(tensor, c, Accelerator::kOffChip, cost.offchip_write_bits_by_slot[s]);
  }
}

/// The tensor of the CN's operator in a memory operand slot (its first operand there).
TensorId Scheduler::operand_tensor(const ComputationNode& cn, OperandSlot slot) const {
  for (const Operand& o : g_.op(cn.op).operands) {
    if (o.slot == slot) return o.tensor;
  }
  return kNone;
}

}  // namespace detail
}  // namespace monet
