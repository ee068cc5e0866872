// LOMA temporal mapping search (section 5): loop prime factors, their orderings, memory allocation.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model.hpp"

namespace monet::loopnest {

namespace {

std::vector<std::int64_t> prime_factors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) out.push_back(n);
  return out;
}

struct Lpf {
  int dim = 0;
  std::int64_t size = 1;
  bool operator<(const Lpf& o) const { return dim != o.dim ? dim < o.dim : size < o.size; }
  bool operator==(const Lpf& o) const { return dim == o.dim && size == o.size; }
};

struct Constraint {
  bool from_outer = false;
  std::size_t position = 0;
  int dim = -1;          // -1: any
  std::int64_t size = 0;  // 0: any
};

double pr_size(double A, std::int64_t sa, double B, std::int64_t sb) {
  const std::int64_t g = std::gcd(sa, sb);
  return A * B - std::max(0.0, B - static_cast<double>(sa / g)) * (A - static_cast<double>(sb / g));
}

/// Bits of an operand's tile covered by a set of loops (5.4).
double tensor_bits(const Layer& L, const LayerOperand& op, const Nest& loops, double precision) {
  if (precision <= 0) return 0;
  std::vector<double> f(L.dims.size(), 1.0);
  for (const Loop& l : loops) {
    if (l.dim < L.ndims()) f[static_cast<std::size_t>(l.dim)] *= l.size;
  }
  double elems = 1;
  for (std::size_t d = 0; d < L.dims.size(); ++d) {
    if (op.rel[d] == Rel::relevant) elems *= f[d];
  }
  for (int k : op.relations) {
    const Relation& r = L.relations[static_cast<std::size_t>(k)];
    const double A = std::trunc(f[static_cast<std::size_t>(r.a)]);
    const double B = std::trunc(f[static_cast<std::size_t>(r.b)]);
    elems *= std::min(r.limit, pr_size(A, r.ca, B, r.cb));
  }
  return elems * precision;
}

/// The memory allocator (5.4): per memory bottom-up, how many of the remaining loops each operand keeps.
/// Why orderings fail, for the error message when none fits (the first reason seen).
void note(std::string* why, const std::string& reason) {
  if (why && why->empty()) *why = reason;
}

