// The analytical cost model of one mapping (sections 6-8 of the ZigZag notes), in the two stages of
// mapping_evaluator.hpp. The arithmetic is ZigZag's, operation for operation: results are bit-identical to
// evaluating each mapping from scratch.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

namespace {

enum Dir : int { kTL = 0, kFH = 1, kFL = 2, kTH = 3 };  // rd_out_to_low, wr_in_by_high, wr_in_by_low, rd_out_to_high
constexpr Direction kDirection[4] = {Direction::tl, Direction::fh, Direction::fl, Direction::th};

double product(const Nest& n, const LayerOperand& op, int nd, Rel want) {
  double p = 1;
  for (const Loop& l : n) {
    if (op.decoupled(l.dim, nd) == want) p *= l.size;
  }
  return p;
}

using OperandPattern = MappingEvaluator::OperandPattern;

using Activity = MappingEvaluator::Activity;

/// ZigZag's water-filling of one-shot transfers into the surplus bandwidth (8.4). `compat` reproduces the
/// issue-#125 behaviour (entries already at their minimum are reduced again, possibly below zero).
std::vector<double> reduce_balanced(const std::vector<double>& need, const std::vector<double>& mins, double surplus,
                                    bool compat) {
  const std::size_t n = need.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return need[a] > need[b]; });
  std::vector<double> c(n), mn(n);
  for (std::size_t k = 0; k < n; ++k) {
    c[k] = need[order[k]];
    mn[k] = mins[order[k]];
  }
  double s = surplus;
  for (std::size_t i = 0; i < n; ++i) {
    // A need below its minimum (the minimum is level 1's data for every level, ZigZag's convention) cannot be
    // reduced; ZigZag's arithmetic would then grow the larger needs by the difference (compat only).
    const double room = compat ? c[i] - mn[i] : std::max(0.0, c[i] - mn[i]);
    const double max_red = room * static_cast<double>(i + 1);
    if (s >= max_red) {
      const double step = room;
      for (std::size_t k = 0; k <= i; ++k) c[k] -= step;
      s -= max_red;
    } else {
      const double step = s / static_cast<double>(i + 1);
      for (std::size_t k = 0; k <= i; ++k) c[k] -= step;
      break;
    }
    if (!compat) {
      for (std::size_t k = 0; k <= i; ++k) c[k] = std::max(c[k], mn[k]);
    }
  }
  if (!compat) {
    for (std::size_t k = 0; k < n; ++k) c[k] = std::max(c[k], mn[k]);
  }
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) out[order[k]] = c[k];
  return out;
}

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

bool better(const Score& a, const Score& b, const std::string& objective) {
  if (objective == "energy") return a.energy < b.energy || (a.energy == b.energy && a.latency < b.latency);
  if (objective == "edp") return a.energy * a.latency < b.energy * b.latency;
  if (objective == "stream") return a.rank < b.rank;  // Stream keeps the first of equals
  return a.rank < b.rank || (a.rank == b.rank && a.energy < b.energy);
}

MappingEvaluator::MappingEvaluator(const Layer& layer, const Hierarchy& h, const Spatial& spatial, const Options& options)
    : layer_(layer), h_(h), spatial_(spatial), options_(options) {
  const std::size_t nops = layer.ops.size();
  const auto nd = static_cast<std::size_t>(layer.ndims());
  decoupling_.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    Decoupling& d = decoupling_[o];
    d.relation_of.assign(nd, -1);
    d.is_a.assign(nd, false);
    for (int k : layer.ops[o].relations) {
      const Relation& r = layer.relations[static_cast<std::size_t>(k)];
      d.relation_of[static_cast<std::size_t>(r.a)] = k;
      d.is_a[static_cast<std::size_t>(r.a)] = true;
      d.relation_of[static_cast<std::size_t>(r.b)] = k;
    }
  }
  tf_.resize(nops);
  pf_.resize(nops);
  pi_.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    spatial_counts(o, spatial.frac[o], pf_[o]);
    spatial_counts(o, spatial.integer[o], pi_[o]);
  }
  // Where the integer spatial mapping is the fractional one, the integer patterns are the fractional ones.
  auto same = [](const std::vector<Nest>& a, const std::vector<Nest>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t l = 0; l < a.size(); ++l) {
      if (a[l].size() != b[l].size()) return false;
      for (std::size_t k = 0; k < a[l].size(); ++k) {
        if (a[l][k].dim != b[l][k].dim || std::bit_cast<std::uint64_t>(a[l][k].size) != std::bit_cast<std::uint64_t>(b[l][k].size)) {
          return false;
        }
      }
    }
    return true;
  };
  for (std::size_t o = 0; o < nops; ++o) pint_.push_back(same(spatial.frac[o], spatial.integer[o]) ? &pf_[o] : &pi_[o]);
  prepare_ports();
}

