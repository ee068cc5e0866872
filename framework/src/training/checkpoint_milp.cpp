// The checkpointing MILP (checkpoint_milp.hpp) with COIN-OR CBC: the only file that sees CBC.
//
// Variables: c_b in {0, 1} per block (1: checkpointed), objective sum cost_b c_b. For each storage, its positions
// from `from` to its last unconditional reader are a constant; after that, one continuous z_k in [0, 1] per
// distinct reader position q_k (the storage is live on (q_{k-1}, q_k] when a reader at q_k or later is present):
// z_k >= z_{k+1}, and z_k >= every term at q_k, a term being the AND of the storage's existence (c_x for a
// recomputed tensor) and the reader's literal (c_b or 1 - c_b), linearised as z >= l1 + l2 - 1. A recomputed
// tensor whose readers are all unconditional is live exactly when c_x: c_x stands for it, no z. One row per
// backward position p: sum bytes * (z or c) <= budget - constant_p, relaxed by M_p (1 - c_x) when p is a
// recompute operator of block x (the position exists only when x is checkpointed). Minimising cost keeps each z
// at the OR it bounds from below only where the row needs it, so the optimum is exact.
#include <Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <spdlog/spdlog.h>

#include "monet/config/toml_reader.hpp"
#include "monet/training/checkpoint_milp.hpp"

namespace monet {

namespace {

/// A linear programme in "row <= rhs" form with some integer columns.
struct Program {
  std::vector<double> lb, ub, obj;
  std::vector<char> integer;
  std::vector<std::vector<std::pair<int, double>>> rows;
  std::vector<double> rhs;

