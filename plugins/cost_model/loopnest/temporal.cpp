// LOMA temporal mapping search (section 5): loop prime factors and their orderings, in the mode `search` asks
// for (docs/cost-models.md, "Search modes"); allocator.cpp allocates an ordering, incumbent.cpp keeps the best.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "incumbent.hpp"
#include "symmetry.hpp"

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

struct Constraint {
  bool from_outer = false;
  std::size_t position = 0;
  int dim = -1;          // -1: any
  std::int64_t size = 0;  // 0: any
};

/// ZigZag's LOMA order of the orderings (multipermute.py: Williams' loopless multiset permutations by prefix
/// shifts, from the loop prime factors in decreasing (dim name, size) order), for Stream's first-of-equals choice.
template <class Visit>
void zigzag_permutations(const Layer& L, Ordering items, Visit visit) {
  auto less = [&](const Lpf& a, const Lpf& b) {
    const std::string& x = L.dims[static_cast<std::size_t>(a.dim)];
    const std::string& y = L.dims[static_cast<std::size_t>(b.dim)];
    return x < y || (x == y && a.size < b.size);
  };
  std::sort(items.begin(), items.end(), less);
  const int n = static_cast<int>(items.size());
  std::vector<int> next(items.size());
  for (int k = 0; k < n; ++k) next[static_cast<std::size_t>(k)] = k - 1;  // node k holds items[k]; head: the largest
  auto nth = [&](int from, int steps) {
    for (int s = 0; s < steps && next[static_cast<std::size_t>(from)] >= 0; ++s) from = next[static_cast<std::size_t>(from)];
    return from;
  };
  auto at = [&](int k) -> const Lpf& { return items[static_cast<std::size_t>(k)]; };
  Ordering out(items.size());
  auto emit = [&](int head) {
    for (std::size_t k = 0; head >= 0; head = next[static_cast<std::size_t>(head)]) out[k++] = at(head);
    visit(out);
  };
  int h = n - 1;
  int i = nth(h, n - 2);
  int j = nth(h, n - 1);
  emit(h);
  while (next[static_cast<std::size_t>(j)] >= 0 || less(at(j), at(h))) {
    const int jn = next[static_cast<std::size_t>(j)];
    const int s = (jn >= 0 && !less(at(i), at(jn))) ? j : i;
    const int t = next[static_cast<std::size_t>(s)];
    next[static_cast<std::size_t>(s)] = next[static_cast<std::size_t>(t)];
    next[static_cast<std::size_t>(t)] = h;
    if (less(at(t), at(h))) i = t;
    j = next[static_cast<std::size_t>(i)];
    h = t;
    emit(h);
  }
}

}  // namespace

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
  Incumbent best(L, h, sp, options, evaluated, why);
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
      Ordering ordering;
      for (const auto& [d, size] : given) {
        if (size > 1) ordering.push_back(Lpf{d, size});
      }
      if (ordering.empty()) ordering.push_back(Lpf{0, 1});
      best.consider(ordering);
      return best.result();
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
  Ordering pool = fixed;
  for (std::size_t d = 0; d < lpfs.size(); ++d) {
    for (std::int64_t s : lpfs[d]) pool.push_back(Lpf{static_cast<int>(d), s});
  }
  if (pool.empty()) {
    (void)any;
    best.consider(Ordering{Lpf{0, 1}});
    return best.result();
  }
  std::sort(pool.begin(), pool.end());
  if (options.search == Search::fast && constraints.empty()) {
    search_fast(pool, best);
    return best.result();
  }
  // The pruned search costs one ordering of each mirror pair: the one enumerated first (symmetry.hpp). Stream's
  // objective keeps the first of equal mappings in ZigZag's order, which a mirror image may precede.
  std::vector<int> mirror;
  if (options.search != Search::exhaustive && constraints.empty() && !options.stream_mapping_objective) {
    mirror = find_mirror(L, sp);
  }
  Ordering image;
  auto reflect = [&] {
    image = pool;
    for (Lpf& p : image) p.dim = mirror[static_cast<std::size_t>(p.dim)];
  };
  if (!mirror.empty()) {  // the loop prime factors must map onto themselves too
    reflect();
    std::sort(image.begin(), image.end());
    if (image != pool) mirror.clear();
  }
  auto try_ordering = [&](const Ordering& ordering) {
    for (const Constraint& c : constraints) {
      if (c.position >= ordering.size()) return;
      const Lpf& at = ordering[c.from_outer ? ordering.size() - 1 - c.position : c.position];
      if ((c.dim >= 0 && at.dim != c.dim) || (c.size > 1 && at.size != c.size)) return;
    }
    int weight = 1;
    if (!mirror.empty()) {
      image = ordering;
      for (Lpf& p : image) p.dim = mirror[static_cast<std::size_t>(p.dim)];
      if (std::lexicographical_compare(image.begin(), image.end(), ordering.begin(), ordering.end())) return;
      if (image != ordering) weight = 2;
    }
    best.consider(ordering, weight);
  };
  if (options.stream_mapping_objective) {
    zigzag_permutations(L, pool, try_ordering);
    return best.result();
  }
  do {
    try_ordering(pool);
  } while (std::next_permutation(pool.begin(), pool.end()));
  return best.result();
}

}  // namespace monet::loopnest
