// Stage 1 of the analytical cost model of one mapping (sections 6-7.2 of the ZigZag notes; mapping_evaluator.hpp):
// the evaluator's set-up, each operand's merged temporal mapping, decoupling and transfer patterns, the signature;
// and the one-shot evaluate(). Stage 2 (finish) is in evaluate_finish.cpp and the files it names.
// The arithmetic is ZigZag's, operation for operation: results are bit-identical to evaluating each mapping from
// scratch.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "mapping_evaluator.hpp"

namespace monet::loopnest {

namespace {

double product(const Nest& n, const LayerOperand& op, int nd, Rel want) {
  double p = 1;
  for (const Loop& l : n) {
    if (op.decoupled(l.dim, nd) == want) p *= l.size;
  }
  return p;
}

using OperandPattern = MappingEvaluator::OperandPattern;

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
