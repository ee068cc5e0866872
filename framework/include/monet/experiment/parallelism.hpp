#pragma once
// [parallelism]: how a training step is spread over chips, in Megatron-LM's names (docs/datacenter.md). `recompute`
// becomes the step's checkpoint policy (training/recompute.hpp); more than one chip needs a system of chips
// ([architecture] system), over which system/parallel_step.hpp evaluates the step.
#include <cstdint>
#include <string>
#include <vector>

#include "monet/config/toml_reader.hpp"
#include "monet/training/checkpoint.hpp"

namespace monet {

struct Parallelism {
  std::int64_t tensor = 1;            // t: Megatron's column/row split of each layer
  std::int64_t pipeline = 1;          // p: stages of consecutive layers
  std::int64_t data = 1;              // d: replicas; chips = t·cp·p·d
  std::int64_t context = 1;           // cp: the sequence split over cp ranks (Megatron's context parallelism)
  std::int64_t virtual_pipeline = 1;  // v: interleaved chunks per pipeline stage
  bool sequence_parallel = false;     // norms and dropouts split along the sequence over the tensor group
  std::string recompute = "none";     // none | selective | full
  std::int64_t zero_stage = 0;        // 0 (plain data parallel) .. 3 (ZeRO-3 / FSDP)
  std::int64_t optimizer_instances = 1;  // Megatron-Core's --num-distributed-optimizer-instances: ZeRO shards over
                                         // data·cp / this many consecutive ranks, replicated across the instances
  std::int64_t global_batch = 0;      // samples per step over every replica (0: not given = micro-batch x data)
  bool overlap_grad_reduce = false;   // Megatron's --overlap-grad-reduce: DP reduction in buckets during backward
  bool zero_overlap_comm = false;     // DeepSpeed's overlap_comm: ZeRO 2-3's collectives beside the computation
  bool overlap_p2p_comm = false;      // Megatron-Core's --overlap-p2p-communication: the interleaved schedule's
                                      // pipeline sends do not block their stage
  bool account_for_embedding = false; // Megatron-Core's --account-for-embedding-in-pipeline-split
  bool account_for_loss = false;      // Megatron-Core's --account-for-loss-in-pipeline-split
  std::string stack = "megatron";     // megatron | deepspeed: whose pipeline engine, ZeRO 1 and reduction (Megatron-DeepSpeed)
  bool given = false;                 // the experiment has a [parallelism] table
  SourceLocation where;               // the table
  SourceLocation where_chips;         // the first of tensor, pipeline, data above 1 (unknown: one chip)

  [[nodiscard]] std::int64_t chips() const { return tensor * context * pipeline * data; }
};

/// The keys read_parallelism reads (the rest of the table is the parallelism plugin's parameters).
MONET_API const std::vector<std::string>& parallelism_kernel_keys();

/// Reads and checks [parallelism]'s kernel keys (not `plugin` nor the plugin's parameters; finish() is the caller's). `checkpoint` is the experiment's [training.checkpoint] policy: `recompute`
/// other than "none" replaces it (both at once is an error); `training` says whether the experiment trains.
/// Every mistake is a UserError at its key.
MONET_API Parallelism read_parallelism(TableReader& t, bool training, CheckpointPolicy& checkpoint);

/// The table's body for resolved.toml.
MONET_API std::string parallelism_toml(const Parallelism& p);

}  // namespace monet