  int column(double lo, double hi, double cost, bool is_int) {
    lb.push_back(lo);
    ub.push_back(hi);
    obj.push_back(cost);
    integer.push_back(is_int ? 1 : 0);
    return static_cast<int>(lb.size()) - 1;
  }
  void row(std::vector<std::pair<int, double>> terms, double bound) {
    rows.push_back(std::move(terms));
    rhs.push_back(bound);
  }
};

/// An affine literal a + s * c_j (c_j a block variable): c_j (a = 0, s = 1) or 1 - c_j (a = 1, s = -1).
struct Affine {
  int col = -1;  // -1: the constant 1
  double a = 1, s = 0;
};
Affine literal(const RegionLiteral& l) {
  if (l.block < 0) return {};
  return l.checkpointed ? Affine{l.block, 0, 1} : Affine{l.block, 1, -1};
}

/// The memory part of the model: per backward position, the constant bytes and the (column, bytes) terms.
struct MemoryRows {
  std::vector<std::int64_t> constant;
  std::vector<std::map<int, double>> terms;
};

/// Adds the block columns (0..n-1, objective `cost_scale` * cost) and the liveness columns and rows to `lp`.
MemoryRows build_memory(const CheckpointRegionGraph& m, Program& lp, double cost_scale) {
  const std::size_t n = m.size(), P = m.present_if.size();
  for (std::size_t b = 0; b < n; ++b) lp.column(0, 1, m.cost[b] * cost_scale, true);
  MemoryRows mem{std::vector<std::int64_t>(P, 0), std::vector<std::map<int, double>>(P)};
  const auto bytes = [](const StorageLiveness& s) { return static_cast<double>(s.bytes); };
  for (const StorageLiveness& s : m.storages) {
    std::vector<std::pair<std::size_t, RegionLiteral>> readers;
    for (const auto& r : s.readers) {
      if (r.first >= s.from) readers.push_back(r);
    }
    if (readers.empty()) continue;
    // The last reader present whatever the choice: up to it the storage is live if it exists.
    std::size_t covered = s.from;  // first position not yet accounted for
    bool unconditional = false;
    for (const auto& [q, lit] : readers) {
      if (lit.block < 0 && q + 1 > covered) {
        covered = q + 1;
        unconditional = true;
      }
    }
    if (unconditional) {
      for (std::size_t p = s.from; p < covered; ++p) {
        if (s.exists_if < 0) mem.constant[p] += s.bytes;
        else mem.terms[p][s.exists_if] += bytes(s);
      }
    }
    // After it: one z per distinct reader position.
    std::vector<std::size_t> qs;
    for (const auto& [q, lit] : readers) {
      if (q >= covered && (qs.empty() || qs.back() != q)) qs.push_back(q);
    }
    if (qs.empty()) continue;
    std::vector<int> z(qs.size());
    for (std::size_t k = 0; k < qs.size(); ++k) z[k] = lp.column(0, 1, 0, false);
    for (std::size_t k = 0; k + 1 < qs.size(); ++k) lp.row({{z[k + 1], 1}, {z[k], -1}}, 0);  // z_k >= z_{k+1}
    for (const auto& [q, lit] : readers) {
      if (q < covered) continue;
      const int zk = z[static_cast<std::size_t>(std::find(qs.begin(), qs.end(), q) - qs.begin())];
      // z >= E AND L, E = c_x (or 1), L = a + s c_j: z >= E + L - 1.
      Affine e = s.exists_if >= 0 ? Affine{s.exists_if, 0, 1} : Affine{};
      Affine l = literal(lit);
      if (e.col >= 0 && e.col == l.col) {
        if (l.s < 0) continue;  // c_x AND NOT c_x
        l = Affine{};           // c_x AND c_x
      }
      std::vector<std::pair<int, double>> row{{zk, -1}};
      double rhs = 1;  // term - z <= 0, term = e + l - 1 (a constant literal is 1)
      for (const Affine& x : {e, l}) {
        if (x.col >= 0) row.emplace_back(x.col, x.s);
        rhs -= x.col >= 0 ? x.a : 1;
      }
      lp.row(std::move(row), rhs);
    }
    std::size_t lo = covered;
    for (std::size_t k = 0; k < qs.size(); ++k) {
      for (std::size_t p = lo; p <= qs[k]; ++p) mem.terms[p][z[k]] += bytes(s);
      lo = qs[k] + 1;
    }
  }
  return mem;
}

std::mutex& cbc_mutex() {
  static std::mutex m;  // CBC's message handlers and statistics are not meant for concurrent solves
  return m;
}

struct Solved {
  std::vector<double> x;  // empty: no solution
  double bound = 0;
  bool optimal = false, infeasible = false, time_limit = false, node_limit = false;
  std::int64_t nodes = 0;
  double seconds = 0;
};

Solved solve(const Program& lp, const std::vector<double>& start, double time_limit_s, std::int64_t node_limit) {
  std::lock_guard lock(cbc_mutex());
  Cbc_Model* model = Cbc_newModel();
  for (std::size_t j = 0; j < lp.lb.size(); ++j) {
    Cbc_addCol(model, ("x" + std::to_string(j)).c_str(), lp.lb[j], lp.ub[j], lp.obj[j], lp.integer[j], 0, nullptr, nullptr);
  }
  for (std::size_t i = 0; i < lp.rows.size(); ++i) {
    std::vector<int> cols;
    std::vector<double> coefs;
    for (const auto& [c, v] : lp.rows[i]) {
      cols.push_back(c);
      coefs.push_back(v);
    }
    Cbc_addRow(model, ("r" + std::to_string(i)).c_str(), static_cast<int>(cols.size()), cols.data(), coefs.data(), 'L', lp.rhs[i]);
  }
  Cbc_setObjSense(model, 1);
  // Through the solver's parameters too: Cbc_solve runs CBC's standard driver, which applies its own.
  Cbc_setLogLevel(model, 0);
  Cbc_setParameter(model, "logLevel", "0");
  Cbc_setMaximumSeconds(model, time_limit_s);
  Cbc_setParameter(model, "seconds", format_number(time_limit_s).c_str());
  if (node_limit >= 0) {  // a limit that stops at the same point on any machine and under any load
    const int nodes = static_cast<int>(std::min<std::int64_t>(node_limit, std::numeric_limits<int>::max()));
    Cbc_setMaximumNodes(model, nodes);
    Cbc_setParameter(model, "maxNodes", std::to_string(nodes).c_str());
  }
  Cbc_setAllowableGap(model, 0);
  Cbc_setAllowableFractionGap(model, 0);
  Cbc_setParameter(model, "allowableGap", "0");
  Cbc_setParameter(model, "ratioGap", "0");
  if (!start.empty()) {
    std::vector<int> idx;
    std::vector<double> val;
    for (std::size_t j = 0; j < start.size(); ++j) {
      idx.push_back(static_cast<int>(j));
      val.push_back(start[j]);
    }
    Cbc_setMIPStartI(model, static_cast<int>(idx.size()), idx.data(), val.data());
  }
  const auto t0 = std::chrono::steady_clock::now();
  Cbc_solve(model);
  Solved out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (const double* x = Cbc_bestSolution(model)) out.x.assign(x, x + lp.lb.size());
  out.bound = Cbc_getBestPossibleObjValue(model);
  out.optimal = Cbc_isProvenOptimal(model) != 0;
  out.infeasible = Cbc_isProvenInfeasible(model) != 0;
  // Secondary status 3 / 4: stopped on nodes / on time (CBC's C interface documents the codes).
  const int why = Cbc_secondaryStatus(model);
  out.node_limit = !out.optimal && !out.infeasible && (why == 3 || Cbc_isNodeLimitReached(model) != 0);
  out.time_limit = !out.optimal && !out.infeasible && !out.node_limit;  // the only other way it stops early
  out.nodes = Cbc_getNodeCount(model);
  Cbc_deleteModel(model);
  return out;
}

std::vector<bool> choice_of(const Solved& s, std::size_t n) {
  std::vector<bool> c(n);
  for (std::size_t b = 0; b < n; ++b) c[b] = s.x[b] > 0.5;
  return c;
}

/// The cheapest of no / every / every other block checkpointed that fits: CBC's first incumbent.
std::vector<double> start_choice(const CheckpointRegionGraph& m, std::int64_t budget) {
  const std::size_t n = m.size();
  std::vector<std::vector<bool>> tries{std::vector<bool>(n, false), std::vector<bool>(n, true)};
  for (std::size_t parity : {0, 1}) {
    std::vector<bool> c(n);
    for (std::size_t b = 0; b < n; ++b) c[b] = b % 2 == parity;
    tries.push_back(c);
  }
  std::vector<double> best;
  double best_cost = 0;
  for (const auto& c : tries) {
    if (m.peak(c) > budget) continue;
    const double cost = m.total_cost(c);
    if (best.empty() || cost < best_cost) {
      best.assign(c.begin(), c.end());
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace

MilpSolution solve_checkpoint_milp(const CheckpointRegionGraph& m, std::int64_t budget, double time_limit_s,
                                   std::int64_t node_limit) {
  const std::size_t n = m.size();
  double max_cost = 0;
  for (double c : m.cost) max_cost = std::max(max_cost, c);
  const double scale = max_cost > 0 ? 1.0 / max_cost : 1.0;  // objective coefficients in (0, 1]
  Program lp;
  const MemoryRows mem = build_memory(m, lp, scale);
  // Peak rows, the same set of terms once (with the smallest right-hand side).
  std::map<std::pair<int, std::vector<std::pair<int, double>>>, double> peak_rows;
  for (std::size_t p = 0; p < m.present_if.size(); ++p) {
    std::vector<std::pair<int, double>> terms(mem.terms[p].begin(), mem.terms[p].end());
    double most = static_cast<double>(mem.constant[p]);
    for (const auto& [c, v] : terms) most += v;
    if (most <= static_cast<double>(budget)) continue;  // cannot be exceeded
    const double rhs = static_cast<double>(budget - mem.constant[p]);
    if (terms.empty() && m.present_if[p] < 0) {  // over the budget whatever the choice
      MilpSolution none;
      none.infeasible = true;
      return none;
    }
    const auto key = std::pair{m.present_if[p], std::move(terms)};
    const auto it = peak_rows.find(key);
    if (it == peak_rows.end() || rhs < it->second) peak_rows[key] = rhs;
  }
  for (const auto& [key, rhs] : peak_rows) {
    std::map<int, double> row(key.second.begin(), key.second.end());
    double r = rhs;
    if (key.first >= 0) {  // only when block x is checkpointed: + M c_x <= rhs + M
      double most = -rhs;
      for (const auto& [c, v] : key.second) most += v;
      row[key.first] += most;
      r += most;
    }
    lp.row({row.begin(), row.end()}, r);
  }
  MilpSolution out;
  out.variables = lp.lb.size();
  out.rows = lp.rows.size();
  const std::vector<double> start = start_choice(m, budget);
  Solved s = solve(lp, start, time_limit_s, node_limit);
  // Stopped before CBC took the start as its incumbent: the start is still a choice within the budget.
  if (s.x.empty() && !s.infeasible && !start.empty()) s.x = start;
  out.seconds = s.seconds;
  out.nodes = s.nodes;
  out.optimal = s.optimal && !s.x.empty();
  out.infeasible = s.infeasible && s.x.empty();
  out.time_limit = !out.optimal && !out.infeasible && s.time_limit;
  out.node_limit = !out.optimal && !out.infeasible && s.node_limit;
  out.bound = std::isfinite(s.bound) ? std::max(0.0, s.bound / scale) : 0;
  if (!s.x.empty()) {
    out.checkpointed = choice_of(s, n);
    out.peak = m.peak(*out.checkpointed);
    out.cost = m.total_cost(*out.checkpointed);
    out.bound = out.optimal ? out.cost : std::min(out.bound, out.cost);
    out.gap = out.optimal || out.cost <= 0 ? 0 : (out.cost - out.bound) / out.cost;
    // Stopped at a limit with the bound already at the choice's cost (CBC's root often closes the gap before
    // its node limit is checked): the bound proves the choice optimal. 1e-9: CBC's bound is a float of the
    // objective scaled to at most 1 per block.
    if (!out.optimal && out.gap <= 1e-9) {
      out.optimal = true;
      out.time_limit = out.node_limit = false;
      out.bound = out.cost;
      out.gap = 0;
    }
  }
  return out;
}

MilpSolution min_peak_milp(const CheckpointRegionGraph& m, double time_limit_s, std::int64_t node_limit) {
  const std::size_t n = m.size();
  Program lp;
  const MemoryRows mem = build_memory(m, lp, 0);
  const int peak = lp.column(0, 1e300, 1, false);
  for (std::size_t p = 0; p < m.present_if.size(); ++p) {
    // sum terms + constant_p - M (1 - c_x) <= peak
    std::map<int, double> row = mem.terms[p];
    double r = -static_cast<double>(mem.constant[p]);
    if (m.present_if[p] >= 0) {
      double most = static_cast<double>(mem.constant[p]);
      for (const auto& [c, v] : mem.terms[p]) most += v;
      row[m.present_if[p]] += most;
      r += most;
    }
    row[peak] = -1;
    lp.row({row.begin(), row.end()}, r);
  }
  MilpSolution out;
  out.variables = lp.lb.size();
  out.rows = lp.rows.size();
  const Solved s = solve(lp, {}, time_limit_s, node_limit);
  out.seconds = s.seconds;
  out.nodes = s.nodes;
  out.optimal = s.optimal && !s.x.empty();
  out.time_limit = !out.optimal && s.time_limit;
  out.node_limit = !out.optimal && s.node_limit;
  if (!s.x.empty()) {
    out.checkpointed = choice_of(s, n);
    out.peak = m.peak(*out.checkpointed);
    out.cost = m.total_cost(*out.checkpointed);
  }
  out.bound = s.bound;
  return out;
}

std::vector<CheckpointRegion> milp_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                           const CheckpointSolver& solver, const RecomputeCost& cost,
                                           const GraphFinish& finish, CheckpointSolve* solve) {
  const CheckpointRegionGraph model = checkpoint_region_graph(graph, cost, finish, policy.semantics);
  const MilpSolution s = solve_checkpoint_milp(model, policy.budget, solver.time_limit_s, solver.node_limit);
  const std::string what = "checkpoint MILP (" + std::to_string(model.size()) + " blocks, " +
                           std::to_string(s.variables) + " variables, " + std::to_string(s.rows) + " rows)";
  const std::string limits = "time_limit_s = " + format_number(solver.time_limit_s) +
                             (solver.node_limit >= 0 ? ", node_limit = " + std::to_string(solver.node_limit) : "");
  if (!s.checkpointed) {
    if (s.infeasible) {
      const MilpSolution least = min_peak_milp(model, solver.time_limit_s, solver.node_limit);
      throw UserError(policy.where,
                      "checkpoint budget " + std::to_string(policy.budget) +
                          " B is below the smallest backward activation peak any choice of the " +
                          std::to_string(model.size()) + " blocks of " + graph->name() + " reaches (" +
                          (least.optimal ? std::to_string(least.peak) + " B)"
                                         : "at least " + format_number(std::ceil(least.bound)) + " B; " +
                                               std::to_string(least.peak) + " B found within the limits)"));
    }
    throw UserError(solver.where, what + " found no choice within " + limits + " (lower bound on the cost " +
                                      format_number(s.bound) + "): raise the limit");
  }
  const char* stopped = s.node_limit ? "node_limit" : "time_limit";
  if (s.optimal) {
    spdlog::info("{}: optimal in {:.3f} s ({} nodes), cost {}, peak {} B", what, s.seconds, s.nodes,
                 format_number(s.cost), s.peak);
  } else {
    spdlog::warn("{} stopped at {} = {}: the best choice found costs {} (peak {} B), the lower bound is {}: gap "
                 "{:.2f} % (a choice within the budget, not proven the cheapest)",
                 what, s.node_limit ? "node_limit" : "time_limit_s", s.node_limit ? std::to_string(solver.node_limit) : format_number(solver.time_limit_s) + " s",
                 format_number(s.cost), s.peak, format_number(s.bound), 100 * s.gap);
  }
  if (solve) {
    CheckpointSolve& o = *solve;
    o = CheckpointSolve{};
    o.solver = "milp";
    o.status = s.optimal ? "optimal" : stopped;
    o.cost = policy.cost;
    o.budget = policy.budget;
    o.objective = s.cost;
    o.best_bound = s.bound;
    o.gap = s.gap;
    o.peak = s.peak;
    o.blocks = model.size();
    for (std::size_t b = 0; b < model.size(); ++b) {
      if ((*s.checkpointed)[b]) o.checkpointed.push_back(model.names[b]);
    }
    o.time_limit_s = solver.time_limit_s;
    o.node_limit = solver.node_limit;
    o.nodes = s.nodes;
    o.variables = s.variables;
    o.rows = s.rows;
    o.seconds = s.seconds;
  }
  return model.regions_of(*s.checkpointed);
}

}  // namespace monet
