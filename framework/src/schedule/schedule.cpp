#include "monet/schedule/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

namespace monet {

namespace {

struct Interval {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

/// Busy periods of a shared resource (a link, the off-chip port). Transfers go into the earliest gap that
/// is long enough, so a transfer planned later in CN order can still use an idle period earlier in time.
class Timeline {
 public:
  /// Earliest start >= t of a free period of length d, also avoiding the tentative intervals `extra`.
  [[nodiscard]] std::int64_t fit(std::int64_t t, std::int64_t d, const std::vector<Interval>& extra) const {
    while (true) {
      const std::int64_t a = fit_busy(t, d);
      std::int64_t b = a;
      for (const Interval& i : extra) {
        if (i.start < b + d && b < i.end) b = i.end;
      }
      if (b == a) return a;
      t = b;
    }
  }
  void reserve(std::int64_t start, std::int64_t end) {
    if (end <= start) return;
    busy_[start] = end;
  }

 private:
  [[nodiscard]] std::int64_t fit_busy(std::int64_t t, std::int64_t d) const {
    auto it = busy_.upper_bound(t);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > t) t = prev->second;
    }
    for (; it != busy_.end() && it->first < t + d; ++it) t = std::max(t, it->second);
    return t;
  }
  std::map<std::int64_t, std::int64_t> busy_;  // start -> end, non-overlapping
};

/// Reservations of one plan that are not committed yet.
struct Tentative {
  std::map<std::size_t, std::vector<Interval>> links;
  std::vector<Interval> port;
};

/// An interval of residency of data in a core's memories.
struct Residency {
  int core = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t bits = 0;
};

class Scheduler {
 public:
  explicit Scheduler(const ScheduleInputs& in)
      : in_(in), g_(in.graph), cns_(in.cns), acc_(in.accelerator) {
    links_.resize(acc_.links.size());
    core_free_.assign(acc_.cores.size(), 0);
    location_.assign(cns_.nodes.size(), Accelerator::kOffChip);
    release_.assign(cns_.nodes.size(), 0);
    result_.nodes.resize(cns_.nodes.size());
  }

  ScheduleResult run() {
    for (const ComputationNode& cn : cns_.nodes) place(cn);
    finish();
    return std::move(result_);
  }

 private:
  struct Plan {
    int core = 0;
    std::int64_t start = 0;
    std::int64_t end = 0;
    std::int64_t finish = 0;  // including the write-back of graph outputs
    Cost cost;
    std::vector<Transfer> transfers;
  };

  /// Moves `bits` from one endpoint to another, starting no earlier than `earliest`, in the first period where
  /// the link (and the off-chip port, if involved) is free; the reservation is tentative until commit.
  std::int64_t move(int from, int to, std::int64_t bits, OperandSlot slot, std::int64_t earliest, int cn,
                    TensorId tensor, Tentative& tent, std::vector<Transfer>& out) const {
    if (bits <= 0 || from == to) return earliest;
    const Link* link = acc_.link_between(from, to);
    if (!link) {  // two hops through off-chip memory
      const std::int64_t t = move(from, Accelerator::kOffChip, bits, OperandSlot::O, earliest, cn, tensor, tent, out);
      return move(Accelerator::kOffChip, to, bits, slot, t, cn, tensor, tent, out);
    }
    const auto li = static_cast<std::size_t>(link - acc_.links.data());
    const bool offchip = from == Accelerator::kOffChip || to == Accelerator::kOffChip;
    double bw = link->bandwidth_bits_per_cycle;
    if (offchip) bw = std::min(bw, acc_.offchip.bandwidth_bits_per_cycle);
    const auto duration = static_cast<std::int64_t>(std::ceil(static_cast<double>(bits) / bw));
    std::vector<Interval>& link_tent = tent.links[li];
    std::int64_t start = earliest;
    while (true) {  // a period free on both the link and the port
      const std::int64_t on_link = links_[li].fit(start, duration, link_tent);
      const std::int64_t on_port = offchip ? port_.fit(on_link, duration, tent.port) : on_link;
      if (on_port == on_link) {
        start = on_link;
        break;
      }
      start = on_port;
    }
    const std::int64_t end = start + duration;
    link_tent.push_back(Interval{start, end});
    if (offchip) tent.port.push_back(Interval{start, end});

    Transfer t;
    t.tensor = tensor;
    t.from = from;
    t.to = to;
    t.link = static_cast<int>(li);
    t.cn = cn;
    t.start = start;
    t.end = end;
    t.bits = bits;
    const auto b = static_cast<double>(bits);
    t.energy_pj = b * link->energy_pj_per_bit;
    if (from == Accelerator::kOffChip) {
      t.energy_pj += b * acc_.offchip.read_energy_pj_per_bit;
    } else {
      t.energy_pj += b * core(from).top_level(OperandSlot::O).read_energy_per_bit();
    }
    if (to == Accelerator::kOffChip) {
      t.energy_pj += b * acc_.offchip.write_energy_pj_per_bit;
    } else {
      t.energy_pj += b * core(to).top_level(slot).write_energy_per_bit();
    }
    out.push_back(t);
    return end;
  }

