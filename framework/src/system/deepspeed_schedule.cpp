// DeepSpeed's pipeline engine (deepspeed/runtime/pipe/schedule.py TrainSchedule, engine.py), simulated: the
// instructions each stage executes in order, with blocking point-to-point transfers (p2p.send / p2p.recv are
// dist.send / dist.recv: the stream waits until the transfer is done, and a send cannot finish before its receive is
// posted). docs/datacenter.md#deepspeeds-pipeline-engine.
#include <algorithm>

#include "monet/system/pipeline_schedule.hpp"
#include "monet/util/error.hpp"

namespace monet {
namespace {

enum class Kind { forward, backward, send_activation, recv_activation, send_grad, recv_grad };

struct Instruction {
  Kind kind;
  std::int64_t micro_batch;
};

// The engine runs 2·(m + p − 1) steps. At step k stage s runs a forward pass when k and s have the same parity (of
// micro-batch (k − s)/2), else a backward pass (of micro-batch (k + s + 1)/2 − p); a micro-batch outside [0, m) is
// an idle slot. Each step first exchanges with the neighbours: a forward step sends the previous step's input
// gradient back and then receives its own input; a backward step receives its output's gradient and then sends
// the previous step's activation on. So an activation leaves its stage one step after its forward pass, once the
// gradient the stage waits for has arrived.
std::vector<Instruction> stage_instructions(std::int64_t s, std::int64_t p, std::int64_t m) {
  auto valid = [&](std::int64_t mb) { return mb >= 0 && mb < m; };
  auto micro_batch = [&](std::int64_t k, bool forward) { return forward ? (k - s) / 2 : (k + s + 1) / 2 - p; };
  std::vector<Instruction> out;
  std::int64_t previous = -1;
  for (std::int64_t k = 0; k < 2 * (m + p - 1); ++k) {
    const bool forward = (k % 2) == (s % 2);
    const std::int64_t mb = micro_batch(k, forward);
    if (forward) {
      if (s > 0 && valid(previous)) out.push_back({Kind::send_grad, previous});
      if (s > 0 && valid(mb)) out.push_back({Kind::recv_activation, mb});
      if (valid(mb)) out.push_back({Kind::forward, mb});
    } else {
      if (s + 1 < p && valid(mb)) out.push_back({Kind::recv_grad, mb});
      if (s + 1 < p && valid(previous)) out.push_back({Kind::send_activation, previous});
      if (valid(mb)) out.push_back({Kind::backward, mb});
    }
    previous = mb;
  }
  return out;
}

}  // namespace

PipelineRun simulate_deepspeed_pipeline(const PipelineTimes& t) {
  const std::int64_t p = t.stages, m = t.micro_batches;
  if (p < 1 || t.chunks != 1 || m < 1 || static_cast<std::int64_t>(t.forward.size()) != p ||
      static_cast<std::int64_t>(t.backward.size()) != p ||
      (!t.saved_bytes.empty() && static_cast<std::int64_t>(t.saved_bytes.size()) != p)) {
    throw InternalError("simulate_deepspeed_pipeline: inconsistent sizes (DeepSpeed's engine does not interleave)");
  }
  const auto P = static_cast<std::size_t>(p);
  std::vector<std::vector<Instruction>> lists;
  for (std::int64_t s = 0; s < p; ++s) lists.push_back(stage_instructions(s, p, m));
  std::vector<std::size_t> next(P, 0);
  std::vector<double> free_at(P, 0), live(P, 0);
  PipelineRun run;
  run.busy_s.assign(P, 0);
  run.send_blocked_s.assign(P, 0);
  run.last_backward_end_s.assign(P, 0);
  run.chunk_last_backward_end_s.assign(P, 0);
  run.peak_saved_bytes.assign(P, 0);
  run.send_intervals.resize(P);
  auto saved = [&](std::size_t s) { return t.saved_bytes.empty() ? 0.0 : t.saved_bytes[s]; };

  std::size_t remaining = 0;
  for (const auto& l : lists) remaining += l.size();
  while (remaining > 0) {
    std::size_t progressed = 0;
    for (std::size_t s = 0; s < P; ++s) {
      while (next[s] < lists[s].size()) {
        const Instruction x = lists[s][next[s]];
        if (x.kind == Kind::forward || x.kind == Kind::backward) {
          const bool fwd = x.kind == Kind::forward;
          const double d = (fwd ? t.forward : t.backward)[s];
          free_at[s] += d;
          run.busy_s[s] += d;
          if (!fwd) run.last_backward_end_s[s] = run.chunk_last_backward_end_s[s] = free_at[s];
          live[s] += fwd ? saved(s) : -saved(s);
          run.peak_saved_bytes[s] = std::max(run.peak_saved_bytes[s], live[s]);
          ++next[s], ++progressed;
          continue;
        }
        // A transfer runs when its partner stage has reached the matching instruction: both streams wait for it.
        const bool downstream = x.kind == Kind::send_activation || x.kind == Kind::recv_grad;
        const std::size_t q = downstream ? s + 1 : s - 1;
        const Kind match = x.kind == Kind::send_activation ? Kind::recv_activation
                           : x.kind == Kind::recv_activation ? Kind::send_activation
                           : x.kind == Kind::send_grad       ? Kind::recv_grad
                                                             : Kind::send_grad;
        if (next[q] >= lists[q].size()) break;
        const Instruction y = lists[q][next[q]];
        if (y.kind != match || y.micro_batch != x.micro_batch) break;
        const double start = std::max(free_at[s], free_at[q]), end = start + t.send_s;
        free_at[s] = free_at[q] = end;
        run.send_blocked_s[s] += t.send_s, run.send_blocked_s[q] += t.send_s;
        if (t.record_sends && t.send_s > 0) {
          run.send_intervals[s].emplace_back(start, end);
          run.send_intervals[q].emplace_back(start, end);
        }
        ++next[s], ++next[q], progressed += 2;
      }
    }
    if (progressed == 0) throw InternalError("simulate_deepspeed_pipeline: the schedule deadlocks");
    remaining -= progressed;
  }
  for (double e : free_at) run.makespan_s = std::max(run.makespan_s, e);
  std::size_t busiest = 0;
  for (std::size_t s = 1; s < P; ++s) {
    if (run.busy_s[s] > run.busy_s[busiest]) busiest = s;
  }
  run.bubble_s = run.makespan_s - run.busy_s[busiest] - run.send_blocked_s[busiest];
  return run;
}

}  // namespace monet
