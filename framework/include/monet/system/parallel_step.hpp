#pragma once
// One training step of a system of chips (docs/datacenter.md#a-training-step-on-a-system-of-chips): the training
// step of ONE tensor-parallel rank over the whole depth of the model, scheduled on one chip for one micro-batch, is cut
// along its module chain into pipeline chunks; each chunk's forward and backward times (with the tensor-parallel
// collectives on their critical path) drive the simulated pipeline schedule over the global batch's
// micro-batches; then the data-parallel gradient reduction and the optimizer step. Every identical layer is
// costed once by the cost cache and counted per chunk, so a 3,072-chip step costs one rank's graph.
#include <cstdint>
#include <string>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/schedule/cn_graph.hpp"
#include "monet/schedule/schedule.hpp"
#include "monet/system/pipeline_schedule.hpp"
#include "monet/system/system.hpp"

namespace monet {

struct ParallelStep {
  std::int64_t chips = 1;
  std::int64_t micro_batches = 1;  // m = global batch / (micro-batch · data)
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  // Time (s). step = pipeline + data-parallel gradient reduction + optimizer; the pipeline's time is the
  // busiest stage's compute + its exposed collectives + its blocking sends + the bubble.
  double step_time_s = 0;
  double compute_s = 0;           // busiest stage: forward and backward passes (recompute included), m micro-batches
  double recompute_s = 0;         // of which recomputation
  double tensor_comm_s = 0;       // busiest stage: what its passes waited for tensor-parallel collectives
  double context_comm_s = 0;      // busiest stage: ... for context-parallel exchanges of keys and values
  double sharded_comm_s = 0;      // busiest stage: ... for collectives of parameters sharded over the data-parallel
                                  // group (a DLRM's all-to-alls of indices and pooled embeddings)
  double tensor_comm_hidden_s = 0;   // busiest stage: tensor-parallel collectives' time beside computation
  double context_comm_hidden_s = 0;  // (not in the step's split: they overlapped operators)
  double data_comm_hidden_s = 0;     // ... ZeRO 2-3's collectives in the passes, and the overlapped reduction's
                                     // buckets beside the backward passes (of the stage whose reduction ends last)
  double sharded_comm_hidden_s = 0;  // ... collectives of sharded parameters
  double pipeline_comm_s = 0;     // busiest stage: what its stream waits for its own point-to-point sends (Megatron's
                                  // sends block until they complete)
  double bubble_s = 0;            // pipeline idle time of the busiest stage: waiting for its inputs
  double data_comm_s = 0;         // data-parallel collectives: what the gradient reduction (all-reduce, or ZeRO's
                                  // reduce-scatter / all-gather) adds after the pipeline, and, with ZeRO 2-3, the
                                  // busiest stage's in-pass collectives
  double optimizer_s = 0;
  double pipeline_send_s = 0;     // one micro-batch's activations between consecutive chunks
  double tied_comm_s = 0;         // the all-reduce of tied parameters' gradients between the first and the last
                                  // stage (system/tied_parameters.hpp), part of data_comm_s; 0 with one stage
  // Throughput: FLOPs = 2 x MACs; model FLOPs leave recomputation out (Megatron's MFU), hardware FLOPs do not.
  double model_flops = 0;         // of the whole step, every chip
  double hardware_flops = 0;
  double model_tflops_per_chip = 0;
  double hardware_tflops_per_chip = 0;
  double peak_tflops_per_chip = 0;  // 2 x PEs x clock
  double mfu = 0;
  double hfu = 0;
  // Energy of the step, every chip and link (J): the chips' dynamic energy from the schedule, the links' per bit,
  // and every chip's idle power over the whole step (bubbles and exposed communication included).
  double energy_j = 0;
  double compute_energy_j = 0;
  double communication_energy_j = 0;
  double idle_energy_j = 0;
  // Memory of the most loaded chip (B): parameters, their gradients, optimizer states (master weights included)
  // with ZeRO's sharding (stage 1: states / S, 2: + gradients, 3: + parameters; S = d·cp / optimizer instances),
  // and the activations its in-flight micro-batches keep (from the simulated schedule).
  std::int64_t weight_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_bytes = 0;
  std::int64_t activation_bytes = 0;
  std::int64_t gathered_weight_bytes = 0;  // ZeRO 3: the whole parameters of the blocks gathered at once
  std::int64_t memory_bytes = 0;
  std::int64_t memory_capacity_bytes = 0;  // the chip's off-chip memory
  int memory_stage = 0;                    // the stage whose chip holds the most
  // Per pipeline stage: what one of its chips holds (the fields above are the most loaded stage's), and of that
  // what the last stage holds for its copy of the tied parameters (ZeRO-sharded as the first stage's).
  struct StageMemory {
    std::int64_t weights = 0, gradients = 0, optimizer_states = 0, activations = 0, gathered_weights = 0;
    [[nodiscard]] std::int64_t total() const { return weights + gradients + optimizer_states + activations + gathered_weights; }
  };
  std::vector<StageMemory> stage_memory;
  StageMemory tied_copy;  // weights, gradients and optimizer_states only
};

/// What a prepared experiment on a system needs besides the schedule (the evaluator holds it).
struct SystemStep {
  System system;
  ParallelLayout layout;
  std::int64_t global_batch = 0;
  TensorParallelPlan plan;
  SourceLocation where;                 // [parallelism], for configuration errors
  std::vector<std::int64_t> chunk_of_op;  // per operator of the rank's step: its model chunk (c·p + stage)
  std::vector<int> block_of_op;           // per operator: its block of the module chain (ZeRO's gathers go by block)
  bool overlap_grad_reduce = false;       // the data-parallel reduction in buckets during the backward passes
  bool zero_overlap_comm = false;         // ZeRO 2-3's collectives beside the passes' operators (DeepSpeed's overlap_comm)
  bool overlap_p2p_comm = false;          // pipeline sends that do not block their stage (Megatron-Core's option)
  std::int64_t optimizer_instances = 1;   // ZeRO's shards replicated over this many groups of consecutive ranks
  ParallelStack stack = ParallelStack::megatron;  // Megatron-LM's engine, or Megatron-DeepSpeed's (DeepSpeed's)
};

/// Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split: the embedding
/// (what comes before the layers) or the loss (what comes after them) counts as one layer when the layers are cut
/// into chunks, so the first (last) chunk holds one layer fewer (Llama 3's balanced pipeline).
struct PipelineSplit {
  bool embedding = false;
  bool loss = false;
};

/// The rank step's module chain: its blocks, and among them the repeated layers (the longest run of blocks named
/// PREFIX.<index>) that pipeline stages split. Backward and recompute operators follow their forward operator,
/// optimizer updates their parameter's first reader. It depends on the graph alone: variants of a step share it.
struct PipelineBlocks {
  std::vector<int> of_op;       // per operator: block index
  std::size_t count = 0;
  std::size_t first_layer = 0;  // the repeated layers are blocks [first_layer, first_layer + layers)
  std::size_t layers = 0;
};
MONET_API PipelineBlocks pipeline_blocks(const Graph& rank_step);

/// The ranks of a data-parallel group (d·cp ranks, t apart) on one node of the system: its data_in_node subgroup.
MONET_API std::int64_t data_ranks_per_node(const System& system, const ParallelLayout& layout);

/// Checks a layout against the rank's step and the system, and cuts the step's module chain (`blocks`, of
/// `rank_step`) into chunks: the repeated layers evenly (with `split`, the embedding and the loss counted as layers),
/// what comes before them with the first chunk, after them with the last. UserError (at `where`) when more chips
/// than the system has, layers not divisible by pipeline x virtual_pipeline, a global batch (0: micro-batch x data)
/// not divisible by micro-batch x data, interleaving with micro-batches not divisible by pipeline, or a step built
/// for another number of data-parallel ranks per node (TensorParallelPlan::data_ranks_per_node).
MONET_API SystemStep make_system_step(System system, ParallelLayout layout, std::int64_t global_batch,
                                      TensorParallelPlan plan, SourceLocation where, const Graph& rank_step,
                                      const PipelineBlocks& blocks, const Accelerator& chip, PipelineSplit split = {});

struct ParallelStepInputs {
  const Graph& step;               // one rank's training step, one micro-batch, every layer
  const CNGraph& cns;
  const ScheduleResult& schedule;  // of `step` on one chip
  const Accelerator& chip;
  const System& system;
  ParallelLayout layout;
  std::int64_t global_batch = 1;
  const TensorParallelPlan& plan;
  const std::vector<std::int64_t>& chunk_of_op;
  const std::vector<int>& block_of_op;
  bool overlap_grad_reduce = false;
  bool zero_overlap_comm = false;
  bool overlap_p2p_comm = false;
  // Megatron-Core's num_distributed_optimizer_instances (HSDP): ZeRO shards over S = d·cp / I consecutive ranks of
  // the data-parallel group; after each such group's reduce-scatter the I copies of a shard are all-reduced.
  std::int64_t optimizer_instances = 1;
  // DeepSpeed's pipeline engine, its ZeRO 1 and its gradient reduction instead of Megatron-LM's
  // (docs/datacenter.md#the-megatron-deepspeed-stack-stack--deepspeed).
  ParallelStack stack = ParallelStack::megatron;
};

/// The system's step from one rank's schedule (make_system_step has checked the layout).
MONET_API ParallelStep parallel_step(const ParallelStepInputs& in);

/// Makes `summary` (of `schedule`, one rank's step on one chip; it may be schedule.summary) the system's step: sets
/// summary.parallel and replaces the off-chip capacity check of the whole-depth rank graph by the memory of the most
/// loaded chip. The schedule itself is only read, so the points of a search can share it.
MONET_API void finish_system_step(const SystemStep& step, const Graph& graph, const CNGraph& cns,
                                  const Accelerator& chip, const ScheduleResult& schedule, ScheduleSummary& summary);

}  // namespace monet
