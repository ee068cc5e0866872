// LOMA temporal mapping search (section 5): loop prime factors, their orderings, memory allocation.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <set>

#include "allocator.hpp"
#include "mapping_evaluator.hpp"
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

/// FNV-1a style over four independent lanes (a signature has ~100 words; one chain of multiplies is slow).
struct SignatureHash {
  std::size_t operator()(const std::vector<std::uint64_t>& v) const {
    std::uint64_t h[4] = {0xcbf29ce484222325ULL, 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL};
    std::size_t i = 0;
    for (; i + 4 <= v.size(); i += 4) {
      for (std::size_t k = 0; k < 4; ++k) h[k] = (h[k] ^ v[i + k]) * 0x100000001b3ULL;
    }
    for (; i < v.size(); ++i) h[0] = (h[0] ^ v[i]) * 0x100000001b3ULL;
    const std::uint64_t x = h[0] ^ (h[1] * 31) ^ (h[2] * 131) ^ (h[3] * 1313);
    return static_cast<std::size_t>(x ^ (x >> 29));
  }
};

/// The best of the mappings it is shown, in enumeration order; ties keep the earlier one (ZigZag's rule).
/// In the pruned search, a mapping whose stage-1 signature equals an earlier one's gets the same numbers, so it
/// cannot be strictly better than the best so far (better() is a strict weak order) and is not finished; the
/// text of the winner is written once at the end.
class Incumbent {
 public:
  Incumbent(const Layer& L, const Hierarchy& h, const Spatial& sp, const Options& options, std::int64_t* evaluated,
            std::string* why)
      : L_(L), h_(h), sp_(sp), options_(options), evaluated_(evaluated), why_(why), allocator_(L, h, sp),
        evaluator_(L, h, sp, options) {}

  /// The score of the ordering's mapping; nullopt when it does not fit.
  /// `weight`: the orderings this one stands for (itself and its mirror image) in the count of mappings.
  std::optional<Score> consider(const Nest& ordering, int weight = 1) {
    const Temporal* tm = allocator_.allocate(ordering, why_);
    if (!tm) return std::nullopt;
    *evaluated_ += weight;
    if (options_.search == Search::exhaustive) {  // every mapping in full, as ZigZag does
      Evaluation ev = evaluate(L_, h_, sp_, *tm, options_);
      const Score score{ev.rank, ev.energy, ev.latency};
      if (!best_ || better(ev, *best_, options_.objective)) best_ = std::move(ev);
      return score;
    }
    evaluator_.analyse(*tm);
    const auto [it, fresh] = seen_.try_emplace(evaluator_.signature());
    if (!fresh) return it->second;
    Evaluation ev = evaluator_.finish();
    it->second = Score{ev.rank, ev.energy, ev.latency};
    if (!best_ || better(ev, *best_, options_.objective)) {
      best_ = std::move(ev);
      best_tm_ = *tm;
    }
    return it->second;
  }

  std::optional<Evaluation> result() {
    if (best_ && options_.search != Search::exhaustive) {
      evaluator_.analyse(best_tm_);
      best_->temporal_text = evaluator_.temporal_text();
    }
    return std::move(best_);
  }

 private:
  const Layer& L_;
  const Hierarchy& h_;
  const Spatial& sp_;
  const Options& options_;
  std::int64_t* evaluated_;
  std::string* why_;
  MemoryAllocator allocator_;
  MappingEvaluator evaluator_;
  std::unordered_map<std::vector<std::uint64_t>, Score, SignatureHash> seen_;  // signature -> its numbers
  std::optional<Evaluation> best_;
  Temporal best_tm_;
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
      Nest ordering;
      for (const auto& [d, size] : given) {
        if (size > 1) ordering.push_back(Loop{d, static_cast<double>(size)});
      }
      if (ordering.empty()) ordering.push_back(Loop{0, 1});
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
  std::vector<Lpf> pool = fixed;
  for (std::size_t d = 0; d < lpfs.size(); ++d) {
    for (std::int64_t s : lpfs[d]) pool.push_back(Lpf{static_cast<int>(d), s});
  }
  if (pool.empty()) {
    (void)any;
    best.consider(Nest{Loop{0, 1}});
    return best.result();
  }
  std::sort(pool.begin(), pool.end());
  Nest ordering;
  auto to_ordering = [&] {
    ordering.clear();
    for (const Lpf& p : pool) ordering.push_back(Loop{p.dim, static_cast<double>(p.size)});
  };
  static const std::size_t depth = getenv("LN_DEPTH") ? std::stoul(getenv("LN_DEPTH")) : 2;
  static const bool sideways = getenv("LN_SIDE") != nullptr;
  static const std::size_t starts = getenv("LN_STARTS") ? std::stoul(getenv("LN_STARTS")) : 2;
  if (options.search == Search::fast && constraints.empty() && pool.size() > depth) {
    // Stage 1: each distinct choice of the innermost `depth` loops, the others in ascending order.
    const auto tail = pool.begin() + static_cast<std::ptrdiff_t>(depth);
    std::vector<std::pair<Score, std::vector<Lpf>>> seeds;
    do {
      to_ordering();
      if (auto s = best.consider(ordering)) seeds.emplace_back(*s, pool);
      std::sort(tail, pool.end(), [](const Lpf& a, const Lpf& b) { return b < a; });  // on to the next prefix
    } while (std::next_permutation(pool.begin(), pool.end()));
    std::stable_sort(seeds.begin(), seeds.end(),
                     [&](const auto& a, const auto& b) { return better(a.first, b.first, options.objective); });
    // Stage 2: from the best seeds, move one loop to another position while that improves the mapping.
    for (std::size_t k = 0; k < seeds.size() && k < starts; ++k) {
      std::vector<Lpf> current = seeds[k].second;
      std::set<std::vector<Lpf>> visited{current};
      Score score = seeds[k].first;
      bool improved = true;
      while (improved) {
        improved = false;
        for (std::size_t i = 0; i < current.size() && !improved; ++i) {
          for (std::size_t j = 0; j < current.size() && !improved; ++j) {
            if (i == j) continue;
            pool = current;
            const Lpf moved = pool[i];
            pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(i));
            pool.insert(pool.begin() + static_cast<std::ptrdiff_t>(j), moved);
            if (pool == current) continue;
            if (sideways && !visited.insert(pool).second) continue;
            to_ordering();
            const auto s = best.consider(ordering);
            if (s && (better(*s, score, options.objective) || (sideways && !better(score, *s, options.objective)))) {
              current = pool;
              score = *s;
              improved = true;
            }
          }
        }
      }
    }
    return best.result();
  }
  // The pruned search costs one ordering of each mirror pair: the one enumerated first (symmetry.hpp).
  std::vector<int> mirror;
  if (options.search == Search::pruned && constraints.empty()) mirror = find_mirror(L, sp);
  std::vector<Lpf> image;
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
    to_ordering();
    best.consider(ordering, weight);
  } while (std::next_permutation(pool.begin(), pool.end()));
  return best.result();
}

}  // namespace monet::loopnest
