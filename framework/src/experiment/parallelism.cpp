#include "monet/experiment/parallelism.hpp"

#include "monet/training/recompute.hpp"

namespace monet {

Parallelism read_parallelism(TableReader& t, bool training, CheckpointPolicy& checkpoint) {
  Parallelism p;
  p.given = true;
  p.tensor = t.integer("tensor", Bounds::at_least(1)).value_or(1);
  p.pipeline = t.integer("pipeline", Bounds::at_least(1)).value_or(1);
  p.data = t.integer("data", Bounds::at_least(1)).value_or(1);
  p.virtual_pipeline = t.integer("virtual_pipeline", Bounds::at_least(1)).value_or(1);
  p.sequence_parallel = t.boolean("sequence_parallel").value_or(false);
  p.recompute = t.choice("recompute", {"none", "selective", "full"}).value_or("none");
  p.zero_stage = t.integer("zero_stage", Bounds{0.0, 3.0, false, false}).value_or(0);
  t.finish();

  // Megatron's own consistency rules first, so a configuration is judged before it is refused as not built.
  if (p.virtual_pipeline > 1 && p.pipeline < 2) {
    t.fail("virtual_pipeline", "interleaving " + std::to_string(p.virtual_pipeline) +
                                   " chunks per stage needs pipeline >= 2 (pipeline = " + std::to_string(p.pipeline) + ")");
  }
  if (p.sequence_parallel && p.tensor < 2) {
    t.fail("sequence_parallel", "sequence parallelism splits over the tensor-parallel group: it needs tensor >= 2");
  }
  if (p.zero_stage > 0 && p.data < 2) {
    t.fail("zero_stage", "ZeRO stage " + std::to_string(p.zero_stage) +
                             " shards over data-parallel replicas: it needs data >= 2");
  }
  if (p.recompute != "none") {
    if (!training) t.fail("recompute", "recomputation needs a training step ([training] mode = \"training\")");
    if (checkpoint.kind != CheckpointPolicy::Kind::none) {
      t.fail("recompute", "[training.checkpoint] already chooses what to recompute; keep one of the two");
    }
    checkpoint = recompute_policy(p.recompute, t.where("recompute"));
  }
  for (const char* key : {"tensor", "pipeline", "data"}) {
    const std::int64_t v = std::string(key) == "tensor" ? p.tensor : std::string(key) == "pipeline" ? p.pipeline : p.data;
    if (v > 1) {
      t.fail(key, std::string(key) + " = " + std::to_string(v) +
                      ": steps over several chips are not modelled yet (issue 14); monet evaluates one chip");
    }
  }
  return p;
}

std::string parallelism_toml(const Parallelism& p) {
  return "tensor = " + std::to_string(p.tensor) + "\npipeline = " + std::to_string(p.pipeline) +
         "\ndata = " + std::to_string(p.data) + "\nvirtual_pipeline = " + std::to_string(p.virtual_pipeline) +
         "\nsequence_parallel = " + (p.sequence_parallel ? "true" : "false") + "\nrecompute = \"" + p.recompute +
         "\"\nzero_stage = " + std::to_string(p.zero_stage) + "\n";
}

}  // namespace monet
