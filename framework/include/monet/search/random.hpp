#pragma once
// A small, portable random generator for search plugins: splitmix64-seeded xoshiro256** with its own
// uniform integer and real draws, so a seed gives the same sequence with any standard library, compiler or
// thread count (the distributions of <random> are implementation-defined).
#include <cstdint>

#include "monet/util/export.hpp"

namespace monet {

/// splitmix64 step: a good 64-bit mix, also to derive independent seeds (e.g. per evaluation or chain).
MONET_API std::uint64_t splitmix64(std::uint64_t& state);
/// A seed for stream `stream` of a search seeded with `seed` (independent streams for chains, islands, ...).
MONET_API std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream);

class MONET_API Random {
 public:
  explicit Random(std::uint64_t seed);
  std::uint64_t next();                      // 64 random bits
  double uniform();                          // in [0, 1), 53 bits
  std::int64_t below(std::int64_t n);        // uniform in [0, n), unbiased; n > 0
  std::int64_t between(std::int64_t lo, std::int64_t hi);  // uniform in [lo, hi], inclusive
  bool chance(double p);                     // true with probability p

 private:
  std::uint64_t s_[4];
};

}  // namespace monet
