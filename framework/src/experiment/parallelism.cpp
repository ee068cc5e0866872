#include "monet/experiment/parallelism.hpp"

#include <utility>

#include "monet/training/recompute.hpp"

namespace monet {

const std::vector<std::string>& parallelism_kernel_keys() {
  static const std::vector<std::string> keys{"tensor",    "pipeline",   "data",        "virtual_pipeline",
                                             "sequence_parallel", "recompute", "zero_stage", "global_batch",
                                             "overlap_grad_reduce", "context", "zero_overlap_comm",
                                             "overlap_p2p_comm", "account_for_embedding_in_pipeline_split",
                                             "account_for_loss_in_pipeline_split",
"num_distributed_optimizer_instances", "stack"};
  return keys;
}

Parallelism read_parallelism(TableReader& t, bool training, CheckpointPolicy& checkpoint) {
  Parallelism p;
  p.given = true;
  p.where = t.where();
  p.tensor = t.integer("tensor", Bounds::at_least(1)).value_or(1);
  p.pipeline = t.integer("pipeline", Bounds::at_least(1)).value_or(1);
  p.data = t.integer("data", Bounds::at_least(1)).value_or(1);
  p.context = t.integer("context", Bounds::at_least(1)).value_or(1);
  p.virtual_pipeline = t.integer("virtual_pipeline", Bounds::at_least(1)).value_or(1);
  p.sequence_parallel = t.boolean("sequence_parallel").value_or(false);
  p.recompute = t.choice("recompute", {"none", "selective", "full"}).value_or("none");
  p.zero_stage = t.integer("zero_stage", Bounds{0.0, 3.0, false, false}).value_or(0);
  p.optimizer_instances = t.integer("num_distributed_optimizer_instances", Bounds::at_least(1)).value_or(1);
  p.global_batch = t.integer("global_batch", Bounds::at_least(1)).value_or(0);
  p.overlap_grad_reduce = t.boolean("overlap_grad_reduce").value_or(false);
  p.zero_overlap_comm = t.boolean("zero_overlap_comm").value_or(false);
  p.overlap_p2p_comm = t.boolean("overlap_p2p_comm").value_or(false);
  p.account_for_embedding = t.boolean("account_for_embedding_in_pipeline_split").value_or(false);
  p.account_for_loss = t.boolean("account_for_loss_in_pipeline_split").value_or(false);
  p.stack = t.choice("stack", {"megatron", "deepspeed"}).value_or("megatron");

  // Megatron's own consistency rules first, so a configuration is judged before it is refused as not built.
  if (p.virtual_pipeline > 1 && p.pipeline < 2) {
    t.fail("virtual_pipeline", "interleaving " + std::to_string(p.virtual_pipeline) +
                                   " chunks per stage needs pipeline >= 2 (pipeline = " + std::to_string(p.pipeline) + ")");
  }
  if (p.overlap_p2p_comm && p.virtual_pipeline < 2) {
    t.fail("overlap_p2p_comm", "Megatron-Core overlaps the pipeline's sends only in its interleaved schedule: it "
                               "needs virtual_pipeline >= 2 (virtual_pipeline = " + std::to_string(p.virtual_pipeline) + ")");
  }
  for (const auto& [key, on] : {std::pair<const char*, bool>{"account_for_embedding_in_pipeline_split", p.account_for_embedding},
                                {"account_for_loss_in_pipeline_split", p.account_for_loss}}) {
    if (on && p.pipeline < 2) {
      t.fail(key, "counts a layer in the pipeline's split of the layers into stages: it needs pipeline >= 2 "
                  "(pipeline = " + std::to_string(p.pipeline) + ")");
    }
  }
  if (p.sequence_parallel && p.tensor < 2) {
    t.fail("sequence_parallel", "sequence parallelism splits over the tensor-parallel group: it needs tensor >= 2");
  }
  // Context-parallel ranks hold the same parameters: gradients are reduced (and ZeRO shards) over data x context.
  if (p.zero_stage > 0 && p.data * p.context < 2) {
    t.fail("zero_stage", "ZeRO stage " + std::to_string(p.zero_stage) +
                             " shards over data-parallel (and context-parallel) ranks: it needs data x context >= 2");
  }
  if (p.optimizer_instances > 1) {
    const std::int64_t D = p.data * p.context, I = p.optimizer_instances;
    if (p.zero_stage < 1) {
      t.fail("num_distributed_optimizer_instances", "replicates ZeRO's shards over " + std::to_string(I) +
                                                        " instances; without ZeRO (zero_stage = 0) nothing is sharded");
    }
    if (D % I != 0 || D / I < 2) {
      t.fail("num_distributed_optimizer_instances",
             std::to_string(I) + " instances must divide data x context = " + std::to_string(D) +
                 " into groups of at least 2 ranks (ZeRO shards within each)");
    }
  }
  if (p.overlap_grad_reduce && p.data * p.context < 2) {
    t.fail("overlap_grad_reduce", "overlapping the data-parallel gradient reduction needs data x context >= 2");
  }
  if (p.overlap_grad_reduce && p.zero_stage >= 2) {
    t.fail("overlap_grad_reduce", "ZeRO stage " + std::to_string(p.zero_stage) + " reduce-scatters the gradients in "
                                      "every micro-batch's backward pass (on its critical path); overlapping them is "
                                      "not modelled: use zero_stage <= 1 or overlap_grad_reduce = false");
  }
  if (p.zero_overlap_comm && p.zero_stage < 2) {
    t.fail("zero_overlap_comm", "overlaps ZeRO 2-3's collectives in the passes; zero_stage = " + std::to_string(p.zero_stage) +
                                    " has none (the reduction after the pass overlaps with overlap_grad_reduce)");
  }
  if (p.stack == "deepspeed") {
    // What DeepSpeed's pipeline engine (Megatron-DeepSpeed's) does not do, at the key that asks for it.
    if (p.virtual_pipeline > 1) {
      t.fail("virtual_pipeline", "DeepSpeed's pipeline engine (stack = \"deepspeed\") runs one chunk per stage: it "
                                 "does not interleave (virtual_pipeline = " + std::to_string(p.virtual_pipeline) + ")");
    }
    if (p.zero_stage >= 2 && p.pipeline > 1) {
      t.fail("zero_stage", "DeepSpeed's pipeline engine (stack = \"deepspeed\") runs ZeRO stage 0 or 1 only (ZeRO 2 "
                           "and 3 are incompatible with its pipeline parallelism); zero_stage = " +
                               std::to_string(p.zero_stage) + " with pipeline = " + std::to_string(p.pipeline));
    }
    if (p.overlap_grad_reduce) {
      t.fail("overlap_grad_reduce", "Megatron's DDP buckets; DeepSpeed's engine (stack = \"deepspeed\") reduces the "
                                    "gradients after the last backward pass");
    }
    if (p.optimizer_instances > 1) {
      t.fail("num_distributed_optimizer_instances", "Megatron-Core's distributed-optimizer instances; not part of "
                                                    "stack = \"deepspeed\"");
    }
  }
  if (p.recompute != "none") {
    if (!training) t.fail("recompute", "recomputation needs a training step ([training] mode = \"training\")");
    if (checkpoint.kind != CheckpointPolicy::Kind::none) {
      t.fail("recompute", "[training.checkpoint] already chooses what to recompute; keep one of the two");
    }
    const RecomputeSemantics semantics = checkpoint.semantics;  // [training.checkpoint] semantics may say what reruns
    checkpoint = recompute_policy(p.recompute, t.where("recompute"));
    checkpoint.semantics = semantics;
  }
  for (const char* key : {"tensor", "context", "pipeline", "data"}) {
    const std::string k = key;
    const std::int64_t v = k == "tensor" ? p.tensor : k == "context" ? p.context : k == "pipeline" ? p.pipeline : p.data;
    if (v > 1 && !p.where_chips.known()) p.where_chips = t.where(key);
  }
  if (p.chips() > 1 && !training) {
    throw UserError(p.where_chips, "a step over several chips is a training step ([training] mode = \"training\")");
  }
  return p;
}

std::string parallelism_toml(const Parallelism& p) {
  return "tensor = " + std::to_string(p.tensor) + "\npipeline = " + std::to_string(p.pipeline) +
         "\ndata = " + std::to_string(p.data) + (p.context > 1 ? "\ncontext = " + std::to_string(p.context) : "") +
         "\nvirtual_pipeline = " + std::to_string(p.virtual_pipeline) +
         "\nsequence_parallel = " + (p.sequence_parallel ? "true" : "false") + "\nrecompute = \"" + p.recompute +
         "\"\nzero_stage = " + std::to_string(p.zero_stage) + "\n" +
         (p.optimizer_instances > 1 ? "num_distributed_optimizer_instances = " + std::to_string(p.optimizer_instances) + "\n" : "") +
         (p.global_batch > 0 ? "global_batch = " + std::to_string(p.global_batch) + "\n" : "") +
         (p.overlap_grad_reduce ? "overlap_grad_reduce = true\n" : "") +
         (p.zero_overlap_comm ? "zero_overlap_comm = true\n" : "") +
         (p.overlap_p2p_comm ? "overlap_p2p_comm = true\n" : "") +
         (p.account_for_embedding ? "account_for_embedding_in_pipeline_split = true\n" : "") +
         (p.account_for_loss ? "account_for_loss_in_pipeline_split = true\n" : "") + "stack = \"" + p.stack + "\"\n";
}

}  // namespace monet