  const Core& core(int id) const { return *acc_.cores[static_cast<std::size_t>(id)].core; }

  Plan plan(const ComputationNode& cn, int c) const {
    Plan p;
    Tentative r;
    p.core = c;
    const auto i = static_cast<std::size_t>(cn.id);
    std::int64_t ready = core_free_[static_cast<std::size_t>(c)];
    for (int e : cns_.in_edges[i]) {
      const CNEdge& edge = cns_.edges[static_cast<std::size_t>(e)];
      const auto src = static_cast<std::size_t>(edge.src);
      const std::int64_t produced = result_.nodes[src].end;
      const OperandSlot slot = slot_of(cn, edge.tensor);
      ready = std::max(ready, move(location_[src], c, edge.bits, slot, produced, cn.id, edge.tensor, r, p.transfers));
    }
    // Source tensors (inputs, weights) are fetched when the core turns to this CN: no prefetch.
    const std::int64_t fetch_from = core_free_[static_cast<std::size_t>(c)];
    for (const SourceRead& s : cns_.source_reads[i]) {
      ready = std::max(ready, move(Accelerator::kOffChip, c, s.bits, s.slot, fetch_from, cn.id, s.tensor, r, p.transfers));
    }
    p.cost = in_.cost(cn, c);
    p.start = ready;
    p.end = ready + p.cost.cycles;
    p.finish = p.end;
    if (cns_.sink_bits[i] > 0) {
      p.finish = move(c, Accelerator::kOffChip, cns_.sink_bits[i], OperandSlot::O, p.end, -1, output_tensor(cn), r,
                      p.transfers);
    }
    return p;
  }

  OperandSlot slot_of(const ComputationNode& cn, TensorId t) const {
    for (const Operand& o : g_.op(cn.op).operands) {
      if (o.tensor == t && !o.is_output()) return o.slot;
    }
    return OperandSlot::I1;
  }

  TensorId output_tensor(const ComputationNode& cn) const {
    for (const Operand& o : g_.op(cn.op).operands) {
      if (o.is_output() && g_.tensor(o.tensor).consumers.empty()) return o.tensor;
    }
    return kNone;
  }

  void place(const ComputationNode& cn) {
    const Operator& op = g_.op(cn.op);
    const auto i = static_cast<std::size_t>(cn.id);
    if (op.is_view()) {  // aliases its input: no time, no data movement, lives where its input lives
      std::int64_t t = 0;
      int where = Accelerator::kOffChip;
      for (int e : cns_.in_edges[i]) {
        const auto src = static_cast<std::size_t>(cns_.edges[static_cast<std::size_t>(e)].src);
        t = std::max(t, result_.nodes[src].end);
        where = location_[src];
      }
      result_.nodes[i] = ScheduledNode{cn.id, where, t, t, Cost{}};
      location_[i] = where;
      release_[i] = t;
      return;
    }
    std::vector<int> candidates;
    const int fixed = in_.fixed_core[static_cast<std::size_t>(op.id)];
    if (fixed >= 0) {
      candidates.push_back(fixed);
    } else {
      candidates = in_.allowed_cores[static_cast<std::size_t>(op.id)];
    }
    ensure(!candidates.empty(), "operator '" + op.name + "' has no core to run on");
    Plan best;
    bool have = false;
    for (int c : candidates) {
      Plan p = plan(cn, c);
      if (!have || p.end < best.end || (p.end == best.end && p.finish < best.finish)) {
        best = std::move(p);
        have = true;
      }
    }
    commit(cn, std::move(best));
  }

