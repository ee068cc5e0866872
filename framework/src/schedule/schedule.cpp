#include "monet/schedule/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

#include "monet/util/strings.hpp"

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

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max() / 4;
constexpr int kStaging = -1;  // Copy::item of the tiles of streamed operands in flight on a core

/// Bandwidth in use on a shared resource (a link, the off-chip ports) over time, piecewise constant. A new
/// activity takes the earliest window of its length where its bandwidth fits next to what is already there.
class BandwidthTimeline {
 public:
  explicit BandwidthTimeline(double capacity = 0) : capacity_(capacity) { level_[0] = 0; }

  [[nodiscard]] double capacity() const { return capacity_; }

  /// Earliest start >= t of [start, start + d) where `bw` more fits everywhere.
  [[nodiscard]] std::int64_t fit(std::int64_t t, std::int64_t d, double bw) const {
    if (d <= 0) return t;
    const double limit = capacity_ + 1e-9;
    while (true) {
      auto it = std::prev(level_.upper_bound(t));
      bool ok = true;
      for (; it != level_.end() && it->first < t + d; ++it) {
        if (it->second + bw > limit) {
          auto next = std::next(it);
          t = next == level_.end() ? kNever : next->first;
          ok = false;
          break;
        }
      }
      if (ok) return t;
      if (t >= kNever) return t;
    }
  }

  void add(std::int64_t s, std::int64_t e, double bw) {
    if (e <= s || bw == 0) return;
    split(s);
    split(e);
    for (auto it = level_.find(s); it != level_.end() && it->first < e; ++it) it->second += bw;
  }

 private:
  void split(std::int64_t t) {
    auto it = std::prev(level_.upper_bound(t));
    if (it->first != t) level_.emplace_hint(std::next(it), t, it->second);
  }
  double capacity_;
  std::map<std::int64_t, double> level_;  // time -> bandwidth in use from then on
};

/// A copy of a data item held in a core's memory (or off chip).
struct Copy {
  int item = 0;
  int core = 0;
  std::int64_t bits = 0;
  std::int64_t alloc = 0;   // space taken from
  std::int64_t avail = 0;   // data present from
  std::int64_t last_use = 0;
  std::int64_t free = kNever;
};

/// Data a CN reads: the output tile of another CN or a region of a source tensor.
struct Item {
  std::int64_t bits = 0;
  int readers_left = 0;
  TensorId tensor = kNone;
  TensorRole role = TensorRole::activation;
  bool source = false;          // lives in off-chip memory from the start, forever
  std::int64_t dram_avail = -1;  // time a copy in off-chip memory is complete (-1: none)
  int dram_copy = -1;            // index into dram copies (non-source items)
  std::vector<int> copies;       // core copies (indices into copies_)
  bool spilled = false;          // its off-chip copy was made to free a core
  bool offload = false;          // a saved activation to offload (ScheduleInputs::offloaded)
  int late_readers = 0;          // readers in the backward pass (backward, recompute): what it is offloaded for
  bool offloaded = false;        // written off chip and freed on chip after its other readers
};

class Scheduler {
 public:
  explicit Scheduler(const ScheduleInputs& in) : in_(in), g_(in.graph), cns_(in.cns), acc_(in.accelerator) {
    for (const Link& l : acc_.links) links_.emplace_back(l.bandwidth_bits_per_cycle);
    link_table_ = acc_.link_table();
    port_ = BandwidthTimeline(acc_.offchip.total_bandwidth());
    const std::size_t n = cns_.nodes.size();
    const std::size_t cores = acc_.cores.size();
    core_free_.assign(cores, 0);
    frontier_.assign(cores, 0);
    live_.assign(cores, {});
    capacity_.assign(cores, 0);
    for (std::size_t c = 0; c < cores; ++c) capacity_[c] = acc_.cores[c].core->resident_capacity_bits();
    result_.nodes.resize(n);
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

  ScheduleResult run() {
    const std::size_t n = cns_.nodes.size();
    std::vector<int> waiting(n, 0);
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i) {
      waiting[i] = static_cast<int>(cns_.in_edges[i].size());
      if (waiting[i] == 0) ready.push(static_cast<int>(i));
    }
    std::vector<bool> done(n, false);
    const std::vector<bool> barrier = in_.options.layer_barrier ? barriers() : std::vector<bool>(n, false);
    while (!ready.empty()) {
      const int v = ready.top();
      ready.pop();
      if (done[static_cast<std::size_t>(v)]) continue;
      done[static_cast<std::size_t>(v)] = true;
      if (barrier[static_cast<std::size_t>(v)]) {
        const std::int64_t all = *std::max_element(core_free_.begin(), core_free_.end());
        std::fill(core_free_.begin(), core_free_.end(), all);
      }
      place(cns_.nodes[static_cast<std::size_t>(v)]);
      for (int e : cns_.out_edges[static_cast<std::size_t>(v)]) {
        const auto d = static_cast<std::size_t>(cns_.edges[static_cast<std::size_t>(e)].dst);
        if (--waiting[d] == 0) ready.push(static_cast<int>(d));
      }
    }
    finish();
    return std::move(result_);
  }

