#pragma once
// parallel_step's state between its steps (parallel_step.cpp composes them): the rank's operators timed and
// grouped into passes, the collectives placed in them, the pipeline run, the stages' gradient reductions. Internal.
#include <cstdint>
#include <vector>

#include "monet/system/collectives.hpp"
#include "monet/system/parallel_step.hpp"
#include "monet/system/pass_schedule.hpp"
#include "monet/system/pipeline_schedule.hpp"
#include "monet/system/tied_parameters.hpp"

namespace monet::detail {

struct ParallelStepModel {
  explicit ParallelStepModel(const ParallelStepInputs& inputs);  // the layout's groups (parallel_step.cpp)

  // step_passes.cpp: the passes and the pipeline, in this order.
  void time_operators();
  void gather_passes();
  void count_parameters();
  void run_passes();
  void run_pipeline();
  // step_collectives.cpp: the collectives placed in the passes, and the stages' gradient reductions.
  void place_model_parallel_collectives();
  void place_zero_collectives();
  void reduce_gradients();
  // parallel_step.cpp: the step's time, throughput, energy and memory, into r.
  void sum_up();

  [[nodiscard]] std::int64_t chunk_of_op(OperatorId op) const { return in.chunk_of_op[static_cast<std::size_t>(op)]; }
  [[nodiscard]] std::size_t pass_of(const Operator& op) const;

  const ParallelStepInputs& in;
  const Graph& g;
  const ParallelLayout& L;
  const System& sys;
  ParallelStep r;
  // The constructor: the groups' sizes and spacing, the pipeline's shape, the tied parameters.
  std::int64_t D = 0, neighbours = 0, I = 0, S = 0, data_per_node = 0;
  std::int64_t p = 0, v = 0, chunks = 0, m = 0;
  TiedCopies tied;
  std::vector<bool> tied_update, tied_piece;  // per operator: a tied parameter's update; per tensor: its last-chunk gradient

  // time_operators: per operator, its time and energy on the chip (before scaling) and when the chip started it.
  double hz = 0;
  std::vector<double> busy, energy;
  std::vector<std::int64_t> first_start;
  double time_scale = 0, energy_scale = 0;

  // gather_passes: the pipeline's per-chunk times, the passes' operators and what they add up to.
  PipelineTimes pt;
  std::vector<double> comm, recompute, optimizer, context_comm, comm_hidden, context_hidden, zero_comm, zero_hidden,
      sharded_comm, sharded_hidden;  // per chunk
  std::vector<std::vector<OperatorId>> pass_ops;
  double fb_energy = 0, opt_energy = 0, tp_energy = 0, cp_energy = 0, sharded_energy = 0;
  double tied_opt_s = 0, tied_opt_energy = 0;  // the tied parameters' updates, which the last stage runs again
  std::int64_t step_macs = 0, recompute_macs = 0;
  std::vector<std::vector<OperatorId>> recompute_copies;  // an operator may run again twice
  std::vector<std::size_t> index_in_pass;
  std::vector<OperatorId> last_backward;  // per forward operator, in stream order
  std::vector<PassSchedule> passes;

  // count_parameters: per chunk and per block.
  std::vector<std::int64_t> weights, grads, states, casts;
  // stack = deepspeed: DeepSpeed's fp32 copy of the 16-bit gradients it accumulates into (per chunk), and whether
  // they are bf16 (its BF16_Optimizer: a whole fp32 copy, the gradients all-reduced) or fp16 (ZeRO 1's
  // stage_1_and_2: the fp32 copy of the rank's partition only).
  std::vector<std::int64_t> fp32_grads;
  bool bf16_optimizer = false;
  std::size_t block_count = 0;
  std::vector<double> block_grads;

  // place_zero_collectives.
  double zero_energy = 0;
  std::vector<std::int64_t> gathered;  // ZeRO 3: whole parameters held at once

  // run_passes.
  // Per chunk: the weight gradients in the order its backward pass produces them, with when (seconds into the
  // pass) and their size: the buckets of an overlapped data-parallel reduction.
  struct Ready {
    double at_s;
    double bytes;
    std::int64_t elements;
  };
  std::vector<std::vector<Ready>> produced;
  // Per chunk: when its backward pass's collectives hold which links (seconds into the pass): the buckets of an
  // overlapped reduction that share those links wait for them.
  struct Held {
    double start_s, end_s;
    unsigned tiers;
  };
  std::vector<std::vector<Held>> held;

  // run_pipeline.
  CommCost send;  // one micro-batch's send between consecutive chunks (time and energy)
  PipelineRun run;

  // reduce_gradients.
  double d = 0;                      // the replicas of each parameter
  double shards = 0, instances = 0;  // ZeRO's shards, their copies
  std::vector<double> stage_opt, stage_dp_end, stage_reduced, stage_hidden, stage_gather;
  double dp_energy = 0;
  std::vector<std::int64_t> stage_weights, stage_grads, stage_states, stage_casts, stage_fp32_grads;
};

}  // namespace monet::detail
