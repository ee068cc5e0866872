// The approximate temporal search (`search = "fast"`). LOMA's full enumeration costs n!/∏mult! orderings
// (5,040 for a convolution's seven loops); this one costs about 2·n·(n−1) seed orderings plus a hill climb:
//  1. seeds: every choice of the two innermost loops — the ones the smallest memories keep — with the others in
//     ascending and in descending order;
//  2. from the three best seeds of distinct score, move one loop to another position while that improves the
//     mapping (first improvement).
// Deterministic, and an approximation: its measured error is in docs/cost-models.md.
#include <algorithm>

#include "incumbent.hpp"

namespace monet::loopnest {

namespace {

constexpr std::size_t kSeedDepth = 2;  // innermost positions enumerated in full
constexpr std::size_t kClimbs = 3;     // seeds of distinct score the hill climb starts from

}  // namespace

void search_fast(Ordering pool, Incumbent& incumbent) {
  const std::string& objective = incumbent.options().objective;
  auto by_score = [&](const auto& a, const auto& b) { return better(a.first, b.first, objective); };
  std::vector<std::pair<Score, Ordering>> seeds;
  if (pool.size() <= kSeedDepth + 1) {  // few orderings: all of them
    do {
      incumbent.consider(pool);
    } while (std::next_permutation(pool.begin(), pool.end()));
    return;
  }
  const auto tail = pool.begin() + static_cast<std::ptrdiff_t>(kSeedDepth);
  do {  // pool's tail is ascending here
    if (auto s = incumbent.consider(pool)) seeds.emplace_back(*s, pool);
    std::sort(tail, pool.end(), [](const Lpf& a, const Lpf& b) { return b < a; });
    if (auto s = incumbent.consider(pool)) seeds.emplace_back(*s, pool);
  } while (std::next_permutation(pool.begin(), pool.end()));  // descending tail: on to the next prefix
  std::stable_sort(seeds.begin(), seeds.end(), by_score);
  std::vector<std::pair<Score, Ordering>> starts;
  for (auto& seed : seeds) {
    if (starts.size() == kClimbs) break;
    if (starts.empty() || better(starts.back().first, seed.first, objective)) starts.push_back(std::move(seed));
  }
  Ordering candidate;
  for (auto& [score, current] : starts) {
    bool improved = true;
    while (improved) {
      improved = false;
      for (std::size_t i = 0; i < current.size() && !improved; ++i) {
        for (std::size_t j = 0; j < current.size() && !improved; ++j) {
          if (i == j) continue;
          candidate = current;
          const Lpf moved = candidate[i];
          candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(i));
          candidate.insert(candidate.begin() + static_cast<std::ptrdiff_t>(j), moved);
          if (candidate == current) continue;
          const auto s = incumbent.consider(candidate);
          if (s && better(*s, score, objective)) {
            current = candidate;
            score = *s;
            improved = true;
          }
        }
      }
    }
  }
}

}  // namespace monet::loopnest