/// pr-loop decoupling (6.2) of a list of levels, bottom-up. ZigZag truncates the cumulative loop sizes to integers
/// before computing the input extent (`int()` in LayerNode.calc_tensor_dim), which matters for fractional spatial
/// factors (OX 3.5 -> extent 3); `truncated_extents` reproduces that, otherwise the extent is kept fractional.
/// Only for an operand that reads through a relation.
void MappingEvaluator::decouple(std::size_t o, const std::vector<Nest>& levels, std::vector<Nest>& out) {
  const int nd = layer_.ndims();
  const bool truncate = options_.truncated_extents;
  const Decoupling& dc = decoupling_[o];
  const std::size_t nr = layer_.relations.size();
  ca_.assign(nr, 1);
  cb_.assign(nr, 1);
  rprev_.assign(nr, 1);
  irprev_.assign(nr, 1);
  out.resize(levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) {
    out[l].clear();
    for (const Loop& loop : levels[l]) {
      const int k = loop.dim < nd ? dc.relation_of[static_cast<std::size_t>(loop.dim)] : -1;
      if (k < 0) {
        out[l].push_back(loop);
        continue;
      }
      const auto ku = static_cast<std::size_t>(k);
      const Relation& r = layer_.relations[ku];
      (dc.is_a[static_cast<std::size_t>(loop.dim)] ? ca_[ku] : cb_[ku]) *= loop.size;
      const double A = truncate ? std::trunc(ca_[ku]) : ca_[ku];
      const double B = truncate ? std::trunc(cb_[ku]) : cb_[ku];
      const double R = std::min(r.limit, pr_size(A, r.ca, B, r.cb));
      const double IR = ca_[ku] * cb_[ku] / R;
      out[l].push_back(Loop{nd + 2 * k, R / rprev_[ku]});
      out[l].push_back(Loop{nd + 2 * k + 1, IR / irprev_[ku]});
      rprev_[ku] = R;
      irprev_[ku] = IR;
    }
  }
}

void MappingEvaluator::temporal_facts(std::size_t o, const std::vector<Nest>& tm) {
  const LayerOperand& op = layer_.ops[o];
  TemporalFacts& f = tf_[o];
  f.tms = tm;
  const int nd = layer_.ndims();
  auto rel = [&](const Loop& l) { return l.dim < nd ? op.rel[static_cast<std::size_t>(l.dim)] : Rel::none; };
  bool changed = true;
  while (changed) {  // stationarity merge-down
    changed = false;
    for (std::size_t m = 1; m < f.tms.size(); ++m) {
      while (!f.tms[m].empty() && rel(f.tms[m].front()) == Rel::irrelevant) {
        f.tms[m - 1].push_back(f.tms[m].front());
        f.tms[m].erase(f.tms[m].begin());
        changed = true;
      }
    }
  }
  f.mac_st = 1;
  if (!f.tms.empty()) {
    for (const Loop& l : f.tms[0]) {
      if (rel(l) != Rel::irrelevant) break;
      f.mac_st *= l.size;
    }
  }
  double c = 1;
  f.cycle.clear();
  f.top_r.assign(1, 1);
  f.top_ir.assign(1, 1);
  for (const Nest& level : f.tms) {
    for (const Loop& l : level) c *= l.size;
    f.cycle.push_back(c);
    double tr = 1;
    for (auto it = level.rbegin(); it != level.rend() && rel(*it) == Rel::relevant; ++it) tr *= it->size;
    double ti = 1;
    for (auto it = level.rbegin(); it != level.rend() && rel(*it) == Rel::irrelevant; ++it) ti *= it->size;
    f.top_r.push_back(tr);
    f.top_ir.push_back(ti);
  }
}