 private:
  /// CNs that synchronise all cores: the first CN of an operator (in priority order) when every CN of the
  /// operators it reads from comes before it.
  [[nodiscard]] std::vector<bool> barriers() const {
    const std::size_t n = cns_.nodes.size();
    const std::size_t ops = g_.operators().size();
    std::vector<int> first(ops, -1), last(ops, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto o = static_cast<std::size_t>(cns_.nodes[i].op);
      if (first[o] < 0) first[o] = static_cast<int>(i);
      last[o] = static_cast<int>(i);
    }
    std::vector<int> latest_pred(ops, -1);
    for (const CNEdge& e : cns_.edges) {
      const auto src_op = static_cast<std::size_t>(cns_.nodes[static_cast<std::size_t>(e.src)].op);
      const auto dst_op = static_cast<std::size_t>(cns_.nodes[static_cast<std::size_t>(e.dst)].op);
      if (src_op != dst_op) latest_pred[dst_op] = std::max(latest_pred[dst_op], last[src_op]);
    }
    std::vector<bool> out(n, false);
    for (std::size_t o = 0; o < ops; ++o) {
      if (first[o] >= 0 && latest_pred[o] >= 0 && latest_pred[o] < first[o] && !g_.op(static_cast<OperatorId>(o)).is_view()) {
        out[static_cast<std::size_t>(first[o])] = true;
      }
    }
    return out;
  }

  // --------------------------------------------------------------------------------------- helpers
  /// The phases an offloaded activation comes back for.
  static bool late_phase(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw || p == Phase::recompute; }

  [[nodiscard]] const Link* link_between(int a, int b) const { return link_table_[acc_.link_table_index(a, b)]; }
  [[nodiscard]] const Core& core(int id) const { return *acc_.cores[static_cast<std::size_t>(id)].core; }

  /// Where data of a slot resident on a core lives: its highest on-chip memory.
  [[nodiscard]] const MemoryLevel& resident_level(int c, OperandSlot slot) const {
    const Core& k = core(c);
    const int top = k.top_onchip_index(slot);
    return top >= 0 ? k.memories[static_cast<std::size_t>(top)] : k.top_level(slot);
  }
  [[nodiscard]] double write_energy_per_bit(int endpoint, OperandSlot slot) const {
    if (endpoint == Accelerator::kOffChip) return acc_.offchip.write_energy_pj_per_bit;
    return resident_level(endpoint, slot).write_energy_per_bit();
  }
  [[nodiscard]] double read_energy_per_bit(int endpoint, OperandSlot slot) const {
    if (endpoint == Accelerator::kOffChip) return acc_.offchip.read_energy_pj_per_bit;
    return resident_level(endpoint, slot).read_energy_per_bit();
  }