std::optional<Temporal> allocate(const Layer& L, const Hierarchy& h, const Spatial& sp, const Nest& ordering,
                                 std::string* why) {
  const Core& core = *h.core;
  const std::size_t nops = L.ops.size();
  std::vector<Nest> allocated(nops);
  std::vector<Nest> unallocated(nops, ordering);
  Temporal tm(nops);
  for (std::size_t o = 0; o < nops; ++o) allocated[o] = sp.frac[o][0];
  for (std::size_t mi = 0; mi < core.memories.size(); ++mi) {
    const MemoryLevel& mem = core.memories[mi];
    // The layer operands this memory holds, in the memory's operand order.
    std::vector<std::size_t> here;
    for (OperandSlot s : h.operands_at(static_cast<int>(mi))) {
      for (std::size_t o = 0; o < nops; ++o) {
        if (L.ops[o].slot == static_cast<int>(s)) here.push_back(o);
      }
    }
    if (here.empty()) continue;
    struct Option {
      std::size_t i;
      double bits;
    };
    std::vector<std::vector<Option>> options(here.size());
    std::vector<bool> top(here.size());
    for (std::size_t k = 0; k < here.size(); ++k) {
      const std::size_t o = here[k];
      const LayerOperand& op = L.ops[o];
      const int level = h.level_of(op.slot, static_cast<int>(mi));
      const int levels = static_cast<int>(h.levels[op.slot].size());
      top[k] = level == levels - 1;
      double precision = op.precision;
      if (op.output) {
        // Partial sums while an irrelevant loop is still outside (temporal, or spatial above this level).
        bool partial = false;
        for (const Loop& l : unallocated[o]) partial |= l.dim < L.ndims() && op.rel[static_cast<std::size_t>(l.dim)] == Rel::irrelevant;
        for (std::size_t e = static_cast<std::size_t>(level) + 1; e < sp.frac[o].size(); ++e) {
          for (const Loop& l : sp.frac[o][e]) partial |= op.rel[static_cast<std::size_t>(l.dim)] == Rel::irrelevant && l.size > 1;
        }
        precision = partial ? op.precision : op.precision_final;
      }
      Nest loops = allocated[o];
      const double capacity = static_cast<double>(mem.size_bits);
      for (std::size_t i = 0; i <= unallocated[o].size(); ++i) {
        if (i > 0) loops.push_back(unallocated[o][i - 1]);
        const double bits = tensor_bits(L, op, loops, precision);
        if (bits > capacity) break;
        options[k].push_back(Option{i, bits});
      }
      if (options[k].empty()) {  // even nothing fits: memory too small
        note(why, "memory '" + mem.name + "' (" + std::to_string(mem.size_bits) + " bits) cannot hold operand " +
                      std::string(1, op.name) + " at " + std::to_string(static_cast<int>(precision)) +
                      " bits per element with what the spatial mapping puts below it");
        return std::nullopt;
      }
      if (top[k]) {
        if (options[k].back().i != unallocated[o].size()) {  // hierarchy too small
          note(why, "memory '" + mem.name + "' (" + std::to_string(mem.size_bits) + " bits), the top level of operand " +
                        std::string(1, op.name) + ", cannot hold all of it");
          return std::nullopt;
        }
        options[k] = {options[k].back()};
      }
    }
    // Joint choice over the cartesian product; the cheapest, ties to the last combination.
    std::vector<std::size_t> idx(here.size(), 0);
    std::vector<std::size_t> best;
    double best_cost = 0;
    const double capacity = static_cast<double>(mem.size_bits);
    while (true) {
      double total = 0;
      double cost = 0;
      for (std::size_t k = 0; k < here.size(); ++k) {
        const Option& opt = options[k][idx[k]];
        total += opt.bits;
        if (!top[k]) {
          double above = 1;
          const Nest& un = unallocated[here[k]];
          for (std::size_t j = opt.i; j < un.size(); ++j) above *= un[j].size;
          cost += above * opt.bits;
        }
      }
      if (total <= capacity && (best.empty() || cost <= best_cost)) {
        best = idx;
        best_cost = cost;
      }
      if (!next_index(idx, [&](std::size_t k) { return options[k].size(); })) break;
    }
    if (best.empty()) {
      note(why, "memory '" + mem.name + "' cannot hold its operands together");
      return std::nullopt;
    }
    for (std::size_t k = 0; k < here.size(); ++k) {
      const std::size_t o = here[k];
      const std::size_t i = options[k][best[k]].i;
      Nest level(unallocated[o].begin(), unallocated[o].begin() + static_cast<std::ptrdiff_t>(i));
      unallocated[o].erase(unallocated[o].begin(), unallocated[o].begin() + static_cast<std::ptrdiff_t>(i));
      allocated[o].insert(allocated[o].end(), level.begin(), level.end());
      const int lv = h.level_of(L.ops[o].slot, static_cast<int>(mi));
      const auto next = static_cast<std::size_t>(lv) + 1;
      if (next < sp.frac[o].size()) allocated[o].insert(allocated[o].end(), sp.frac[o][next].begin(), sp.frac[o][next].end());
      tm[o].push_back(std::move(level));
    }
  }
  for (std::size_t o = 0; o < nops; ++o) {
    if (!unallocated[o].empty()) return std::nullopt;
    if (tm[o].size() != h.levels[L.ops[o].slot].size()) return std::nullopt;
  }
  return tm;
}

}  // namespace

OperandTraffic layer_operand_bits(const Layer& L) {
  OperandTraffic t;
  Nest all;
  for (std::size_t d = 0; d < L.dims.size(); ++d) all.push_back(Loop{static_cast<int>(d), static_cast<double>(L.size[d])});
  for (const LayerOperand& op : L.ops) {
    t.bits[op.slot] += static_cast<std::int64_t>(tensor_bits(L, op, all, op.precision));
  }
  return t;
}

