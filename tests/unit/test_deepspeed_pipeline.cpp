// DeepSpeed's pipeline engine against Megatron's 1F1B on cases worked out by hand (docs/datacenter.md#deepspeeds-pipeline-engine).
#include <gtest/gtest.h>

#include "monet/system/pipeline_schedule.hpp"
#include "monet/util/error.hpp"

namespace monet {
namespace {

PipelineTimes uniform(std::int64_t p, std::int64_t m, double f, double b, ParallelStack stack) {
  PipelineTimes t;
  t.stages = p;
  t.micro_batches = m;
  t.forward.assign(static_cast<std::size_t>(p), f);
  t.backward.assign(static_cast<std::size_t>(p), b);
  t.stack = stack;
  return t;
}

// Without transfer time the engine's lockstep schedule runs the passes in 1F1B's order with 1F1B's bubble:
// (m + p − 1)·(F + B) = 11 · 3 and (p − 1)·(F + B) = 9 for p = 4, m = 8.
TEST(DeepSpeedPipeline, WithoutTransfersItIsOneFOneB) {
  const PipelineRun ds = simulate_pipeline(uniform(4, 8, 1.0, 2.0, ParallelStack::deepspeed));
  const PipelineRun mg = simulate_pipeline(uniform(4, 8, 1.0, 2.0, ParallelStack::megatron));
  EXPECT_DOUBLE_EQ(ds.makespan_s, 33.0);
  EXPECT_DOUBLE_EQ(ds.bubble_s, 9.0);
  EXPECT_DOUBLE_EQ(mg.makespan_s, ds.makespan_s);
  for (double b : ds.busy_s) EXPECT_DOUBLE_EQ(b, 24.0);
}

// Two stages, two micro-batches, F = 1, B = 2, transfers of 0.5. Stage 0 runs F0 (0–1), sends it (1–1.5: stage 1
// receives at once), F1 (1.5–2.5), then at its next step receives B0's gradient first: stage 1 runs F0 (1.5–2.5),
// B0 (2.5–4.5) and sends the gradient (4.5–5). Only then does stage 0 send F1's activation (5–5.5), so stage 1's F1
// runs 5.5–6.5 (Megatron's: 5–6, its send followed F1 at once), B1 6.5–8.5, its gradient 8.5–9; stage 0's B0 runs
// 5.5–7.5 and B1 9–11. Megatron's 1F1B ends at 10.5 (tests/unit/test_system.cpp, SendsBlockTheSendingStage).
TEST(DeepSpeedPipeline, AnActivationLeavesAfterTheGradientArrives) {
  PipelineTimes t = uniform(2, 2, 1.0, 2.0, ParallelStack::deepspeed);
  t.send_s = 0.5;
  t.record_sends = true;
  const PipelineRun r = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(r.makespan_s, 11.0);
  // Each stage takes part in four transfers (two activations, two gradients): both streams wait for each.
  EXPECT_DOUBLE_EQ(r.send_blocked_s[0], 2.0);
  EXPECT_DOUBLE_EQ(r.send_blocked_s[1], 2.0);
  EXPECT_DOUBLE_EQ(r.bubble_s, 11.0 - 6.0 - 2.0);  // stage 0 waits 2.5–4.5 and 7.5–8.5
  EXPECT_DOUBLE_EQ(r.last_backward_end_s[0], 11.0);
  EXPECT_DOUBLE_EQ(r.last_backward_end_s[1], 8.5);
  ASSERT_EQ(r.send_intervals[0].size(), 4u);
  EXPECT_DOUBLE_EQ(r.send_intervals[0][2].first, 5.0);   // F1's activation
  EXPECT_DOUBLE_EQ(r.send_intervals[0][3].first, 8.5);   // B1's gradient
  t.stack = ParallelStack::megatron;
  EXPECT_DOUBLE_EQ(simulate_pipeline(t).makespan_s, 10.5);
}

// The same 1F1B order keeps the same activations in flight: p micro-batches on the first stage, one on the last.
TEST(DeepSpeedPipeline, InFlightMicroBatchesAreOneFOneBs) {
  PipelineTimes t = uniform(4, 8, 1.0, 2.0, ParallelStack::deepspeed);
  t.saved_bytes.assign(4, 10.0);
  t.send_s = 0.25;
  const PipelineRun r = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(r.peak_saved_bytes[0], 40.0);
  EXPECT_DOUBLE_EQ(r.peak_saved_bytes[3], 10.0);
  // In steady state each step of a middle stage waits for two transfers one after the other (the gradient in, the
  // activation out) where Megatron's batched send and receive overlap: the DeepSpeed step is the longer.
  t.stack = ParallelStack::megatron;
  EXPECT_GT(r.makespan_s, simulate_pipeline(t).makespan_s);
}

TEST(DeepSpeedPipeline, OneStageRunsBackToBack) {
  const PipelineRun r = simulate_pipeline(uniform(1, 5, 1.0, 2.0, ParallelStack::deepspeed));
  EXPECT_DOUBLE_EQ(r.makespan_s, 15.0);
  EXPECT_DOUBLE_EQ(r.bubble_s, 0.0);
}

TEST(DeepSpeedPipeline, InterleavingIsAnInternalError) {
  PipelineTimes t = uniform(2, 4, 1.0, 2.0, ParallelStack::deepspeed);
  t.chunks = 2;
  t.forward.assign(4, 0.5), t.backward.assign(4, 1.0);
  EXPECT_THROW((void)simulate_pipeline(t), InternalError);
}

}  // namespace
}  // namespace monet
