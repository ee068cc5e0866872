#pragma once
// Megatron-LM's pipeline schedules, simulated (docs/datacenter.md#pipeline-schedules): each of p stages runs
// its forward and backward passes of m micro-batches in the order Megatron's 1F1B schedule gives it (with v > 1
// the interleaved schedule of Narayanan et al. 2021, v model chunks per stage), and a pass starts when its
// stage is free and its input has arrived from the neighbouring stage. A stage that sends (a forward pass to the
// next chunk, a backward pass to the previous one) waits for its send to complete, as Megatron's p2p
// communication does (batch_isend_irecv, wait, synchronize). The bubble comes out of the simulation:
// with uniform stages it is (p-1)·(F+B) for 1F1B and (p-1)·(F+B)/v interleaved, as the paper derives.
// With ParallelStack::deepspeed the stages run DeepSpeed's pipeline engine instead (TrainSchedule, no interleaving):
// the same 1F1B order of passes, but each activation leaves its stage only at the next step of the engine's lockstep
// schedule, after the stage has received the gradient it waits for, and every send meets its receive (blocking
// send and recv: both stages' streams wait until the transfer ends). docs/datacenter.md#deepspeeds-pipeline-engine.
#include <cstdint>
#include <utility>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

/// Whose pipeline engine, optimizer and gradient reduction a step on a system of chips follows ([parallelism] stack).
enum class ParallelStack { megatron, deepspeed };

struct PipelineTimes {
  std::int64_t stages = 1;            // p
  std::int64_t chunks = 1;            // v: model chunks per stage
  std::int64_t micro_batches = 1;     // m
  /// Per model chunk j = c·p + s (chunk c of stage s, in model order): one micro-batch's passes, seconds.
  std::vector<double> forward;
  std::vector<double> backward;
  double send_s = 0;  // one micro-batch's activations (forward) or their gradient (backward) to the next chunk: the
                      // sender's stream waits for it, the receiver's pass starts when it has arrived
  bool blocking_sends = true;  // false: the sender goes on at once (Megatron-Core's overlap_p2p_comm; megatron only)
  ParallelStack stack = ParallelStack::megatron;  // deepspeed: DeepSpeed's TrainSchedule (chunks must be 1)
  bool record_sends = false;   // fill PipelineRun::send_intervals (only what needs them pays for them)
  /// Per model chunk: bytes one micro-batch's forward pass leaves saved until its backward pass (optional).
  std::vector<double> saved_bytes;
};

struct PipelineRun {
  double makespan_s = 0;              // first forward starts at 0, last backward ends here
  std::vector<double> busy_s;         // per stage: time spent in passes
  std::vector<double> send_blocked_s; // per stage: time its stream waits for its own sends to complete (deepspeed: for
                                      // every transfer it sends or receives; waiting for the partner is bubble)
  std::vector<double> last_backward_end_s;  // per stage: when its last backward pass ends
  std::vector<double> chunk_last_backward_end_s;  // per model chunk: when its last backward pass ends
  /// per stage: the most saved bytes alive at once (micro-batches whose forward ran and backward has not)
  std::vector<double> peak_saved_bytes;
  /// per stage, with PipelineTimes::record_sends: when its chip's pipeline links carry a send, [start, end) in order
  /// of issue (the sends it makes and those it receives; blocking or not)
  std::vector<std::vector<std::pair<double, double>>> send_intervals;
  /// makespan − the busiest stage's busy and send-blocked time: the time that stage waits for its inputs (the bubble
  /// that cannot be hidden)
  double bubble_s = 0;
};

/// Simulates one step. Interleaving (chunks > 1) needs micro_batches divisible by stages, as Megatron does;
/// the caller checks that (a UserError at its key). Throws InternalError on inconsistent sizes.
MONET_API PipelineRun simulate_pipeline(const PipelineTimes& times);

/// DeepSpeed's pipeline engine (deepspeed_schedule.cpp); simulate_pipeline calls it for ParallelStack::deepspeed.
MONET_API PipelineRun simulate_deepspeed_pipeline(const PipelineTimes& times);

}  // namespace monet