std::optional<Evaluation> search_temporal(const Layer& L, const Hierarchy& h, const Spatial& sp,
                                          const MappingEntry* entry, const Options& options, std::int64_t* evaluated,
                                          std::string* why) {
  // Temporal loops (5.1).
  std::vector<std::int64_t> count(L.dims.size(), 1);
  bool any = false;
  for (std::size_t d = 0; d < L.dims.size(); ++d) {
    count[d] = static_cast<std::int64_t>(std::llround(sp.temporal[d]));
    any |= count[d] > 1;
  }
  // Constraints from the mapping's temporal ordering (innermost first; after ["*", "*"] from the outermost).
  std::vector<std::pair<int, std::int64_t>> given;
  bool has_star = false;
  if (entry) {
    for (const auto& [name, size] : entry->temporal_ordering) {
      if (name == "*") {
        has_star = true;
        given.emplace_back(-2, 0);
        continue;
      }
      const int d = L.dim(name);
      if (d < 0) continue;  // not a dim of this layer
      given.emplace_back(d, size);
    }
  }
  auto run = [&](const Nest& ordering, std::optional<Evaluation>& best) {
    auto tm = allocate(L, h, sp, ordering, why);
    if (!tm) return;
    ++*evaluated;
    Evaluation ev = evaluate(L, h, sp, *tm, options);
    if (!best || better(ev, *best, options.objective)) best = std::move(ev);
  };
  std::optional<Evaluation> best;
  // A complete ordering with every size given is used as is.
  if (!given.empty() && !has_star) {
    bool complete = true;
    std::vector<std::int64_t> prod(L.dims.size(), 1);
    for (const auto& [d, size] : given) {
      if (size <= 0) complete = false;
      else prod[static_cast<std::size_t>(d)] *= size;
    }
    for (std::size_t d = 0; d < L.dims.size() && complete; ++d) complete = prod[d] == count[d];
    if (complete) {
      Nest ordering;
      for (const auto& [d, size] : given) {
        if (size > 1) ordering.push_back(Loop{d, static_cast<double>(size)});
      }
      if (ordering.empty()) ordering.push_back(Loop{0, 1});
      run(ordering, best);
      return best;
    }
  }
  std::vector<Constraint> constraints;
  for (std::size_t i = 0, star = given.size(); i < given.size(); ++i) {
    if (given[i].first == -2) {
      star = i;
      continue;
    }
    Constraint c;
    c.dim = given[i].first;
    c.size = given[i].second;
    if (i > star) {
      c.from_outer = true;
      c.position = given.size() - 1 - i;
    } else {
      c.position = i;
    }
    constraints.push_back(c);
  }
  // Loop prime factors; fixed sizes of constraints are split out first and never merged.
  std::vector<Lpf> fixed;
  for (const Constraint& c : constraints) {
    if (c.size > 1 && count[static_cast<std::size_t>(c.dim)] % c.size == 0) {
      fixed.push_back(Lpf{c.dim, c.size});
      count[static_cast<std::size_t>(c.dim)] /= c.size;
    }
  }
  std::vector<std::vector<std::int64_t>> lpfs(L.dims.size());
  std::size_t total = fixed.size();
  int temporal_dims = 0;
  for (std::size_t d = 0; d < L.dims.size(); ++d) {
    if (count[d] > 1) {
      lpfs[d] = prime_factors(count[d]);
      total += lpfs[d].size();
      ++temporal_dims;
    }
  }
  const std::size_t limit = static_cast<std::size_t>(std::max(options.lpf_limit, temporal_dims));
  while (total > limit) {
    std::size_t most = 0;
    for (std::size_t d = 1; d < lpfs.size(); ++d) {
      if (lpfs[d].size() > lpfs[most].size()) most = d;
    }
    if (lpfs[most].size() < 2) break;
    auto& f = lpfs[most];
    std::sort(f.begin(), f.end());
    const std::int64_t merged = f[0] * f[1];
    f.erase(f.begin(), f.begin() + 2);
    f.insert(std::upper_bound(f.begin(), f.end(), merged), merged);
    --total;
  }
  std::vector<Lpf> pool = fixed;
  for (std::size_t d = 0; d < lpfs.size(); ++d) {
    for (std::int64_t s : lpfs[d]) pool.push_back(Lpf{static_cast<int>(d), s});
  }
  if (pool.empty()) {
    (void)any;
    run(Nest{Loop{0, 1}}, best);
    return best;
  }
  std::sort(pool.begin(), pool.end());
  do {
    bool ok = true;
    for (const Constraint& c : constraints) {
      if (c.position >= pool.size()) {
        ok = false;
        break;
      }
      const Lpf& at = pool[c.from_outer ? pool.size() - 1 - c.position : c.position];
      if ((c.dim >= 0 && at.dim != c.dim) || (c.size > 1 && at.size != c.size)) ok = false;
    }
    if (!ok) continue;
    Nest ordering;
    for (const Lpf& p : pool) ordering.push_back(Loop{p.dim, static_cast<double>(p.size)});
    run(ordering, best);
  } while (std::next_permutation(pool.begin(), pool.end()));
  return best;
}

}  // namespace monet::loopnest
