// The best mapping of a temporal search, with signature deduplication (incumbent.hpp).
#include "incumbent.hpp"

namespace monet::loopnest {

/// FNV-1a style over four independent lanes (a signature has ~100 words; one chain of multiplies is slow).
std::size_t Incumbent::SignatureHash::operator()(const std::vector<std::uint64_t>& v) const {
  std::uint64_t h[4] = {0xcbf29ce484222325ULL, 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL};
  std::size_t i = 0;
  for (; i + 4 <= v.size(); i += 4) {
    for (std::size_t k = 0; k < 4; ++k) h[k] = (h[k] ^ v[i + k]) * 0x100000001b3ULL;
  }
  for (; i < v.size(); ++i) h[0] = (h[0] ^ v[i]) * 0x100000001b3ULL;
  const std::uint64_t x = h[0] ^ (h[1] * 31) ^ (h[2] * 131) ^ (h[3] * 1313);
  return static_cast<std::size_t>(x ^ (x >> 29));
}

Incumbent::Incumbent(const Layer& L, const Hierarchy& h, const Spatial& sp, const Options& options,
                     std::int64_t* evaluated, std::string* why)
    : L_(L), h_(h), sp_(sp), options_(options), evaluated_(evaluated), why_(why), allocator_(L, h, sp, !options.zigzag_compat),
      evaluator_(L, h, sp, options) {}

std::optional<Score> Incumbent::consider(const Ordering& ordering, int weight) {
  nest_.clear();
  for (const Lpf& p : ordering) nest_.push_back(Loop{p.dim, static_cast<double>(p.size)});
  const Temporal* tm = allocator_.allocate(nest_, why_);
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
  const Evaluation& ev = evaluator_.finish();
  it->second = Score{ev.rank, ev.energy, ev.latency};
  if (!best_ || better(ev, *best_, options_.objective)) {
    best_ = ev;
    best_tm_ = *tm;
  }
  return it->second;
}

std::optional<Evaluation> Incumbent::result() {
  if (best_ && options_.search != Search::exhaustive) {
    evaluator_.analyse(best_tm_);
    best_->temporal_text = evaluator_.temporal_text();
  }
  return std::move(best_);
}

}  // namespace monet::loopnest