/// Unit counts from the decoupled spatial mapping (4.6): they depend on the spatial mapping alone.
void MappingEvaluator::spatial_counts(std::size_t o, const std::vector<Nest>& sm, OperandPattern& p) {
  const LayerOperand& op = layer_.ops[o];
  const int nd = layer_.ndims();
  const std::size_t Lu = sm.size() - 1;
  std::vector<Nest> decoupled;
  if (op.pr()) decouple(o, sm, decoupled);
  const std::vector<Nest>& dsm = op.pr() ? decoupled : sm;
  std::vector<double> ur(Lu + 1), ut(Lu + 1);
  for (std::size_t a = 0; a <= Lu; ++a) {
    double r = 1;
    double all = 1;
    for (const Loop& l : dsm[a]) {
      all *= l.size;
      if (op.decoupled(l.dim, nd) == Rel::relevant) r *= l.size;
    }
    ur[a] = r;
    ut[a] = all;
  }
  p.unit_count.assign(Lu + 1, 1);
  std::vector<double> unique(Lu + 2, 1);
  for (std::size_t a = Lu + 1; a-- > 0;) {
    double prod_t = 1;
    for (std::size_t k = a; k <= Lu; ++k) prod_t *= ut[k];
    p.unit_count[a] = py_round(py_round(prod_t * 1000.0) / 1000.0);
    unique[a] = unique[a + 1] * ur[a];
  }
  p.boost.assign(Lu + 1, 1);
  for (std::size_t a = 0; a < Lu; ++a) p.boost[a] = py_round(unique[a] / unique[a + 1]);
}

