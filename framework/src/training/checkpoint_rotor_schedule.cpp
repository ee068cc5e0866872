// A Rotor schedule (checkpoint_rotor.hpp): its steps, its peak, cost and MACs under the chain's model, and what it
// becomes — recomputations for apply_recomputations, top-level regions, a description; Rotor's single-level
// segmentations.
#include <algorithm>
#include <functional>

#include "checkpoint_rotor_model.hpp"
#include "monet/training/checkpoint_rotor.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

using detail::cost_all;
using detail::cost_forwards;
using detail::macs_all;
using detail::macs_forwards;
using detail::peak_all;
using detail::peak_checkpoint;
using detail::peak_keep;
using detail::peak_segment;

struct Eval {
  std::int64_t peak = 0;
  double cost = 0;
  std::int64_t macs = 0;
};

/// A nested step over first .. last (its own bounds) or a top-level step from `first` on, evaluated.
Eval evaluate(const RotorChain& c, const RotorStep* x, int mode, bool top) {
  if (!x) return {top ? c.tail_peak[mode] : kNoPosition, 0, 0};
  switch (x->kind) {
    case RotorStep::Kind::keep: {
      const Eval r = evaluate(c, x->next.get(), 1, true);
      return {peak_keep(c, x->first, mode, r.peak), r.cost, r.macs};
    }
    case RotorStep::Kind::segment: {
      const Eval r = evaluate(c, x->next.get(), 0, true);
      const Eval in = evaluate(c, x->inner.get(), mode, false);
      return {peak_segment(c, x->first, mode, r.peak, in.peak), r.cost + in.cost, r.macs + in.macs};
    }
    case RotorStep::Kind::all: {
      const Eval r = evaluate(c, x->next.get(), 1, false);
      return {peak_all(c, x->first, x->last, mode, r.peak), cost_all(c, x->first, x->last) + r.cost,
              macs_all(c, x->first, x->last) + r.macs};
    }
    case RotorStep::Kind::checkpoint: {
      const Eval later = evaluate(c, x->next.get(), 0, false);
      const Eval again = evaluate(c, x->inner.get(), mode, false);
      return {peak_checkpoint(c, x->first, x->split, x->last, mode, later.peak, again.peak),
              cost_forwards(c, x->first, x->split) + later.cost + again.cost,
              macs_forwards(c, x->first, x->split) + later.macs + again.macs};
    }
  }
  return {};
}

/// The forward and backward events of a schedule in the order they run: (block, true) a recomputation of the
/// block, (block, false) its backward.
void events(const RotorStep* x, std::vector<std::pair<std::size_t, bool>>& out) {
  if (!x) return;
  switch (x->kind) {
    case RotorStep::Kind::keep:
      events(x->next.get(), out);
      out.emplace_back(x->first, false);
      return;
    case RotorStep::Kind::segment:
      events(x->next.get(), out);
      events(x->inner.get(), out);
      return;
    case RotorStep::Kind::all:
      out.emplace_back(x->first, true);
      events(x->next.get(), out);
      out.emplace_back(x->first, false);
      return;
    case RotorStep::Kind::checkpoint:
      for (std::size_t k = x->first; k < x->split; ++k) out.emplace_back(k, true);
      events(x->next.get(), out);
      events(x->inner.get(), out);
      return;
  }
}

std::string describe_nested(const RotorChain& c, const RotorStep* x) {
  if (!x) return "";
  const auto& n = c.names;
  if (x->kind == RotorStep::Kind::all) {
    const std::string rest = describe_nested(c, x->next.get());
    return "all " + n[x->first] + (rest.empty() ? "" : "; " + rest);
  }
  const std::string span = x->first + 1 == x->split ? n[x->first] : n[x->first] + " .. " + n[x->split - 1];
  return "keep the input of " + span + " {" + describe_nested(c, x->next.get()) + "} then {" +
         describe_nested(c, x->inner.get()) + "}";
}

}  // namespace

std::int64_t RotorChain::peak(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).peak; }
double RotorChain::cost(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).cost; }
std::int64_t RotorChain::macs(const RotorSchedule& s) const { return evaluate(*this, s.get(), 0, true).macs; }

std::vector<Recomputation> RotorChain::plan(const RotorSchedule& s) const {
  std::vector<std::pair<std::size_t, bool>> ev;
  events(s.get(), ev);
  std::vector<Recomputation> out;
  std::vector<std::size_t> run;
  for (const auto& [b, forward] : ev) {
    if (forward) {
      run.push_back(b);
      continue;
    }
    if (run.empty()) continue;
    Recomputation r;
    r.semantics = semantics;
    r.name = names[run.front()] + (run.size() > 1 ? " .. " + names[run.back()] : "") + " before the backward of " + names[b];
    for (std::size_t k : run) r.operators.insert(r.operators.end(), blocks[k].operators.begin(), blocks[k].operators.end());
    std::sort(r.operators.begin(), r.operators.end());
    r.before = blocks[b].before;
    out.push_back(std::move(r));
    run.clear();
  }
  return out;
}

std::vector<CheckpointRegion> RotorChain::regions(const RotorSchedule& s) const {
  std::vector<CheckpointRegion> out;
  for (const RotorStep* x = s.get(); x; x = x->next.get()) {
    if (x->kind != RotorStep::Kind::segment) continue;
    CheckpointRegion r{x->first == x->split ? names[x->first] : "segment: " + names[x->first] + " .. " + names[x->split], {},
                       semantics};
    for (std::size_t k = x->first; k <= x->split; ++k) {
      r.operators.insert(r.operators.end(), blocks[k].operators.begin(), blocks[k].operators.end());
    }
    std::sort(r.operators.begin(), r.operators.end());
    out.push_back(std::move(r));
  }
  return out;
}

std::string RotorChain::describe(const RotorSchedule& s) const {
  std::vector<std::string> parts;
  for (const RotorStep* x = s.get(); x; x = x->next.get()) {
    if (x->kind != RotorStep::Kind::segment) continue;
    const std::string span = x->first == x->split ? names[x->first] : names[x->first] + " .. " + names[x->split];
    parts.push_back(span + ": " + describe_nested(*this, x->inner.get()));
  }
  return parts.empty() ? "keep every block" : join(parts, "; ");
}

RotorSchedule rotor_segmentation(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& runs) {
  std::function<RotorSchedule(std::size_t)> top = [&](std::size_t s) -> RotorSchedule {
    if (s >= n) return nullptr;
    for (const auto& [a, e] : runs) {
      if (a != s) continue;
      RotorSchedule inner;
      for (std::size_t k = e + 1; k-- > a;) inner = rotor_step(RotorStep::Kind::all, k, e, 0, inner, nullptr);
      return rotor_step(RotorStep::Kind::segment, s, e, e, top(e + 1), inner);
    }
    return rotor_step(RotorStep::Kind::keep, s, s, 0, top(s + 1), nullptr);
  };
  return top(0);
}

RotorSchedule rotor_step(RotorStep::Kind kind, std::size_t first, std::size_t last, std::size_t split,
                         RotorSchedule next, RotorSchedule inner) {
  auto x = std::make_shared<RotorStep>();
  x->kind = kind;
  x->first = first;
  x->last = last;
  x->split = split;
  x->next = std::move(next);
  x->inner = std::move(inner);
  return x;
}

}  // namespace monet
