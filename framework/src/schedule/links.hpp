#pragma once
// The scheduler's shared resources over time: the bandwidth in use on each link and on the off-chip ports
// (the reservations and transfer records that use them are links.cpp's).
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>

namespace monet::detail {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max() / 4;

/// Bandwidth in use on a shared resource (a link, the off-chip ports) over time, piecewise constant. A new
/// activity takes the earliest window of its length where its bandwidth fits next to what is already there.
class BandwidthTimeline {
 public:
  explicit BandwidthTimeline(double capacity = 0) : capacity_(capacity) { level_[0] = 0; }

  [[nodiscard]] double capacity() const { return capacity_; }

  /// Earliest start >= t of [start, start + d) where `bw` more fits everywhere.
  [[nodiscard]] std::int64_t fit(std::int64_t t, std::int64_t d, double bw) const {
    if (d <= 0) return t;
    const double limit = capacity_ + 1e-9;
    while (true) {
      auto it = std::prev(level_.upper_bound(t));
      bool ok = true;
      for (; it != level_.end() && it->first < t + d; ++it) {
        if (it->second + bw > limit) {
          auto next = std::next(it);
          t = next == level_.end() ? kNever : next->first;
          ok = false;
          break;
        }
      }
      if (ok) return t;
      if (t >= kNever) return t;
    }
  }

  void add(std::int64_t s, std::int64_t e, double bw) {
    if (e <= s || bw == 0) return;
    split(s);
    split(e);
    for (auto it = level_.find(s); it != level_.end() && it->first < e; ++it) it->second += bw;
  }

 private:
  void split(std::int64_t t) {
    auto it = std::prev(level_.upper_bound(t));
    if (it->first != t) level_.emplace_hint(std::next(it), t, it->second);
  }
  double capacity_;
  std::map<std::int64_t, double> level_;  // time -> bandwidth in use from then on
};

}  // namespace monet::detail