  /// Reserves `bw` on link `li` (and on the off-chip ports when the path ends off chip) for `duration` cycles in
  /// the earliest window from `earliest` where both have room. Returns the window's start.
  std::int64_t reserve(std::size_t li, bool offchip, std::int64_t earliest, std::int64_t duration, double bw) {
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
  std::int64_t move(int from, int to, std::int64_t bits, OperandSlot slot, std::int64_t earliest, int cn, TensorId tensor,
                    TransferCause cause, int share) {
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

  /// Bits held on a core from time t on (copies not yet freed at t).
  [[nodiscard]] std::int64_t held_after(int c, std::int64_t t) const {
    std::int64_t bits = 0;
    for (int k : live_[static_cast<std::size_t>(c)]) {
      const Copy& cp = copies_[static_cast<std::size_t>(k)];
      if (cp.free > t) bits += cp.bits;
    }
    return bits;
  }

  void purge(int c) {
    auto& live = live_[static_cast<std::size_t>(c)];
    const std::int64_t f = frontier_[static_cast<std::size_t>(c)];
    live.erase(std::remove_if(live.begin(), live.end(), [&](int k) { return copies_[static_cast<std::size_t>(k)].free <= f; }),
               live.end());
  }

  /// Makes room for `bits` on core c at time t by spilling resident data that the current CN does not need.
  /// Returns when the room is there (write-backs of spilled data may take time).
  std::int64_t make_room(int c, std::int64_t bits, std::int64_t t, const std::vector<int>& pinned, int share) {
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

  /// Data of `item` held on `core` (or off chip): space taken from `alloc`, data there from `avail`.
  static Copy make_copy(int item, int core, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    Copy cp;
    cp.item = item;
    cp.core = core;
    cp.bits = bits;
    cp.alloc = alloc;
    cp.avail = avail;
    cp.last_use = avail;
    return cp;
  }

  int new_copy(int item, int c, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    const int k = static_cast<int>(copies_.size());
    copies_.push_back(make_copy(item, c, bits, alloc, avail));
    live_[static_cast<std::size_t>(c)].push_back(k);
    items_[static_cast<std::size_t>(item)].copies.push_back(k);
    return k;
  }

  int dram_copy(int item, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    dram_copies_.push_back(make_copy(item, Accelerator::kOffChip, bits, alloc, avail));
    return static_cast<int>(dram_copies_.size()) - 1;
  }

  [[nodiscard]] int copy_on(int item, int c) const {
    for (int k : items_[static_cast<std::size_t>(item)].copies) {
      if (copies_[static_cast<std::size_t>(k)].core == c) return k;
    }
    return -1;
  }

  /// A reader of an item has run: when it was the last, every copy is freed once its last use is over.
  void consumed(int item_id) {
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
  void offload_if_due(int item_id) {
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

  // ------------------------------------------------------------------------------------ placement
  int choose_core(const ComputationNode& cn) {
    const Operator& op = g_.op(cn.op);
    if (in_.cn_core && (*in_.cn_core)[static_cast<std::size_t>(cn.id)] >= 0) return (*in_.cn_core)[static_cast<std::size_t>(cn.id)];
    const int fixed = in_.fixed_core[static_cast<std::size_t>(op.id)];
    if (fixed >= 0) return fixed;
    const auto& allowed = in_.allowed_cores[static_cast<std::size_t>(op.id)];
    ensure(!allowed.empty(), "operator '" + op.name + "' has no core to run on");
    if (const int c = group_core(cn, allowed); c >= 0) return c;
    if (allowed.size() == 1) return allowed.front();
    // Where it would finish first: the core's free time, its inputs' arrival (bits over the widest link) and
    // its own runtime there.
    int best = allowed.front();
    std::int64_t best_end = kNever;
    for (int c : allowed) {
      std::int64_t ready = core_free_[static_cast<std::size_t>(c)];
      for (int e : cns_.in_edges[static_cast<std::size_t>(cn.id)]) {
        const CNEdge& edge = cns_.edges[static_cast<std::size_t>(e)];
        const ScheduledNode& src = result_.nodes[static_cast<std::size_t>(edge.src)];
        std::int64_t arrive = src.end;
        if (src.core != c) {
          const Link* l = link_between(src.core, c);
          const double bw = l ? l->bandwidth_bits_per_cycle : acc_.offchip.bandwidth_bits_per_cycle / 2;
          arrive += static_cast<std::int64_t>(std::ceil(static_cast<double>(edge.bits) / bw));
        }
        ready = std::max(ready, arrive);
      }
      StreamedOperands mask;
      std::int64_t cycles = 0;
      try {
        cycles = cost_or_all_streamed(cn, c, mask).cycles;
      } catch (const UserError&) {
        if (c == allowed.back() && best_end == kNever) throw;  // fits no allowed core
        continue;
      }
      const std::int64_t end = ready + cycles;
      if (end < best_end) {
        best_end = end;
        best = c;
      }
    }
    return best;
  }

  /// A view moves nothing and takes no memory (its readers read through it): it is shown where and when the
  /// last of the data it aliases was produced (its in-edges carry no data), or off chip for a view of stored data.
  /// The cost model's answer for these streamed operands; when no mapping keeps them on chip, every operand
  /// streams (the core's memories then only stage tiles) and `mask` says so.
  Cost cost_or_all_streamed(const ComputationNode& cn, int c, StreamedOperands& mask) const {
    try {
      return in_.cost(cn, c, mask);
    } catch (const UserError&) {
      if (mask.mask() == 7 || cn.streamed) throw;
      for (const Operand& o : g_.op(cn.op).operands) mask.slot[static_cast<int>(o.slot)] = true;
      return in_.cost(cn, c, mask);
    }
  }

  void place_view(const ComputationNode& cn) {
    const auto i = static_cast<std::size_t>(cn.id);
    std::int64_t t = 0;
    int where = Accelerator::kOffChip;
    for (int e : cns_.in_edges[i]) {
      const ScheduledNode& src = result_.nodes[static_cast<std::size_t>(cns_.edges[static_cast<std::size_t>(e)].src)];
      if (src.end >= t) {
        t = src.end;
        where = src.core;
      }
    }
    result_.nodes[i] = ScheduledNode{cn.id, where, t, t, Cost{}, StreamedOperands{}};
  }

  /// Data a CN reads before it runs: an item (another CN's output or a source region) and the bits it needs.
  struct Need {
    int item;
    std::int64_t bits;
    OperandSlot slot;
    TensorId tensor;
    bool source;
  };

  /// Which operands stream from off-chip memory while the CN runs on core c: the fusion strategy's choice, or,
  /// largest first, what does not fit next to the rest (inputs already on the core count as they are held).
  [[nodiscard]] StreamedOperands streamed_operands(const ComputationNode& cn, int c, const std::vector<Need>& needs) const {
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
  [[nodiscard]] std::int64_t spillable_bits(int c, const std::vector<int>& pinned) const {
    std::int64_t bits = 0;
    for (int k : live_[static_cast<std::size_t>(c)]) {
      const Copy& cp = copies_[static_cast<std::size_t>(k)];
      if (cp.free == kNever && std::find(pinned.begin(), pinned.end(), cp.item) == pinned.end()) bits += cp.bits;
    }
    return bits;
  }

  /// On-chip bits the streamed operands of a CN occupy while it runs: the cost model's staging (Cost::onchip_bits),
  /// else the operand's tile up to the size of its highest on-chip memory. Slots with no on-chip memory take none.
  [[nodiscard]] std::int64_t staged_bits(const ComputationNode& cn, int c, const StreamedOperands& mask, const Cost& cost,
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

  void place(const ComputationNode& cn) {
    const Operator& op = g_.op(cn.op);
    if (op.is_view()) return place_view(cn);
    const auto i = static_cast<std::size_t>(cn.id);
    const int c = choose_core(cn);
    const auto cu = static_cast<std::size_t>(c);
    purge(c);
    const int share = std::max(1, cn.groups);
    const int n = static_cast<int>(cns_.nodes.size());

    std::vector<Need> needs;
    std::int64_t after = 0;  // end of the CNs it must follow without reading their data
    for (int e : cns_.in_edges[i]) {
      const CNEdge& edge = cns_.edges[static_cast<std::size_t>(e)];
      if (edge.order_only) {
        after = std::max(after, result_.nodes[static_cast<std::size_t>(edge.src)].end);
        continue;
      }
      const OperandSlot slot = edge.slot;
      auto same = std::find_if(needs.begin(), needs.end(), [&](const Need& x) { return x.item == edge.src; });
      if (in_.options.whole_tile_transfers) {
        if (same == needs.end()) {
          needs.push_back(Need{edge.src, cns_.output_bits[static_cast<std::size_t>(edge.src)], slot, edge.tensor, false});
        }
      } else if (same != needs.end()) {
        same->bits += edge.bits;
      } else {
        needs.push_back(Need{edge.src, edge.bits, slot, edge.tensor, false});
      }
    }
    for (const SourceRead& r : cns_.source_reads[i]) needs.push_back(Need{n + r.item, r.bits, r.slot, r.tensor, true});

    const StreamedOperands streamed = streamed_operands(cn, c, needs);

    std::vector<int> pinned;
    for (const Need& nd : needs) pinned.push_back(nd.item);
    pinned.push_back(static_cast<int>(i));
    std::int64_t ready = std::max(core_free_[cu], after);
    std::int64_t paged_in = 0;  // end of the fetches of offloaded data (offload_stall_cycles)
    const std::int64_t prefetch = frontier_[cu];  // transfers may overlap the core's previous CN

    for (const Need& nd : needs) {
      Item& item = items_[static_cast<std::size_t>(nd.item)];
      if (streamed.slot[static_cast<int>(nd.slot)]) {
        // Read during the CN from off-chip memory: it must be there first.
        if (item.dram_avail < 0) {
          int from = Accelerator::kOffChip;
          std::int64_t avail = 0;
          for (int k : item.copies) {
            const Copy& cp = copies_[static_cast<std::size_t>(k)];
            if (cp.bits > 0) {
              from = cp.core;
              avail = cp.avail;
              break;
            }
          }
          if (from != Accelerator::kOffChip) {
            const std::int64_t end = move(from, Accelerator::kOffChip, item.bits, OperandSlot::O, avail, cn.id, item.tensor,
                                          TransferCause::writeback, share);
            item.dram_avail = end;
            item.dram_copy = dram_copy(nd.item, item.bits, avail, end);
          } else {
            item.dram_avail = avail;
          }
        }
        ready = std::max(ready, item.dram_avail);
        continue;
      }
      const int local = copy_on(nd.item, c);
      if (local >= 0) {
        ready = std::max(ready, copies_[static_cast<std::size_t>(local)].avail);
        continue;
      }
      // Bring it here: from the core that has had it longest, else from off-chip memory.
      int from = Accelerator::kOffChip;
      std::int64_t avail = item.dram_avail;
      static const std::vector<int> kNoCopies;
      const bool offchip_only = nd.source && in_.options.sources_from_offchip && avail >= 0;
      for (int k : offchip_only ? kNoCopies : item.copies) {  // a reference either way: no copy per need
        const Copy& cp = copies_[static_cast<std::size_t>(k)];
        if (cp.core == c) continue;
        if (from == Accelerator::kOffChip || cp.avail < avail) {
          from = cp.core;
          avail = cp.avail;
        }
      }
      ensure(avail >= 0, "data of " + g_.tensor(nd.tensor).name + " is nowhere");
      const TransferCause cause =
          from == Accelerator::kOffChip
              ? (nd.source ? TransferCause::fetch
                           : (item.offloaded ? TransferCause::prefetch
                                             : (item.spilled ? TransferCause::refetch : TransferCause::input)))
              : TransferCause::input;
      std::int64_t earliest = std::max(avail, prefetch);
      earliest = make_room(c, nd.bits, earliest, pinned, share);
      const std::int64_t end = move(from, c, nd.bits, nd.slot, earliest, cn.id, nd.tensor, cause, share);
      if (from >= 0) {
        Copy& src = copies_[static_cast<std::size_t>(copy_on(nd.item, from))];
        src.last_use = std::max(src.last_use, end);
      } else if (item.dram_copy >= 0) {
        Copy& d = dram_copies_[static_cast<std::size_t>(item.dram_copy)];
        d.last_use = std::max(d.last_use, end);
      }
      // The copy takes space from the transfer's start (approximated by `earliest`) until its readers are done.
      new_copy(nd.item, c, nd.bits, earliest, end);
      if (cause == TransferCause::prefetch) {
        paged_in = std::max(paged_in, end);
      } else {
        ready = std::max(ready, end);
      }
    }
    result_.summary.offload_stall_cycles += std::max<std::int64_t>(0, paged_in - ready);
    ready = std::max(ready, paged_in);

    StreamedOperands mask = streamed;
    Cost cost = cost_or_all_streamed(cn, c, mask);
    std::int64_t start = ready;
    if (!mask.slot[static_cast<int>(OperandSlot::O)] && cns_.output_bits[i] > 0) {
      start = make_room(c, cns_.output_bits[i], start, pinned, share);
    }
    std::int64_t staged = staged_bits(cn, c, mask, cost, needs);
    if (staged > 0) {
      // The tiles in flight must fit next to the data resident on the core: when they do not, the mapping
      // gets a smaller share of the memory (more off-chip traffic), halving it until it fits.
      const std::int64_t room = capacity_[cu] - held_after(c, start) + spillable_bits(c, pinned);
      for (int shift = 1; staged > room && shift <= StreamedOperands::kMaxShift; ++shift) {
        StreamedOperands smaller = mask;
        smaller.onchip_shift = shift;
        try {
          const Cost c2 = in_.cost(cn, c, smaller);
          const std::int64_t s2 = staged_bits(cn, c, smaller, c2, needs);
          cost = c2;
          mask = smaller;
          staged = s2;
        } catch (const UserError&) {
          break;  // no mapping fits a smaller share: keep the last one (over capacity if it does not fit)
        }
      }
      start = make_room(c, staged, start, pinned, share);
    }
    // Streaming CNs hold their average off-chip bandwidth on the path to off-chip memory for their whole run.
    const std::int64_t stream_bits = cost.offchip_read_bits + cost.offchip_write_bits;
    const Link* off_link = mask.any() ? link_between(c, Accelerator::kOffChip) : nullptr;
    if (off_link && stream_bits > 0 && cost.cycles > 0) {
      const double average = static_cast<double>(stream_bits) / static_cast<double>(cost.cycles);
      const double wanted = in_.options.peak_offchip_bandwidth && cost.offchip_peak_bandwidth > 0
                                ? cost.offchip_peak_bandwidth
                                : average;
      const double stream_bw = std::min({wanted, off_link->bandwidth_bits_per_cycle, acc_.offchip.total_bandwidth()});
      const auto li = static_cast<std::size_t>(off_link - acc_.links.data());
      start = reserve(li, true, start, cost.cycles, stream_bw);
      record_streams(cn, c, cost, static_cast<int>(li), start, stream_bw);
    }
    const std::int64_t end = start + cost.cycles;
    result_.summary.offchip_read_bits += cost.offchip_read_bits;
    result_.summary.offchip_write_bits += cost.offchip_write_bits;
    EnergyBreakdown& energy = result_.summary.energy;
    energy.mac_pj += cost.compute_energy_pj;
    energy.onchip_memory_pj += cost.memory_energy_pj - cost.offchip_energy_pj;
    energy.offchip_pj += cost.offchip_energy_pj;

    core_free_[cu] = end;
    frontier_[cu] = start;
    result_.nodes[i] = ScheduledNode{cn.id, c, start, end, cost, mask};
    if (staged > 0) {
      // Tiles of the streamed operands pass through the core's memories while it runs.
      Copy cp = make_copy(kStaging, c, staged, start, start);
      cp.free = end;
      live_[cu].push_back(static_cast<int>(copies_.size()));
      copies_.push_back(cp);
    }

    // Its output: on this core (from its start), or written to off-chip memory as it is produced.
    Item& out = items_[i];
    if (mask.slot[static_cast<int>(OperandSlot::O)]) {
      out.dram_avail = end;
      out.dram_copy = dram_copy(static_cast<int>(i), cns_.output_bits[i], start, end);
    } else if (cns_.output_bits[i] > 0) {
      new_copy(static_cast<int>(i), c, cns_.output_bits[i], start, end);
    }
    // Inputs read here: their local copies are in use until the end.
    for (const Need& nd : needs) {
      const int k = copy_on(nd.item, c);
      if (k >= 0) copies_[static_cast<std::size_t>(k)].last_use = std::max(copies_[static_cast<std::size_t>(k)].last_use, end);
      consumed(nd.item);
    }
    // Graph outputs go to off-chip memory (an in-place update replaces the tensor it overwrites there).
    if (cns_.sink_bits[i] > 0) {
      sink_[i] = true;
      const TensorId written = output_tensor(cn);
      if (written != kNone && g_.tensor(written).in_place_of != kNone) {
        dram_releases_.emplace_back(end, cns_.sink_bits[i]);
      }
      if (!mask.slot[static_cast<int>(OperandSlot::O)]) {
        const std::int64_t wb = move(c, Accelerator::kOffChip, cns_.sink_bits[i], OperandSlot::O, end, cn.id,
                                     output_tensor(cn), TransferCause::writeback, share);
        out.dram_avail = wb;
        out.dram_copy = dram_copy(static_cast<int>(i), cns_.sink_bits[i], end, wb);
        const int k = copy_on(static_cast<int>(i), c);
        if (k >= 0) copies_[static_cast<std::size_t>(k)].last_use = std::max(copies_[static_cast<std::size_t>(k)].last_use, wb);
      }
    }
    if (out.readers_left == 0) {
      ++out.readers_left;  // release the copies now that the write-back (if any) is recorded
      consumed(static_cast<int>(i));
    }
    offload_if_due(static_cast<int>(i));  // read only by the backward pass: off chip right away
  }

  /// The `stream` records of a CN that streams operands while it runs on core c from `start`: one per streamed
  /// operand and direction (reads dram → core, writes core → dram), sharing the bandwidth held on the link in
  /// proportion to their bits.
  void record_streams(const ComputationNode& cn, int c, const Cost& cost, int link, std::int64_t start, double bandwidth) {
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
  [[nodiscard]] TensorId operand_tensor(const ComputationNode& cn, OperandSlot slot) const {
    for (const Operand& o : g_.op(cn.op).operands) {
      if (o.slot == slot) return o.tensor;
    }
    return kNone;
  }

  [[nodiscard]] TensorId output_tensor(const ComputationNode& cn) const {
    for (const Operand& o : g_.op(cn.op).operands) {
      if (o.is_output() && g_.tensor(o.tensor).consumers.empty()) return o.tensor;
    }
    return kNone;
  }

  // ------------------------------------------------------------------------------------ results
  struct MemoryEvent {
    std::int64_t time = 0;
    std::int64_t delta = 0;  // bits: + allocated, - released
    MemoryUse use = MemoryUse::other;
    bool operator<(const MemoryEvent& o) const { return std::tie(time, delta) < std::tie(o.time, o.delta); }
  };

  /// The timeline of a memory from its allocation events (and, with `with_uses`, the bits of each use at every
  /// step); `peak_uses` gets the bits of each use at the peak either way. At equal times releases come first, so
  /// a step's bits are what the memory holds from then on.
  static MemoryTimeline timeline(std::vector<MemoryEvent>& events, bool with_uses, std::int64_t& peak,
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
  [[nodiscard]] MemoryUse use_of(const Copy& cp) const {
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

  void finish() {
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
  void check_capacities() {
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

  const ScheduleInputs& in_;
  const Graph& g_;
  const CNGraph& cns_;
  const Accelerator& acc_;
  std::vector<BandwidthTimeline> links_;
  std::vector<const Link*> link_table_;  // Accelerator::link_table(): the link between two endpoints, by index
  BandwidthTimeline port_;
  std::vector<std::int64_t> core_free_;
  std::vector<std::int64_t> frontier_;
  std::vector<std::int64_t> capacity_;
  std::vector<std::vector<int>> live_;  // per core: copies not yet purged
  std::vector<Copy> copies_;
  std::vector<Copy> dram_copies_;
  std::vector<Item> items_;
  std::vector<bool> sink_ = std::vector<bool>(cns_.nodes.size(), false);
  bool overflow_ = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> dram_releases_;  // old versions of tensors updated in place
  ScheduleResult result_;
};

}  // namespace

ScheduleResult schedule(const ScheduleInputs& in) { return Scheduler(in).run(); }

}  // namespace monet
