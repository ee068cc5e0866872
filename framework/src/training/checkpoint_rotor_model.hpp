#pragma once
// Rotor's model formulas (checkpoint_rotor.hpp): the peak, cost and MACs of each kind of step over a RotorChain,
// shared by the DP (checkpoint_rotor_dp.cpp) and the evaluation of one schedule (checkpoint_rotor_schedule.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "monet/training/checkpoint_rotor.hpp"

namespace monet::detail {

/// Adds bytes to a maximum that may be "no position".
inline std::int64_t plus(std::int64_t peak, std::int64_t bytes) { return peak == kNoPosition ? kNoPosition : peak + bytes; }

// ---- The model's formulas, shared by the DP and the evaluation of one schedule. ----
// Every peak counts the storages of the sub-problem: the owned part of its first block's input (all of it when
// it is "fresh": a checkpoint or a result of the same recomputation; after an F_all of the previous block, only
// what that block's backward does not read), what it computes, and the chain's constant bytes where it runs.

inline std::int64_t owned_input(const RotorChain& c, std::size_t s, int mode) {
  if (s == 0) return 0;
  const RotorChain::Block& p = c.blocks[s - 1];
  return mode == 0 ? p.out : p.out_not_saved;
}
inline std::int64_t owned_input_read_by_backward(const RotorChain& c, std::size_t s, int mode) {
  if (s == 0) return 0;
  const RotorChain::Block& p = c.blocks[s - 1];
  return mode == 0 ? p.out_read_next : p.out_not_saved_read_next;
}

/// Nested "all" at s over s..t: F_all of s, then s + 1 .. t (peak `rest`, kNoPosition when s == t), then B_s.
inline std::int64_t peak_all(const RotorChain& c, std::size_t s, std::size_t t, int mode, std::int64_t rest) {
  const RotorChain::Block& b = c.blocks[s];
  const RotorChain::Forward& f = s < t ? b.all : b.all_last;
  const std::int64_t ob = owned_input_read_by_backward(c, s, mode);
  const std::int64_t pf = plus(f.peak[mode == 0 ? 2 : 3], ob + c.blocks[t].constant_before);
  return std::max({pf, plus(rest, ob + b.saved), b.backward_peak[mode]});
}
inline double cost_all(const RotorChain& c, std::size_t s, std::size_t t) {
  return s < t ? c.blocks[s].all.cost : c.blocks[s].all_last.cost;
}
inline std::int64_t macs_all(const RotorChain& c, std::size_t s, std::size_t t) {
  return s < t ? c.blocks[s].all.macs : c.blocks[s].all_last.macs;
}
/// Nested "checkpoint" at s over s..t, next checkpoint at `split`: the forwards of s .. split - 1.
inline std::int64_t peak_forwards(const RotorChain& c, std::size_t s, std::size_t split, std::size_t t, int mode) {
  const std::int64_t base = owned_input(c, s, mode) + c.blocks[t].constant_before;
  std::int64_t p = plus(c.blocks[s].f.peak[0], base);
  for (std::size_t k = s + 1; k < split; ++k) p = std::max(p, plus(c.blocks[k].f.peak[1], base));
  return p;
}
inline double cost_forwards(const RotorChain& c, std::size_t s, std::size_t split) {
  double x = 0;
  for (std::size_t k = s; k < split; ++k) x += c.blocks[k].f.cost;
  return x;
}
inline std::int64_t macs_forwards(const RotorChain& c, std::size_t s, std::size_t split) {
  std::int64_t x = 0;
  for (std::size_t k = s; k < split; ++k) x += c.blocks[k].f.macs;
  return x;
}
inline std::int64_t peak_checkpoint(const RotorChain& c, std::size_t s, std::size_t split, std::size_t t, int mode,
                                    std::int64_t later, std::int64_t again) {
  return std::max({peak_forwards(c, s, split, t, mode), plus(later, owned_input(c, s, mode)), again});
}
/// Top level "keep" at s, then s + 1 .. (peak `rest`).
inline std::int64_t peak_keep(const RotorChain& c, std::size_t s, int mode, std::int64_t rest) {
  const RotorChain::Block& b = c.blocks[s];
  return std::max(plus(rest, owned_input_read_by_backward(c, s, mode) + b.saved), b.backward_peak[mode]);
}
/// Top level "segment" s..e, then e + 1 .. (peak `rest`), then the nested step over s..e (peak `inner`).
inline std::int64_t peak_segment(const RotorChain& c, std::size_t s, int mode, std::int64_t rest, std::int64_t inner) {
  return std::max(plus(rest, owned_input(c, s, mode)), inner);
}

}  // namespace monet::detail
