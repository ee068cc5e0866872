// List scheduling: which CN runs next, on which core, and when — place() as its sequence of steps (gather what the
// CN reads, bring it to the core, make room, hold the off-chip bandwidth it streams, store its output).
#include <algorithm>
#include <cmath>
#include <queue>

#include "scheduler.hpp"

namespace monet {
namespace detail {

Scheduler::Scheduler(const ScheduleInputs& in) : in_(in), g_(in.graph), cns_(in.cns), acc_(in.accelerator) {
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
  init_items();
}

ScheduleResult Scheduler::run() {
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

/// CNs that synchronise all cores: the first CN of an operator (in priority order) when every CN of the
/// operators it reads from comes before it.
std::vector<bool> Scheduler::barriers() const {
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

// ------------------------------------------------------------------------------------ placement
int Scheduler::choose_core(const ComputationNode& cn) {
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

/// The cost model's answer for these streamed operands; when no mapping keeps them on chip, every operand
/// streams (the core's memories then only stage tiles) and `mask` says so.
Cost Scheduler::cost_or_all_streamed(const ComputationNode& cn, int c, StreamedOperands& mask) const {
  try {
    return in_.cost(cn, c, mask);
  } catch (const UserError&) {
    if (mask.mask() == 7 || cn.streamed) throw;
    for (const Operand& o : g_.op(cn.op).operands) mask.slot[static_cast<int>(o.slot)] = true;
    return in_.cost(cn, c, mask);
  }
}

/// A view moves nothing and takes no memory (its readers read through it): it is shown where and when the
/// last of the data it aliases was produced (its in-edges carry no data), or off chip for a view of stored data.
void Scheduler::place_view(const ComputationNode& cn) {
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

/// Places one CN: its core, its inputs brought there, room made for it, its run, and its output stored.
void Scheduler::place(const ComputationNode& cn) {
  const Operator& op = g_.op(cn.op);
  if (op.is_view()) return place_view(cn);
  const auto i = static_cast<std::size_t>(cn.id);
  const int c = choose_core(cn);
  const auto cu = static_cast<std::size_t>(c);
  purge(c);
  const int share = std::max(1, cn.groups);

  std::int64_t after = 0;  // end of the CNs it must follow without reading their data
  const std::vector<Need> needs = gather_needs(cn, after);
  const StreamedOperands streamed = streamed_operands(cn, c, needs);
  const std::vector<int> pinned = pinned_items(cn, needs);
  const std::int64_t ready = bring_inputs(cn, c, needs, streamed, pinned, std::max(core_free_[cu], after), share);

  StreamedOperands mask = streamed;
  Cost cost = cost_or_all_streamed(cn, c, mask);
  std::int64_t start = ready;
  if (!mask.slot[static_cast<int>(OperandSlot::O)] && cns_.output_bits[i] > 0) {
    start = make_room(c, cns_.output_bits[i], start, pinned, share);
  }
  const std::int64_t staged = make_room_for_staging(cn, c, needs, pinned, share, start, mask, cost);
  start = hold_stream_bandwidth(cn, c, mask, cost, start);
  const std::int64_t end = start + cost.cycles;
  account_cost(cost);

  core_free_[cu] = end;
  frontier_[cu] = start;
  result_.nodes[i] = ScheduledNode{cn.id, c, start, end, cost, mask};
  if (staged > 0) stage_tiles(c, staged, start, end);
  store_output(cn, c, mask, start, end);
  release_inputs(needs, c, end);
  write_graph_output(cn, c, mask, end, share);
  release_unread_output(cn.id);
  offload_if_due(cn.id);  // read only by the backward pass: off chip right away
}

/// What the CN reads: per producer, the bits of its output it needs (all of it with whole_tile_transfers), then
/// its regions of source tensors. `after` gets the end of the CNs it follows without reading their data.
std::vector<Scheduler::Need> Scheduler::gather_needs(const ComputationNode& cn, std::int64_t& after) const {
  const auto i = static_cast<std::size_t>(cn.id);
  const int n = static_cast<int>(cns_.nodes.size());
  std::vector<Need> needs;
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
  return needs;
}

/// The items making room on the core may not spill: what the CN reads and its own output.
std::vector<int> Scheduler::pinned_items(const ComputationNode& cn, const std::vector<Need>& needs) {
  std::vector<int> pinned;
  for (const Need& nd : needs) pinned.push_back(nd.item);
  pinned.push_back(cn.id);
  return pinned;
}

/// Gets every input where the CN reads it: streamed ones into off-chip memory, the others onto core c. Returns
/// when the CN can start given its inputs (no earlier than `ready`); waits for offloaded data count as stalls.
std::int64_t Scheduler::bring_inputs(const ComputationNode& cn, int c, const std::vector<Need>& needs,
                                     const StreamedOperands& streamed, const std::vector<int>& pinned,
                                     std::int64_t ready, int share) {
  const auto cu = static_cast<std::size_t>(c);
  std::int64_t paged_in = 0;  // end of the fetches of offloaded data (offload_stall_cycles)
  const std::int64_t prefetch = frontier_[cu];  // transfers may overlap the core's previous CN

  for (const Need& nd : needs) {
    if (streamed.slot[static_cast<int>(nd.slot)]) {
      ready = std::max(ready, put_offchip(nd, cn.id, share));
      continue;
    }
    const int local = copy_on(nd.item, c);
    if (local >= 0) {
      ready = std::max(ready, copies_[static_cast<std::size_t>(local)].avail);
      continue;
    }
    const auto [end, cause] = fetch_input(nd, cn.id, c, prefetch, pinned, share);
    if (cause == TransferCause::prefetch) {
      paged_in = std::max(paged_in, end);
    } else {
      ready = std::max(ready, end);
    }
  }
  result_.summary.offload_stall_cycles += std::max<std::int64_t>(0, paged_in - ready);
  return std::max(ready, paged_in);
}

/// A streamed input: read during the CN from off-chip memory, it must be there first. Returns when it is.
std::int64_t Scheduler::put_offchip(const Need& nd, int cn, int share) {
  Item& item = items_[static_cast<std::size_t>(nd.item)];
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
      const std::int64_t end = move(from, Accelerator::kOffChip, item.bits, OperandSlot::O, avail, cn, item.tensor,
                                    TransferCause::writeback, share);
      item.dram_avail = end;
      item.dram_copy = dram_copy(nd.item, item.bits, avail, end);
    } else {
      item.dram_avail = avail;
    }
  }
  return item.dram_avail;
}

/// Brings an input that core c does not hold: from the core that has had it longest, else from off-chip memory,
/// no earlier than `prefetch` and once there is room. Returns the transfer's end and its cause.
std::pair<std::int64_t, TransferCause> Scheduler::fetch_input(const Need& nd, int cn, int c, std::int64_t prefetch,
                                                              const std::vector<int>& pinned, int share) {
  Item& item = items_[static_cast<std::size_t>(nd.item)];
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
  const std::int64_t end = move(from, c, nd.bits, nd.slot, earliest, cn, nd.tensor, cause, share);
  if (from >= 0) {
    Copy& src = copies_[static_cast<std::size_t>(copy_on(nd.item, from))];
    src.last_use = std::max(src.last_use, end);
  } else if (item.dram_copy >= 0) {
    Copy& d = dram_copies_[static_cast<std::size_t>(item.dram_copy)];
    d.last_use = std::max(d.last_use, end);
  }
  // The copy takes space from the transfer's start (approximated by `earliest`) until its readers are done.
  new_copy(nd.item, c, nd.bits, earliest, end);
  return {end, cause};
}

/// The on-chip bits the CN's streamed operands take on core c while it runs (when they do not fit, the mapping
/// gets a smaller share of the memory: `mask` and `cost` change), and room for them: `start` moves to when it is.
std::int64_t Scheduler::make_room_for_staging(const ComputationNode& cn, int c, const std::vector<Need>& needs,
                                              const std::vector<int>& pinned, int share, std::int64_t& start,
                                              StreamedOperands& mask, Cost& cost) {
  const auto cu = static_cast<std::size_t>(c);
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
  return staged;
}

/// Streaming CNs hold their average off-chip bandwidth on the path to off-chip memory for their whole run.
/// Returns the CN's start: the earliest from `start` where that bandwidth is free.
std::int64_t Scheduler::hold_stream_bandwidth(const ComputationNode& cn, int c, const StreamedOperands& mask,
                                              const Cost& cost, std::int64_t start) {
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
  return start;
}

/// The CN's own off-chip traffic and energy, from its cost.
void Scheduler::account_cost(const Cost& cost) {
  result_.summary.offchip_read_bits += cost.offchip_read_bits;
  result_.summary.offchip_write_bits += cost.offchip_write_bits;
  EnergyBreakdown& energy = result_.summary.energy;
  energy.mac_pj += cost.compute_energy_pj;
  energy.onchip_memory_pj += cost.memory_energy_pj - cost.offchip_energy_pj;
  energy.offchip_pj += cost.offchip_energy_pj;
}

/// Tiles of the streamed operands pass through the core's memories while it runs.
void Scheduler::stage_tiles(int c, std::int64_t staged, std::int64_t start, std::int64_t end) {
  const auto cu = static_cast<std::size_t>(c);
  Copy cp = make_copy(kStaging, c, staged, start, start);
  cp.free = end;
  live_[cu].push_back(static_cast<int>(copies_.size()));
  copies_.push_back(cp);
}

/// Its output: on this core (from its start), or written to off-chip memory as it is produced.
void Scheduler::store_output(const ComputationNode& cn, int c, const StreamedOperands& mask, std::int64_t start,
                             std::int64_t end) {
  const auto i = static_cast<std::size_t>(cn.id);
  Item& out = items_[i];
  if (mask.slot[static_cast<int>(OperandSlot::O)]) {
    out.dram_avail = end;
    out.dram_copy = dram_copy(static_cast<int>(i), cns_.output_bits[i], start, end);
  } else if (cns_.output_bits[i] > 0) {
    new_copy(static_cast<int>(i), c, cns_.output_bits[i], start, end);
  }
}

/// Inputs read here: their local copies are in use until the end.
void Scheduler::release_inputs(const std::vector<Need>& needs, int c, std::int64_t end) {
  for (const Need& nd : needs) {
    const int k = copy_on(nd.item, c);
    if (k >= 0) copies_[static_cast<std::size_t>(k)].last_use = std::max(copies_[static_cast<std::size_t>(k)].last_use, end);
    consumed(nd.item);
  }
}

/// Graph outputs go to off-chip memory (an in-place update replaces the tensor it overwrites there).
void Scheduler::write_graph_output(const ComputationNode& cn, int c, const StreamedOperands& mask, std::int64_t end,
                                   int share) {
  const auto i = static_cast<std::size_t>(cn.id);
  if (cns_.sink_bits[i] > 0) {
    Item& out = items_[i];
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
}

/// An output nothing reads: its copies go once the write-back (if any) is recorded.
void Scheduler::release_unread_output(int item_id) {
  Item& out = items_[static_cast<std::size_t>(item_id)];
  if (out.readers_left == 0) {
    ++out.readers_left;  // release the copies now that the write-back (if any) is recorded
    consumed(item_id);
  }
}

TensorId Scheduler::output_tensor(const ComputationNode& cn) const {
  for (const Operand& o : g_.op(cn.op).operands) {
    if (o.is_output() && g_.tensor(o.tensor).consumers.empty()) return o.tensor;
  }
  return kNone;
}

}  // namespace detail

ScheduleResult schedule(const ScheduleInputs& in) { return detail::Scheduler(in).run(); }

}  // namespace monet
