#include "monet/search/random.hpp"

namespace monet {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed;
  const std::uint64_t a = splitmix64(s);
  std::uint64_t t = a ^ (stream * 0xD1B54A32D192ED03ULL);
  return splitmix64(t);
}

namespace {
__extension__ using u128 = unsigned __int128;  // GCC/Clang extension: a 64x64->128-bit product
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Random::Random(std::uint64_t seed) {
  std::uint64_t s = seed;
  for (std::uint64_t& w : s_) w = splitmix64(s);
}

std::uint64_t Random::next() {  // xoshiro256** (Blackman & Vigna 2018)
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::int64_t Random::below(std::int64_t n) {
  // Lemire's nearly divisionless method with rejection: unbiased.
  const auto range = static_cast<std::uint64_t>(n);
  u128 m = static_cast<u128>(next()) * range;
  auto low = static_cast<std::uint64_t>(m);
  if (low < range) {
    const std::uint64_t threshold = (0 - range) % range;
    while (low < threshold) {
      m = static_cast<u128>(next()) * range;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::int64_t>(m >> 64);
}

std::int64_t Random::between(std::int64_t lo, std::int64_t hi) { return lo + below(hi - lo + 1); }

bool Random::chance(double p) { return uniform() < p; }

}  // namespace monet
