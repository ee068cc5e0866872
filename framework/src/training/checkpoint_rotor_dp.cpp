// Rotor's DP (checkpoint_rotor.hpp): the (peak, cost) Pareto front of every top-level suffix and nested sub-chain,
// memoised, and the schedule of a front entry rebuilt from the entries it combines.
#include <algorithm>
#include <vector>

#include "checkpoint_rotor_model.hpp"
#include "monet/training/checkpoint_rotor.hpp"

namespace monet {

namespace {

using detail::cost_all;
using detail::cost_forwards;
using detail::peak_all;
using detail::peak_checkpoint;
using detail::peak_keep;
using detail::peak_segment;

/// A front entry: its (peak, cost) and how to rebuild its schedule (kind, split, the entries it combines).
struct Entry {
  std::int64_t peak = 0;
  double cost = 0;
  RotorStep::Kind kind = RotorStep::Kind::keep;
  std::size_t split = 0;
  int next = -1, inner = -1;  // indices into the fronts they come from
};

/// Keeps the entries no other beats in (peak, cost), by increasing peak.
void prune(std::vector<Entry>& v) {
  std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.peak != b.peak ? a.peak < b.peak : a.cost < b.cost; });
  std::vector<Entry> out;
  for (const Entry& e : v) {
    if (out.empty() || e.cost < out.back().cost) out.push_back(e);
  }
  v = std::move(out);
}

class Dp {
 public:
  explicit Dp(const RotorChain& c) : c_(c), n_(c.size()), nested_(n_ * n_ * 2), built_(n_ * n_ * 2), top_((n_ + 1) * 2) {}

  const std::vector<Entry>& top(std::size_t s, int mode) {
    std::vector<Entry>& v = top_[s * 2 + static_cast<std::size_t>(mode)];
    if (!v.empty()) return v;
    if (s == n_) {
      v.push_back(Entry{c_.tail_peak[mode], 0, RotorStep::Kind::keep, 0, -1, -1});
      return v;
    }
    const std::vector<Entry>& after_keep = top(s + 1, 1);
    for (std::size_t i = 0; i < after_keep.size(); ++i) {
      v.push_back(Entry{peak_keep(c_, s, mode, after_keep[i].peak), after_keep[i].cost, RotorStep::Kind::keep, 0,
                        static_cast<int>(i), -1});
    }
    for (std::size_t e = s; e < n_; ++e) {
      const std::vector<Entry>& rest = top(e + 1, 0);
      const std::vector<Entry>& inner = nested(s, e, mode);
      for (std::size_t i = 0; i < rest.size(); ++i) {
        for (std::size_t j = 0; j < inner.size(); ++j) {
          v.push_back(Entry{peak_segment(c_, s, mode, rest[i].peak, inner[j].peak), rest[i].cost + inner[j].cost,
                            RotorStep::Kind::segment, e, static_cast<int>(i), static_cast<int>(j)});
        }
      }
      prune(v);  // per run end: the products of two fronts stay small
    }
    prune(v);
    return v;
  }

  RotorSchedule top_schedule(std::size_t s, int mode, int index) {
    if (s == n_) return nullptr;
    const Entry& e = top(s, mode)[static_cast<std::size_t>(index)];
    if (e.kind == RotorStep::Kind::keep) return rotor_step(e.kind, s, s, 0, top_schedule(s + 1, 1, e.next), nullptr);
    return rotor_step(e.kind, s, e.split, e.split, top_schedule(e.split + 1, 0, e.next), nested_schedule(s, e.split, mode, e.inner));
  }

  const std::vector<Entry>& nested(std::size_t s, std::size_t t, int mode) {
    const std::size_t key = (s * n_ + t) * 2 + static_cast<std::size_t>(mode);
    std::vector<Entry>& v = nested_[key];
    if (built_[key]) return v;
    std::vector<Entry> out;
    if (s == t) {
      out.push_back(Entry{peak_all(c_, s, t, mode, kNoPosition), cost_all(c_, s, t), RotorStep::Kind::all, 0, -1, -1});
    } else {
      const std::vector<Entry>& rest = nested(s + 1, t, 1);
      for (std::size_t i = 0; i < rest.size(); ++i) {
        out.push_back(Entry{peak_all(c_, s, t, mode, rest[i].peak), cost_all(c_, s, t) + rest[i].cost,
                            RotorStep::Kind::all, 0, static_cast<int>(i), -1});
      }
      for (std::size_t split = s + 1; split <= t; ++split) {
        const std::vector<Entry>& later = nested(split, t, 0);
        const std::vector<Entry>& again = nested(s, split - 1, mode);
        const double fc = cost_forwards(c_, s, split);
        for (std::size_t i = 0; i < later.size(); ++i) {
          for (std::size_t j = 0; j < again.size(); ++j) {
            out.push_back(Entry{peak_checkpoint(c_, s, split, t, mode, later[i].peak, again[j].peak),
                                fc + later[i].cost + again[j].cost, RotorStep::Kind::checkpoint, split,
                                static_cast<int>(i), static_cast<int>(j)});
          }
        }
        prune(out);
      }
    }
    prune(out);
    v = std::move(out);
    built_[key] = true;
    return nested_[key];
  }

  RotorSchedule nested_schedule(std::size_t s, std::size_t t, int mode, int index) {
    const Entry& e = nested(s, t, mode)[static_cast<std::size_t>(index)];
    if (e.kind == RotorStep::Kind::all) {
      return rotor_step(e.kind, s, t, 0, s == t ? nullptr : nested_schedule(s + 1, t, 1, e.next), nullptr);
    }
    return rotor_step(e.kind, s, t, e.split, nested_schedule(e.split, t, 0, e.next), nested_schedule(s, e.split - 1, mode, e.inner));
  }

 private:
  const RotorChain& c_;
  std::size_t n_;
  std::vector<std::vector<Entry>> nested_;
  std::vector<bool> built_;
  std::vector<std::vector<Entry>> top_;
};

}  // namespace

std::vector<RotorChoice> rotor_front(const RotorChain& chain) {
  Dp dp(chain);
  const std::vector<Entry>& front = dp.top(0, 0);
  std::vector<RotorChoice> out;
  for (std::size_t i = 0; i < front.size(); ++i) {
    out.push_back(RotorChoice{dp.top_schedule(0, 0, static_cast<int>(i)), front[i].peak, front[i].cost});
  }
  return out;
}

}  // namespace monet