  void commit(const ComputationNode& cn, Plan p) {
    const auto i = static_cast<std::size_t>(cn.id);
    const auto c = static_cast<std::size_t>(p.core);
    result_.nodes[i] = ScheduledNode{cn.id, p.core, p.start, p.end, p.cost};
    location_[i] = p.core;
    release_[i] = p.finish;
    core_free_[c] = p.end;
    for (Transfer& t : p.transfers) {
      links_[static_cast<std::size_t>(t.link)].reserve(t.start, t.end);
      if (t.from == Accelerator::kOffChip || t.to == Accelerator::kOffChip) port_.reserve(t.start, t.end);
      if (t.cn == cn.id && t.to == p.core) {
        // Data brought in for this CN stays until the CN is done.
        residencies_.push_back(Residency{p.core, t.start, p.end, t.bits});
      }
      if (t.cn == cn.id && t.from != Accelerator::kOffChip) {
        // The producer's output is needed on its core until this transfer has read it.
        for (int e : cns_.in_edges[i]) {
          const auto src = static_cast<std::size_t>(cns_.edges[static_cast<std::size_t>(e)].src);
          if (location_[src] == t.from) release_[src] = std::max(release_[src], t.end);
        }
      }
      result_.transfers.push_back(t);
    }
    for (int e : cns_.in_edges[i]) {
      const auto src = static_cast<std::size_t>(cns_.edges[static_cast<std::size_t>(e)].src);
      if (location_[src] == p.core) release_[src] = std::max(release_[src], p.end);
    }
  }

  void finish() {
    ScheduleSummary& s = result_.summary;
    std::int64_t latency = 0;
    for (const ScheduledNode& n : result_.nodes) {
      latency = std::max(latency, n.end);
      s.energy.mac_pj += n.cost.compute_energy_pj;
      s.energy.onchip_memory_pj += n.cost.memory_energy_pj;
    }
    for (const Transfer& t : result_.transfers) {
      latency = std::max(latency, t.end);
      const Link& link = acc_.links[static_cast<std::size_t>(t.link)];
      const auto b = static_cast<double>(t.bits);
      const double link_e = b * link.energy_pj_per_bit;
      double off_e = 0;
      if (t.from == Accelerator::kOffChip) {
        off_e += b * acc_.offchip.read_energy_pj_per_bit;
        s.offchip_read_bits += t.bits;
      }
      if (t.to == Accelerator::kOffChip) {
        off_e += b * acc_.offchip.write_energy_pj_per_bit;
        s.offchip_write_bits += t.bits;
      }
      s.energy.link_pj += link_e;
      s.energy.offchip_pj += off_e;
      s.energy.onchip_memory_pj += t.energy_pj - link_e - off_e;
    }
    s.latency_cycles = latency;

    // Outputs of CNs stay on their core from start until their last reader is served.
    for (const ScheduledNode& n : result_.nodes) {
      if (n.core < 0) continue;
      const ComputationNode& cn = cns_.nodes[static_cast<std::size_t>(n.cn)];
      const Operator& op = g_.op(cn.op);
      std::int64_t bits = 0;
      for (std::size_t k = 0; k < op.operands.size(); ++k) {
        if (!op.operands[k].is_output()) continue;
        const Tensor& t = g_.tensor(op.operands[k].tensor);
        bits += region_elements(op.operand_region(k, cn.ranges, t)) * bits_of(t.dtype);
      }
      residencies_.push_back(Residency{n.core, n.start, std::max(n.end, release_[static_cast<std::size_t>(n.cn)]), bits});
    }
    s.peak_memory_bits.assign(acc_.cores.size(), 0);
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> events(acc_.cores.size());
    for (const Residency& r : residencies_) {
      if (r.bits == 0 || r.end <= r.start) continue;
      events[static_cast<std::size_t>(r.core)].emplace_back(r.start, r.bits);
      events[static_cast<std::size_t>(r.core)].emplace_back(r.end, -r.bits);
    }
    for (std::size_t c = 0; c < events.size(); ++c) {
      auto& ev = events[c];
      std::sort(ev.begin(), ev.end());  // at equal times releases (negative) come first
      std::int64_t live = 0;
      for (const auto& [time, delta] : ev) {
        live += delta;
        s.peak_memory_bits[c] = std::max(s.peak_memory_bits[c], live);
      }
    }
  }

  const ScheduleInputs& in_;
  const Graph& g_;
  const CNGraph& cns_;
  const Accelerator& acc_;
  std::vector<Timeline> links_;
  Timeline port_;
  std::vector<std::int64_t> core_free_;
  std::vector<int> location_;
  std::vector<std::int64_t> release_;
  std::vector<Residency> residencies_;
  ScheduleResult result_;
};

}  // namespace

ScheduleResult schedule(const ScheduleInputs& in) { return Scheduler(in).run(); }

}  // namespace monet