void MappingEvaluator::pattern(std::size_t o, const std::vector<Nest>& sm, OperandPattern& p) {
  const LayerOperand& op = layer_.ops[o];
  const TemporalFacts& tf = tf_[o];
  const int nd = layer_.ndims();
  const std::size_t Lu = tf.tms.size();

  // Combined nests (6.3).
  s1t_.resize(Lu + 1);
  s2t_.resize(Lu + 2);
  for (Nest& n : s1t_) n.clear();
  for (Nest& n : s2t_) n.clear();
  for (std::size_t a = 0; a <= Lu; ++a) {
    if (a >= 1) s1t_[a] = tf.tms[a - 1];
    s1t_[a].insert(s1t_[a].end(), sm[a].begin(), sm[a].end());
    if (a < Lu) s2t_[a + 1] = tf.tms[a];
    s2t_[a + 1].insert(s2t_[a + 1].end(), sm[a].begin(), sm[a].end());
  }
  if (op.pr()) {
    decouple(o, s1t_, d1t_);
    decouple(o, s2t_, d2t_);
  }
  const std::vector<Nest>& s1t = op.pr() ? d1t_ : s1t_;
  const std::vector<Nest>& s2t = op.pr() ? d2t_ : s2t_;
  ir1_.resize(Lu + 1);
  irflag_.resize(Lu + 1);
  for (std::size_t a = 0; a <= Lu; ++a) {
    ir1_[a] = product(s1t[a], op, nd, Rel::irrelevant);
    bool flag = false;
    for (const Loop& l : s1t[a]) flag |= op.decoupled(l.dim, nd) == Rel::irrelevant && l.size > 1;
    irflag_[a] = flag;
  }
  p.data_unrolled.assign(Lu + 1, 1);
  double cum = 1;
  for (std::size_t a = 0; a <= Lu; ++a) {
    cum *= product(s2t[a], op, nd, Rel::relevant);
    p.data_unrolled[a] = py_round(cum);
  }
  p.psum.assign(Lu + 1, false);
  for (std::size_t m = 0; m < Lu; ++m) {
    for (std::size_t a = m + 1; a <= Lu; ++a) p.psum[m] = p.psum[m] || irflag_[a];
  }
  p.caal.assign(Lu + 3, 1);
  for (std::size_t a = Lu + 1; a-- > 0;) p.caal[a] = p.caal[a + 1] * ir1_[a];
  p.caal[Lu + 1] = p.caal[Lu + 2] = 1;
  p.prec.resize(Lu + 1);
  p.data_bits.resize(Lu + 1);
  p.effective_bits.resize(Lu + 1);
  for (std::size_t a = 0; a <= Lu; ++a) {
    p.prec[a] = op.output ? (p.psum[a] ? op.precision : op.precision_final) : op.precision;
    p.data_bits[a] = p.data_unrolled[a] * p.prec[a];
    p.effective_bits[a] = std::floor(p.data_bits[a] / tf.top_r[a]);
  }

  // Periodic transfers per level and direction (7.1, 7.2).
  cyc_.assign(1, op.output ? 1.0 : tf.mac_st);
  cyc_.insert(cyc_.end(), tf.cycle.begin(), tf.cycle.end());
  const double T = tf.cycle.back();
  bw_low_.resize(Lu + 1);
  bw_high_.resize(Lu + 1);
  for (std::size_t a = 0; a <= Lu; ++a) {
    bw_low_[a] = p.data_unrolled[a] * p.prec[a] / cyc_[a];
    bw_high_[a] = bw_low_[a] * p.boost[a];
  }
  p.transfers.assign(Lu, {});
  for (std::size_t m = 0; m < Lu; ++m) {
    auto& t = p.transfers[m];
    const bool top = m + 1 == Lu;
    auto low = [&](OperandPattern::Transfer& x, double amount, double prec) {
      x.period = cyc_[m];
      x.count = std::floor(T / cyc_[m]);
      x.amount = amount;
      x.prec = prec;
      x.avg_bw = std::trunc(bw_high_[m]);
      x.window = std::trunc(x.period / tf.top_ir[m]);
      x.inst_bw = std::trunc(x.avg_bw * std::trunc(tf.top_ir[m]));
    };
    auto high = [&](OperandPattern::Transfer& x, double amount, double prec) {
      x.period = cyc_[m + 1];
      x.count = std::floor(T / cyc_[m + 1]);
      x.amount = amount;
      x.prec = prec;
      x.avg_bw = std::trunc(bw_low_[m + 1]);
      x.window = std::trunc(x.period / tf.top_ir[m + 1]);
      x.inst_bw = std::trunc(x.avg_bw * std::trunc(tf.top_ir[m + 1]));
    };
    if (!op.output) {
      low(t[kTL], p.data_unrolled[m] * p.boost[m], op.precision);
      if (!top) high(t[kFH], p.data_unrolled[m + 1], op.precision);
    } else {
      const bool read_back = p.caal[m + 1] != 1;
      const bool write_back = p.caal[m + 2] != 1;
      low(t[kFL], std::trunc(p.data_unrolled[m] * p.boost[m]), read_back ? op.precision : op.precision_final);
      if (p.psum[m]) {
        t[kTL] = t[kFL];
        t[kTL].prec = read_back ? op.precision : 0;
      }
      if (!top) {
        high(t[kTH], p.data_unrolled[m + 1], write_back ? op.precision : op.precision_final);
        if (p.psum[m + 1]) {
          t[kFH] = t[kTH];
          t[kFH].prec = write_back ? op.precision : 0;
        }
      }
    }
  }

  // A shared memory right below the top level (a GPU's L2): an input every sibling reads whole crosses into it
  // once for all of them, so this core's part of that crossing (the top level's reads, the shared level's
  // writes) is 1/n; each core still reads its own copy out of the shared level.
  const int n = options_.offchip_sharers;
  const auto& levels = h_.levels[static_cast<std::size_t>(op.slot)];
  if (!op.output && n > 1 && Lu >= 2 && levels.size() == Lu && options_.sibling_shared[static_cast<std::size_t>(op.slot)]) {
    const std::string& below = h_.core->memories[static_cast<std::size_t>(levels[Lu - 2])].name;
    const auto& shared = options_.shared_memories;
    if (std::find(shared.begin(), shared.end(), below) != shared.end()) {
      for (OperandPattern::Transfer* x : {&p.transfers[Lu - 1][kTL], &p.transfers[Lu - 2][kFH]}) {
        x->amount /= n;
        if (x->avg_bw >= 1) x->avg_bw = std::max(1.0, std::trunc(x->avg_bw / n));
      }
    }
  }
}

void MappingEvaluator::analyse(const Temporal& tm) {
  for (std::size_t o = 0; o < layer_.ops.size(); ++o) {
    if (tm[o].size() + 1 != spatial_.frac[o].size()) {
      throw InternalError("loopnest: a temporal mapping of operand " + std::string(1, layer_.ops[o].name) + " has " +
                          std::to_string(tm[o].size()) + " levels, its hierarchy " +
                          std::to_string(spatial_.frac[o].size() - 1));
    }
    temporal_facts(o, tm[o]);
    pattern(o, spatial_.frac[o], pf_[o]);
    if (pint_[o] != &pf_[o]) pattern(o, spatial_.integer[o], pi_[o]);
  }
  make_signature();
}

