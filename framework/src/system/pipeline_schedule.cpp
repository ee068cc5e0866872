#include "monet/system/pipeline_schedule.hpp"

#include <algorithm>
#include <limits>

#include "monet/util/error.hpp"

namespace monet {
namespace {

struct Pass {
  bool forward = true;
  std::int64_t chunk = 0;        // model chunk index c·p + s
  std::int64_t micro_batch = 0;
};

// The order in which stage `s` runs its passes: Megatron's forward_backward_pipelining_with(out)_interleaving.
std::vector<Pass> stage_order(std::int64_t s, std::int64_t p, std::int64_t v, std::int64_t m) {
  const std::int64_t total = m * v;
  // The k-th forward (backward) pass of a stage: model chunk and micro-batch, as Megatron's
  // get_model_chunk_id / microbatch id (groups of p micro-batches go through each chunk in turn).
  auto pass = [&](std::int64_t k, bool forward) {
    const std::int64_t in_group = k % (p * v);
    std::int64_t c = in_group / p;
    if (!forward) c = v - 1 - c;
    return Pass{forward, c * p + s, (k / (p * v)) * p + k % p};
  };
  std::int64_t warmup = v == 1 ? p - s - 1 : (p - s - 1) * 2 + (v - 1) * p;
  warmup = std::min(warmup, total);
  std::vector<Pass> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  std::int64_t f = 0, b = 0;
  for (; f < warmup; ++f) order.push_back(pass(f, true));
  while (f < total) {
    order.push_back(pass(f++, true));
    order.push_back(pass(b++, false));
  }
  while (b < total) order.push_back(pass(b++, false));
  return order;
}

}  // namespace

PipelineRun simulate_pipeline(const PipelineTimes& t) {
  if (t.stack == ParallelStack::deepspeed) return simulate_deepspeed_pipeline(t);
  const std::int64_t p = t.stages, v = t.chunks, m = t.micro_batches, chunks = p * v;
  if (p < 1 || v < 1 || m < 1 || static_cast<std::int64_t>(t.forward.size()) != chunks ||
      static_cast<std::int64_t>(t.backward.size()) != chunks ||
      (!t.saved_bytes.empty() && static_cast<std::int64_t>(t.saved_bytes.size()) != chunks) || (v > 1 && m % p != 0)) {
    throw InternalError("simulate_pipeline: inconsistent sizes");
  }
  const double never = std::numeric_limits<double>::infinity();
  // End times of every pass, per chunk and micro-batch (infinity: not run yet).
  std::vector<double> fwd_end(static_cast<std::size_t>(chunks * m), never), bwd_end(fwd_end);
  auto at = [&](std::int64_t chunk, std::int64_t mb) { return static_cast<std::size_t>(chunk * m + mb); };

  std::vector<std::vector<Pass>> orders;
  for (std::int64_t s = 0; s < p; ++s) orders.push_back(stage_order(s, p, v, m));
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0);
  PipelineRun run;
  run.busy_s.assign(static_cast<std::size_t>(p), 0);
  run.send_blocked_s.assign(static_cast<std::size_t>(p), 0);
  run.last_backward_end_s.assign(static_cast<std::size_t>(p), 0);
  run.chunk_last_backward_end_s.assign(static_cast<std::size_t>(chunks), 0);
  run.peak_saved_bytes.assign(static_cast<std::size_t>(p), 0);
  run.send_intervals.resize(static_cast<std::size_t>(p));
  std::vector<double> live(static_cast<std::size_t>(p), 0);
  auto saved = [&](std::int64_t chunk) {
    return t.saved_bytes.empty() ? 0.0 : t.saved_bytes[static_cast<std::size_t>(chunk)];
  };

  // Every stage runs its passes in order; a pass waits for its input. Sweep the stages until all are done: each
  // sweep runs every pass whose input is ready, so it terminates unless the orders deadlock (a bug).
  std::size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    std::size_t progressed = 0;
    for (std::int64_t s = 0; s < p; ++s) {
      auto& i = next[static_cast<std::size_t>(s)];
      const auto& order = orders[static_cast<std::size_t>(s)];
      while (i < order.size()) {
        const Pass& x = order[i];
        double ready = 0;
        if (x.forward) {
          if (x.chunk > 0) ready = fwd_end[at(x.chunk - 1, x.micro_batch)] + t.send_s;
        } else if (x.chunk + 1 < chunks) {
          ready = bwd_end[at(x.chunk + 1, x.micro_batch)] + t.send_s;
        } else {
          ready = fwd_end[at(x.chunk, x.micro_batch)];
        }
        if (ready == never) break;
        const double d = (x.forward ? t.forward : t.backward)[static_cast<std::size_t>(x.chunk)];
        const double start = std::max(ready, free_at[static_cast<std::size_t>(s)]);
        const double end = start + d;
        (x.forward ? fwd_end : bwd_end)[at(x.chunk, x.micro_batch)] = end;
        // Megatron's sends block the sender until they complete (batch_isend_irecv, wait, synchronize).
        const bool sends = t.blocking_sends && (x.forward ? x.chunk + 1 < chunks : x.chunk > 0);
        free_at[static_cast<std::size_t>(s)] = end + (sends ? t.send_s : 0);
        if (sends) run.send_blocked_s[static_cast<std::size_t>(s)] += t.send_s;
        if (t.record_sends && t.send_s > 0 && (x.forward ? x.chunk + 1 < chunks : x.chunk > 0)) {
          const std::int64_t to = ((x.forward ? x.chunk + 1 : x.chunk - 1) % p);  // the receiving chunk's stage
          run.send_intervals[static_cast<std::size_t>(s)].emplace_back(end, end + t.send_s);
          run.send_intervals[static_cast<std::size_t>(to)].emplace_back(end, end + t.send_s);
        }
        run.busy_s[static_cast<std::size_t>(s)] += d;
        if (!x.forward) {
          run.last_backward_end_s[static_cast<std::size_t>(s)] = end;
          run.chunk_last_backward_end_s[static_cast<std::size_t>(x.chunk)] = end;
        }
        double& l = live[static_cast<std::size_t>(s)];
        l += x.forward ? saved(x.chunk) : -saved(x.chunk);
        run.peak_saved_bytes[static_cast<std::size_t>(s)] = std::max(run.peak_saved_bytes[static_cast<std::size_t>(s)], l);
        ++i;
        ++progressed;
      }
    }
    if (progressed == 0) throw InternalError("simulate_pipeline: the schedule deadlocks");
    remaining -= progressed;
  }
  for (double e : free_at) run.makespan_s = std::max(run.makespan_s, e);
  std::size_t busiest = 0;
  for (std::size_t s = 1; s < run.busy_s.size(); ++s) {
    if (run.busy_s[s] > run.busy_s[busiest]) busiest = s;
  }
  run.bubble_s = run.makespan_s - run.busy_s[busiest] - run.send_blocked_s[busiest];
  return run;
}

}  // namespace monet
