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
  // The pruned search costs one ordering of each mirror pair: the one enumerated first (symmetry.hpp).
  std::vector<int> mirror;
  if (options.search != Search::exhaustive && constraints.empty()) mirror = find_mirror(L, sp);
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
    int weight = 1;
    if (!mirror.empty()) {
      reflect();
      if (std::lexicographical_compare(image.begin(), image.end(), pool.begin(), pool.end())) continue;
      if (image != pool) weight = 2;
    }
    best.consider(pool, weight);
  } while (std::next_permutation(pool.begin(), pool.end()));
  return best.result();
}

}  // namespace monet::loopnest