void MappingEvaluator::make_signature() {
  signature_.clear();
  auto put = [&](double x) { signature_.push_back(std::bit_cast<std::uint64_t>(x)); };
  put(tf_[0].cycle.back());
  for (std::size_t o = 0; o < layer_.ops.size(); ++o) {
    const OperandPattern& f = pf_[o];
    const OperandPattern& i = *pint_[o];
    const bool aliased = &i == &f;  // then only what stage 2 reads of i and not of f is added
    if (!aliased) put(i.data_bits[1]);
    for (std::size_t m = 0; m < f.transfers.size(); ++m) {
      put(f.data_bits[m + 1]);
      put(f.effective_bits[m + 1]);
      for (const auto& t : f.transfers[m]) {
        put(t.count);
        put(t.window);
        put(t.amount);
        put(t.prec);
      }
      for (const auto& t : i.transfers[m]) {
        put(t.period);
        put(t.avg_bw);
        if (aliased) continue;
        put(t.count);
        put(t.window);
        put(t.amount);
        put(t.prec);
      }
    }
  }
}

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

const Evaluation& MappingEvaluator::finish() {
  // Stage 2 reads only what make_signature() records (and the layer, hierarchy and options).
  const Layer& L = layer_;
  const Hierarchy& h = h_;
  const Options& opt = options_;
  const auto& tf = tf_;
  const auto& pf = pf_;
  auto pi = [&](std::size_t o) -> const OperandPattern& { return *pint_[o]; };
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  Evaluation& ev = ev_;
  const double T = tf[0].cycle.back();
  ev.ideal_temporal_cycle = T;
  const double units = static_cast<double>(core.array.pe_count());
  ev.ideal_cycle = std::ceil(L.macs / units);
  ev.spatial_utilization = ev.ideal_cycle / T;
  ev.mac_energy = core.array.unit_energy_pj * L.macs;

  // --------------------------------------------------------------------------------- energy (7.3, 7.4)
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
  ev.energy = ev.mac_energy + mem_energy;
  ev.level_bits.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) {
    ev.level_bits[o].clear();
    for (std::size_t m = 0; m < h.levels[L.ops[o].slot].size(); ++m) ev.level_bits[o].push_back(pf[o].data_bits[m + 1]);
  }

  // ------------------------------------------------------------------------- double buffering (8.1)
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

  // ------------------------------------------------------------- stalls per port (8.2, 8.3), integer SM
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
  ev.stall = stall;

  // ------------------------------------------------------------------- on- and off-loading (8.4)
  auto& table = table_;
  borrowed_offchip_bw_.fill(0);
  for (auto& per_level : table) {
    for (auto& dirs : per_level) dirs.fill(Entry{});
  }
  for (const PortWork& pw : ports_) {
    const auto& acts = pw.acts;
    if (acts.empty()) continue;
    once_.clear();
    double busy = 0;
    for (const Activity& a : acts) {
      const LayerOperand& op = L.ops[static_cast<std::size_t>(a.op)];
      if (op.output && (a.dir == kTL || a.dir == kFH)) continue;  // partial sums
      if (a.count > 1) {
        table[static_cast<std::size_t>(a.op)][static_cast<std::size_t>(a.m)][static_cast<std::size_t>(a.dir)] =
            Entry{a.real, pw.shared, true};
        busy += std::ceil(a.avg_bw);
      } else {
        once_.push_back(&a);
      }
    }
    if (once_.empty()) continue;
    const auto bmax = static_cast<double>(pw.port->bandwidth_max_bits);
    const double surplus = std::max(0.0, (bmax - busy) / bmax * (T + stall));
    need_.clear();
    mins_.clear();
    for (const Activity* a : once_) {
      need_.push_back(a->real);
      // ZigZag takes the data of architecture level 1 for every memory level (bug 9 of the notes).
      mins_.push_back(std::ceil(pi(static_cast<std::size_t>(a->op)).data_bits[1] / bmax));
    }
    const auto reduced = reduce_balanced(need_, mins_, surplus, opt.negative_onloading);
    std::array<double, 3> borrowed{};  // per operand, the last of its loads on this port (ZigZag keys them so)
    for (std::size_t k = 0; k < once_.size(); ++k) {
      const Activity& a = *once_[k];
      table[static_cast<std::size_t>(a.op)][static_cast<std::size_t>(a.m)][static_cast<std::size_t>(a.dir)] =
          Entry{reduced[k], pw.shared, true};
      const double computation = std::ceil(T) + stall;
      if (computation > 0) borrowed[static_cast<std::size_t>(a.op)] = std::ceil((need_[k] - reduced[k]) / computation * bmax - 1e-9);
    }
    if (opt.stream_mapping_objective && core.memories[static_cast<std::size_t>(pw.memory)].offchip) {
      for (std::size_t o = 0; o < borrowed.size(); ++o) borrowed_offchip_bw_[o] += borrowed[o];
    }
  }
  auto entry = [&](std::size_t o, std::size_t m, int d) {
    Entry e;
    if (m >= table[o].size()) return e;
    e = table[o][m][static_cast<std::size_t>(d)];
    if (e.set) return e;
    const int k = port_of_[o][m][static_cast<std::size_t>(d)];
    if (k >= 0) e.shared = ports_[static_cast<std::size_t>(k)].shared;
    return e;
  };
  struct Load {
    double individual = 0, shared = 0, half = 0;
  };
  Load loads[kSlots];
  std::size_t nloads = 0;
  for (std::size_t o = 0; o < nops; ++o) {
    const LayerOperand& op = L.ops[o];
    if (op.output) continue;
    Load ld;
    const std::size_t levels = h.levels[op.slot].size();
    for (std::size_t m = 0; m + 1 < levels; ++m) {
      const Entry a = entry(o, m, kFH);
      const Entry b = entry(o, m + 1, kTL);
      const double x = std::max(a.cycles, b.cycles);
      if (!a.shared && !b.shared) ld.individual += x;
      else if (a.shared && b.shared) ld.shared += x;
      else if (opt.half_shared_assigned) ld.half = x;  // ZigZag assigns instead of adding (bug 8 of the notes)
      else ld.half += x;
    }
    if (nloads < kSlots) loads[nloads++] = ld;
  }
  double onload = 0;
  if (nloads == 1) {
    onload = loads[0].individual;
  } else if (nloads >= 2) {
    const Load& A = loads[0];
    const Load& B = loads[1];
    onload = std::min(A.shared + std::max(B.shared + B.half + B.individual, A.half + A.individual),
                      B.shared + std::max(A.shared + A.half + A.individual, B.half + B.individual));
  }
  double offload = 0;
  for (std::size_t o = 0; o < nops; ++o) {
    if (!L.ops[o].output) continue;
    const std::size_t levels = h.levels[L.ops[o].slot].size();
    for (std::size_t m = 0; m + 1 < levels; ++m) offload += std::max(entry(o, m, kTH).cycles, entry(o, m + 1, kFL).cycles);
  }
  ev.onloading = onload;
  ev.offloading = offload;
  ev.latency = T + stall + onload + offload;
  ev.rank = ev.latency;
  if (opt.stream_mapping_objective) {
    ev.rank = stream_rank(ev);
  } else if (opt.offchip_sharers > 1) {
    // Stream's bandwidth-aware objective for CNs streaming in parallel: ceil(used / port) x latency, where the
    // first streamed input counts once (broadcast to the siblings) and the other operands once per sibling.
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
    if (port > 0) ev.rank = std::ceil((broadcast + opt.offchip_sharers * others) / port) * ev.latency;
  }
  return ev;
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

std::string MappingEvaluator::temporal_text() const {
  std::string text;
  for (std::size_t m = 0; m < tf_[0].tms.size(); ++m) {
    if (m) text += " | ";
    bool first = true;
    for (const Loop& l : tf_[0].tms[m]) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %g", first ? "" : ", ", layer_.dims[static_cast<std::size_t>(l.dim)].c_str(), l.size);
      text += buf;
      first = false;
    }
  }
  return text;
}

Evaluation evaluate(const Layer& L, const Hierarchy& h, const Spatial& sp, const Temporal& tm, const Options& opt) {
  MappingEvaluator evaluator(L, h, sp, opt);
  evaluator.analyse(tm);
  Evaluation ev = evaluator.finish();  // a copy
  ev.temporal_text = evaluator.temporal_text();
  return ev;
}

}  // namespace monet::loopnest
