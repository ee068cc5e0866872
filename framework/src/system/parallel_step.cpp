// A training step on a system of chips from one rank's schedule: parallel_step runs ParallelStepModel's steps
// (step_passes.cpp, step_collectives.cpp) and sums up the step; finish_system_step makes it the run's summary.
#include "monet/system/parallel_step.hpp"

#include <algorithm>

#include "parallel_step_model.hpp"

namespace monet {

namespace detail {

ParallelStepModel::ParallelStepModel(const ParallelStepInputs& inputs)
    : in(inputs), g(in.step), L(in.layout), sys(in.system) {
  r.chips = L.tensor * L.context * L.pipeline * L.data;
  // Ranks in Megatron's order (tensor fastest, then context, data, pipeline): a tensor-parallel group is t
  // consecutive chips, a context-parallel group cp chips t apart, the gradient-reduction group (data x context
  // ranks, which hold the same parameters) D = d·cp chips t apart, pipeline neighbours t·cp·d apart.
  D = L.data * L.context, neighbours = L.tensor * L.context * L.data;
  // ZeRO shards over S consecutive ranks of those D (t apart): Megatron-Core's distributed-optimizer instance. The
  // I = D / S instances hold the same shards and all-reduce them (I ranks t·S apart) once each has reduce-scattered.
  I = in.optimizer_instances, S = D / I;
  data_per_node = data_ranks_per_node(sys, L);
  r.micro_batch = in.plan.micro_batch;
  r.global_batch = in.global_batch;
  r.micro_batches = in.global_batch / (r.micro_batch * L.data);
  p = L.pipeline, v = L.virtual_pipeline, chunks = p * v, m = r.micro_batches;
  // Parameters read in the first and the last chunk: the last stage keeps a copy (tied_parameters.hpp).
  tied = find_tied_copies(g, in.chunk_of_op, chunks, p);
  tied_update.assign(g.operators().size(), false), tied_piece.assign(g.tensors().size(), false);
  for (OperatorId op : tied.optimizer_ops) tied_update[static_cast<std::size_t>(op)] = true;
  for (TensorId x : tied.last_chunk_gradients) tied_piece[static_cast<std::size_t>(x)] = true;
}

void ParallelStepModel::sum_up() {
  // The step: the pipeline, then the stages' gradient reductions, then the optimizer (the gradient norm's
  // all-reduce over every stage synchronises them: the slowest stage's reduction and optimizer end the step).
  std::size_t busiest = 0;
  for (std::size_t s = 0; s < static_cast<std::size_t>(p); ++s) {
    if (run.busy_s[s] > run.busy_s[busiest]) busiest = s;
  }
  const auto last_reduced = std::max_element(stage_dp_end.begin(), stage_dp_end.end());
  const double reduced = *last_reduced;
  // The overlapped reduction's hidden time, of the stage whose reduction ends the step.
  r.data_comm_hidden_s = stage_hidden[static_cast<std::size_t>(last_reduced - stage_dp_end.begin())];
  r.data_comm_s = std::max(0.0, reduced - run.makespan_s);  // exposed; plus ZeRO's in-pass collectives, below
  r.optimizer_s = *std::max_element(stage_opt.begin(), stage_opt.end());
  r.step_time_s = run.makespan_s + r.data_comm_s + r.optimizer_s;
  r.pipeline_comm_s = run.send_blocked_s[busiest];
  r.bubble_s = run.makespan_s - run.busy_s[busiest] - r.pipeline_comm_s;
  double in_pass_dp = 0;
  for (std::int64_t c = 0; c < v; ++c) {
    const auto j = static_cast<std::size_t>(c * p + static_cast<std::int64_t>(busiest));
    r.tensor_comm_s += comm[j] * static_cast<double>(m);
    r.context_comm_s += context_comm[j] * static_cast<double>(m);
    r.sharded_comm_s += sharded_comm[j] * static_cast<double>(m);
    r.sharded_comm_hidden_s += sharded_hidden[j] * static_cast<double>(m);
    r.tensor_comm_hidden_s += comm_hidden[j] * static_cast<double>(m);
    r.context_comm_hidden_s += context_hidden[j] * static_cast<double>(m);
    r.recompute_s += recompute[j] * static_cast<double>(m);
    in_pass_dp += zero_comm[j] * static_cast<double>(m);
    r.data_comm_hidden_s += zero_hidden[j] * static_cast<double>(m);
  }
  r.data_comm_s += in_pass_dp;
  r.compute_s = run.busy_s[busiest] - r.tensor_comm_s - r.context_comm_s - r.sharded_comm_s - in_pass_dp;

  // Throughput over every chip.
  const double replicas = static_cast<double>(L.tensor) * d * static_cast<double>(m);
  r.hardware_flops = 2.0 * static_cast<double>(step_macs) * replicas;
  r.model_flops = 2.0 * static_cast<double>(step_macs - recompute_macs) * replicas;
  double pes = 0;
  for (const CoreInstance& c : in.chip.cores) pes += static_cast<double>(c.core->array.pe_count());
  r.peak_tflops_per_chip = 2 * pes * hz / 1e12;
  const double chip_seconds = r.step_time_s * static_cast<double>(r.chips);
  r.model_tflops_per_chip = r.model_flops / chip_seconds / 1e12;
  r.hardware_tflops_per_chip = r.hardware_flops / chip_seconds / 1e12;
  r.mfu = r.model_tflops_per_chip / r.peak_tflops_per_chip;
  r.hfu = r.hardware_tflops_per_chip / r.peak_tflops_per_chip;

  // Energy: every tensor-parallel rank of every replica (d·cp of them: data and context ranks) runs the whole depth
  // once per micro-batch (split over stages); the optimizer once per replica, or once per tensor-parallel rank with
  // ZeRO (once per instance). Per stage there are D tensor-parallel groups, t·d context-parallel groups and t
  // data-parallel groups (reductions, and the collectives of parameters sharded over them; t·I ZeRO shard groups).
  const auto t = static_cast<double>(L.tensor), cp = static_cast<double>(L.context);
  r.compute_energy_j = t * (d * static_cast<double>(m) * fb_energy + (L.zero_stage >= 1 ? instances : d) * opt_energy);
  r.communication_energy_j = (tp_energy * d + cp_energy * t * d / cp + (zero_energy * instances + sharded_energy) * t) * static_cast<double>(m) +
                             dp_energy + send.energy_j * 2 * static_cast<double>((chunks - 1) * m) * t * d;
  // Every chip draws its idle power for the whole step: while it computes, waits in the bubble or for a collective.
  r.idle_energy_j = in.chip.idle_power_w * r.step_time_s * static_cast<double>(r.chips);
  r.energy_j = r.compute_energy_j + r.communication_energy_j + r.idle_energy_j;

  // Memory of the most loaded chip.
  r.memory_capacity_bytes = in.chip.offchip.size_bits / 8;
  r.stage_memory.resize(static_cast<std::size_t>(p));
  for (std::int64_t s = 0; s < p; ++s) {
    const auto si = static_cast<std::size_t>(s);
    auto shard = [&](std::int64_t bytes, int from_stage) {
      return L.zero_stage >= from_stage ? static_cast<std::int64_t>(static_cast<double>(bytes) / shards) : bytes;
    };
    // The weights' low-precision copies are memory only: cast on each rank, never communicated.
    // DeepSpeed's fp32 gradients: whole without ZeRO and in BF16_Optimizer (its ZeRO 1), else the rank's partition
    // (stage_1_and_2's ZeRO 1 and 2, stage 3).
    const auto fp32 = L.zero_stage == 0 || (L.zero_stage == 1 && bf16_optimizer) ? stage_fp32_grads[si]
                                                                                 : shard(stage_fp32_grads[si], 1);
    const auto w = shard(stage_weights[si], 3) + shard(stage_casts[si], 3), gr = shard(stage_grads[si], 2) + fp32,
               st = shard(stage_states[si], 1);
    const auto act = static_cast<std::int64_t>(run.peak_saved_bytes[si]);
    std::int64_t whole = 0;  // ZeRO 3: the gathered parameters of the running (and prefetched) block
    for (std::int64_t c = 0; c < v; ++c) whole = std::max(whole, gathered[static_cast<std::size_t>(c * p + s)]);
    r.stage_memory[si] = {w, gr, st, act, whole};
    if (s == p - 1 && !tied.empty()) {
      r.tied_copy = {shard(tied.weight_bytes, 3), shard(tied.gradient_bytes, 2), shard(tied.state_bytes, 1), 0, 0};
    }
    if (w + gr + st + act + whole > r.memory_bytes) {
      r.memory_bytes = w + gr + st + act + whole;
      r.weight_bytes = w, r.gradient_bytes = gr, r.optimizer_bytes = st, r.activation_bytes = act;
      r.gathered_weight_bytes = whole;
      r.memory_stage = static_cast<int>(s);
    }
  }
}

}  // namespace detail

ParallelStep parallel_step(const ParallelStepInputs& in) {
  detail::ParallelStepModel step(in);
  step.time_operators();
  step.gather_passes();
  step.place_model_parallel_collectives();
  step.count_parameters();
  step.place_zero_collectives();
  step.run_passes();
  step.run_pipeline();
  step.reduce_gradients();
  step.sum_up();
  return std::move(step.r);
}

void finish_system_step(const SystemStep& step, const Graph& graph, const CNGraph& cns, const Accelerator& chip,
                        const ScheduleResult& schedule, ScheduleSummary& summary) {
  ParallelStepInputs in{graph, cns, schedule, chip, step.system, step.layout, step.global_batch, step.plan,
                        step.chunk_of_op, step.block_of_op, step.overlap_grad_reduce, step.zero_overlap_comm,
                        step.overlap_p2p_comm, step.optimizer_instances, step.stack};
  auto r = std::make_shared<ParallelStep>(parallel_step(in));
  ScheduleSummary& s = summary;
  // The rank graph holds every layer; no chip holds them all, so its off-chip peak is no capacity test.
  if (s.peak_offchip_bits > chip.offchip.size_bits) {
    s.capacity_violation -= static_cast<double>(s.peak_offchip_bits - chip.offchip.size_bits) /
                            static_cast<double>(std::max<std::int64_t>(chip.offchip.size_bits, 1));
    s.capacity_violation = std::max(0.0, s.capacity_violation);
    const std::string tag = "off-chip memory '" + chip.offchip.name + "'";
    std::string kept;
    std::size_t from = 0;
    while (from <= s.capacity_reason.size()) {
      std::size_t to = s.capacity_reason.find("; ", from);
      if (to == std::string::npos) to = s.capacity_reason.size();
      const std::string part = s.capacity_reason.substr(from, to - from);
      if (!part.empty() && part.rfind(tag, 0) != 0) kept += (kept.empty() ? "" : "; ") + part;
      from = to + 2;
    }
    s.capacity_reason = kept;
    s.offchip_over_capacity = false;
  }
  if (r->memory_bytes > r->memory_capacity_bytes) {
    s.capacity_violation += static_cast<double>(r->memory_bytes - r->memory_capacity_bytes) /
                            static_cast<double>(std::max<std::int64_t>(r->memory_capacity_bytes, 1));
    if (!s.capacity_reason.empty()) s.capacity_reason += "; ";
    s.capacity_reason += "a chip of pipeline stage " + std::to_string(r->memory_stage) + " holds " +
                         std::to_string(r->memory_bytes) + " B (weights " + std::to_string(r->weight_bytes) +
                         ", gradients " + std::to_string(r->gradient_bytes) + ", optimizer states " +
                         std::to_string(r->optimizer_bytes) + ", activations " + std::to_string(r->activation_bytes) +
                         ") but its off-chip memory '" + chip.offchip.name + "' has " +
                         std::to_string(r->memory_capacity_bytes) + " B";
    s.offchip_over_capacity = true;
  }
  s.parallel = std::move(r);
}

}  // namespace monet
