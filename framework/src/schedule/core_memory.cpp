// The per-core memory bookkeeping of the scheduler: the items CNs read and their copies on each core, room made
// by spilling, copies freed after their last reader, offloading, and what fits next to the resident data.
#include <algorithm>

#include "scheduler.hpp"

namespace monet::detail {

void Scheduler::init_items() {
  const std::size_t n = cns_.nodes.size();
  // Items: one per CN output, then one per source item.
  items_.resize(n + cns_.source_items.size());
  for (std::size_t i = 0; i < n; ++i) {
    Item& it = items_[i];
    it.bits = cns_.output_bits[i];
    it.role = cns_.output_role[i];
    for (const Operand& o : g_.op(cns_.nodes[i].op).operands) {
      if (o.is_output()) {
        it.tensor = o.tensor;  // named in the records of its write-backs and spills
        break;
      }
    }
    std::vector<int> readers;
    for (int e : cns_.out_edges[i]) {
      const CNEdge& edge = cns_.edges[static_cast<std::size_t>(e)];
      if (!edge.order_only) readers.push_back(edge.dst);
    }
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    it.readers_left = static_cast<int>(readers.size());
    if (in_.offloaded) {
      for (const Operand& o : g_.op(cns_.nodes[i].op).operands) {
        it.offload = it.offload || (o.is_output() && (*in_.offloaded)[static_cast<std::size_t>(o.tensor)]);
      }
      for (int r : readers) it.late_readers += late_phase(g_.op(cns_.nodes[static_cast<std::size_t>(r)].op).phase);
    }
  }
  for (std::size_t s = 0; s < cns_.source_items.size(); ++s) {
    Item& it = items_[n + s];
    const SourceItem& src = cns_.source_items[s];
    it.bits = src.bits;
    it.tensor = src.tensor;
    it.role = g_.tensor(src.tensor).role;
    it.readers_left = src.readers;
    it.source = true;
    it.dram_avail = 0;
  }
}

/// The phases an offloaded activation comes back for.
bool Scheduler::late_phase(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw || p == Phase::recompute; }

void Scheduler::purge(int c) {
  auto& live = live_[static_cast<std::size_t>(c)];
  const std::int64_t f = frontier_[static_cast<std::size_t>(c)];
  live.erase(std::remove_if(live.begin(), live.end(), [&](int k) { return copies_[static_cast<std::size_t>(k)].free <= f; }),
             live.end());
}

/// Makes room for `bits` on core c at time t by spilling resident data that the current CN does not need.
/// Returns when the room is there (write-backs of spilled data may take time).
std::int64_t Scheduler::make_room(int c, std::int64_t bits, std::int64_t t, const std::vector<int>& pinned, int share) {
  const std::int64_t cap = capacity_[static_cast<std::size_t>(c)];
  if (held_after(c, t) + bits <= cap) return t;
  // Wait for data whose readers are done to leave, if that makes room (as Stream does before evicting).
  {
    std::vector<std::int64_t> frees;
    for (int k : live_[static_cast<std::size_t>(c)]) {
      const Copy& cp = copies_[static_cast<std::size_t>(k)];
      if (cp.free != kNever && cp.free > t) frees.push_back(cp.free);
    }
    std::sort(frees.begin(), frees.end());
    for (std::int64_t f : frees) {
      if (held_after(c, f) + bits <= cap) return f;
    }
  }
  std::vector<int> victims;
  for (int k : live_[static_cast<std::size_t>(c)]) {
    const Copy& cp = copies_[static_cast<std::size_t>(k)];
    if (cp.free != kNever || std::find(pinned.begin(), pinned.end(), cp.item) != pinned.end()) continue;
    victims.push_back(k);
  }
  std::stable_sort(victims.begin(), victims.end(), [&](int a, int b) {
    const Copy& x = copies_[static_cast<std::size_t>(a)];
    const Copy& y = copies_[static_cast<std::size_t>(b)];
    const double kx = static_cast<double>(items_[static_cast<std::size_t>(x.item)].readers_left) * static_cast<double>(x.bits);
    const double ky = static_cast<double>(items_[static_cast<std::size_t>(y.item)].readers_left) * static_cast<double>(y.bits);
    return kx < ky;
  });
  std::int64_t ready = t;
  for (int k : victims) {
    if (held_after(c, t) + bits <= cap) break;
    Copy& cp = copies_[static_cast<std::size_t>(k)];
    Item& item = items_[static_cast<std::size_t>(cp.item)];
    std::int64_t freed = std::max({t, cp.avail, cp.last_use});
    if (item.dram_avail < 0) {
      // Write it back first: it has no other home.
      const std::int64_t end = move(c, Accelerator::kOffChip, cp.bits, OperandSlot::O, std::max(cp.avail, frontier_[static_cast<std::size_t>(c)]),
                                    -1, item.tensor, TransferCause::spill, share);
      item.dram_avail = end;
      item.spilled = true;
      item.dram_copy = dram_copy(cp.item, cp.bits, end - static_cast<std::int64_t>(0), end);
      freed = std::max(freed, end);
    }
    cp.free = freed;
    ready = std::max(ready, freed);
    // A spilled copy leaves the item's list of core copies.
    auto& cs = item.copies;
    cs.erase(std::remove(cs.begin(), cs.end(), k), cs.end());
    t = std::max(t, freed);
  }
  if (held_after(c, ready) + bits > cap) overflow_ = true;  // nothing more to spill: over capacity
  return ready;
}

/// A reader of an item has run: when it was the last, every copy is freed once its last use is over.
void Scheduler::consumed(int item_id) {
  Item& item = items_[static_cast<std::size_t>(item_id)];
  if (--item.readers_left > 0) {
    offload_if_due(item_id);
    return;
  }
  for (int k : item.copies) {
    Copy& cp = copies_[static_cast<std::size_t>(k)];
    cp.free = std::max(cp.avail, cp.last_use);
  }
  if (!item.source && item.dram_copy >= 0 && !sink_[static_cast<std::size_t>(item_id)]) {
    Copy& d = dram_copies_[static_cast<std::size_t>(item.dram_copy)];
    d.free = std::max(d.avail, d.last_use);
  }
}

/// Offloading: once only backward readers are left, an offloaded item is written to off-chip memory (unless a
/// copy is there already, e.g. spilled) after its last use so far, and every core copy is freed when that is
/// done; its backward readers fetch it back (`prefetch`).
void Scheduler::offload_if_due(int item_id) {
  Item& item = items_[static_cast<std::size_t>(item_id)];
  if (!item.offload || item.offloaded || item.readers_left == 0 || item.readers_left != item.late_readers) return;
  if (item.copies.empty() && item.dram_avail < 0) return;  // not produced yet (a view's data, nothing held)
  item.offloaded = true;
  result_.summary.offloaded_bits += item.bits;
  if (item.dram_avail < 0) {
    int from = -1;  // the fullest copy: the producer's (a reader's may hold only the region it read)
    for (int k : item.copies) {
      if (from < 0 || copies_[static_cast<std::size_t>(k)].bits > copies_[static_cast<std::size_t>(from)].bits) from = k;
    }
    const Copy& cp = copies_[static_cast<std::size_t>(from)];
    const std::int64_t earliest = std::max(cp.avail, cp.last_use);
    const std::int64_t end =
        move(cp.core, Accelerator::kOffChip, cp.bits, OperandSlot::O, earliest, -1, item.tensor, TransferCause::offload, 1);
    item.dram_avail = end;
    item.dram_copy = dram_copy(item_id, cp.bits, end > earliest ? result_.transfers.back().start : end, end);
    copies_[static_cast<std::size_t>(from)].last_use = std::max(cp.last_use, end);
  }
  for (int k : item.copies) {
    Copy& cp = copies_[static_cast<std::size_t>(k)];
    cp.free = std::max(cp.avail, cp.last_use);
  }
  item.copies.clear();
}

/// Which operands stream from off-chip memory while the CN runs on core c: the fusion strategy's choice, or,
/// largest first, what does not fit next to the rest (inputs already on the core count as they are held).
StreamedOperands Scheduler::streamed_operands(const ComputationNode& cn, int c, const std::vector<Need>& needs) const {
  StreamedOperands streamed;
  if (cn.streamed) {
    for (const Operand& o : g_.op(cn.op).operands) streamed.slot[static_cast<int>(o.slot)] = true;
    return streamed;
  }
  // A slot whose top memory on this core is the off-chip memory (ZigZag-style cores) always streams.
  for (int s = 0; s < 3; ++s) streamed.slot[s] = core(c).lives_offchip(static_cast<OperandSlot>(s));
  std::int64_t per_slot[3] = {0, 0, 0};
  for (const Need& nd : needs) {
    const int local = copy_on(nd.item, c);
    per_slot[static_cast<int>(nd.slot)] += local >= 0 ? copies_[static_cast<std::size_t>(local)].bits : nd.bits;
  }
  per_slot[static_cast<int>(OperandSlot::O)] += cns_.output_bits[static_cast<std::size_t>(cn.id)];
  for (int s = 0; s < 3; ++s) {
    if (streamed.slot[s]) per_slot[s] = 0;
  }
  std::int64_t total = per_slot[0] + per_slot[1] + per_slot[2];
  const std::int64_t cap = capacity_[static_cast<std::size_t>(c)];
  auto stream_largest = [&] {
    int largest = 0;
    for (int s = 1; s < 3; ++s) {
      if (per_slot[s] > per_slot[largest]) largest = s;
    }
    if (per_slot[largest] == 0) return false;
    streamed.slot[largest] = true;
    total -= per_slot[largest];
    per_slot[largest] = 0;
    return true;
  };
  while (total > cap && stream_largest()) {
  }
  if (!streamed.any()) return streamed;
  // Streamed operands still pass through the core's lower memories: leave them the room of their innermost
  // memory (all its instances), as Stream does, else stream more.
  const Core& k = core(c);
  auto room = [&] {
    std::int64_t need = 0;
    for (int s = 0; s < 3; ++s) {
      if (!streamed.slot[s]) continue;
      const auto levels = k.levels_of(static_cast<OperandSlot>(s));
      if (levels.empty()) continue;
      const MemoryLevel& m = k.memories[static_cast<std::size_t>(levels.front())];
      if (m.offchip) continue;
      need += m.size_bits * k.memory_instances(m);
    }
    return need;
  };
  while (total > 0 && cap - total < room() && stream_largest()) {
  }
  return streamed;
}

/// Bits of resident copies on core c that could be spilled to make room (not needed by the current CN).
std::int64_t Scheduler::spillable_bits(int c, const std::vector<int>& pinned) const {
  std::int64_t bits = 0;
  for (int k : live_[static_cast<std::size_t>(c)]) {
    const Copy& cp = copies_[static_cast<std::size_t>(k)];
    if (cp.free == kNever && std::find(pinned.begin(), pinned.end(), cp.item) == pinned.end()) bits += cp.bits;
  }
  return bits;
}

/// On-chip bits the streamed operands of a CN occupy while it runs: the cost model's staging (Cost::onchip_bits),
/// else the operand's tile up to the size of its highest on-chip memory. Slots with no on-chip memory take none.
std::int64_t Scheduler::staged_bits(const ComputationNode& cn, int c, const StreamedOperands& mask, const Cost& cost,
                                    const std::vector<Need>& needs) const {
  const Core& k = core(c);
  std::int64_t tile[3] = {0, 0, cns_.output_bits[static_cast<std::size_t>(cn.id)]};
  for (const Need& nd : needs) {
    if (nd.slot != OperandSlot::O) tile[static_cast<int>(nd.slot)] += nd.bits;
  }
  std::int64_t total = 0;
  for (int s = 0; s < 3; ++s) {
    if (!mask.slot[s]) continue;
    const int top = k.top_onchip_index(static_cast<OperandSlot>(s));
    if (top < 0) continue;
    if (cost.onchip_bits[s] >= 0) {
      total += cost.onchip_bits[s];
    } else {
      const MemoryLevel& m = k.memories[static_cast<std::size_t>(top)];
      total += std::min(tile[s], (m.size_bits >> mask.onchip_shift) * k.memory_instances(m));
    }
  }
  return std::min(total, capacity_[static_cast<std::size_t>(c)]);
}

}  // namespace monet::detail
