#include "wave_quantization.hpp"

#include <charconv>

namespace monet::plugins::gpu {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::optional<TileShape> parse_tile(const std::string& text) {
  const auto x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) return std::nullopt;
  TileShape t;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p1, e1] = std::from_chars(b, b + x, t.m);
  auto [p2, e2] = std::from_chars(b + x + 1, e, t.n);
  if (e1 != std::errc() || p1 != b + x || e2 != std::errc() || p2 != e || t.m < 1 || t.n < 1) return std::nullopt;
  return t;
}

TilePlan plan_tiles(const GemmShape& g, TileShape tile, std::int64_t split, std::int64_t sms, std::int64_t blocks_per_sm) {
  TilePlan p;
  p.tile = tile;
  p.split = split;
  const std::int64_t rows = ceil_div(g.m, tile.m);
  const std::int64_t cols = ceil_div(g.n, tile.n);
  p.tiles = g.batch * rows * cols * split;
  const std::int64_t per_wave = sms * blocks_per_sm;
  p.waves = ceil_div(p.tiles, per_wave);
  p.tile_efficiency = static_cast<double>(g.m) * static_cast<double>(g.n) /
                      (static_cast<double>(rows * tile.m) * static_cast<double>(cols * tile.n));
  const std::int64_t slice = ceil_div(g.k, split);
  // Useful work over the work of the waves: the last wave's idle SMs and a K that does not divide into slices.
  p.wave_efficiency = static_cast<double>(p.tiles) / static_cast<double>(p.waves * per_wave) *
                      static_cast<double>(g.k) / static_cast<double>(slice * split);
  p.quantized_macs = static_cast<double>(p.waves * per_wave) * static_cast<double>(tile.m * tile.n) * static_cast<double>(slice);
  return p;
}

}  // namespace monet::plugins::gpu
