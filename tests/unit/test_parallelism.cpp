// [parallelism] in experiment files (docs/datacenter.md): Megatron's names, recompute as a checkpoint policy, and
// a located message for every inconsistent or not-yet-modelled value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/experiment/runner.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

std::string experiment_text(const std::string& parallelism, const std::string& mode = "training") {
  const auto src = test::source_dir();
  return "[experiment]\nname = \"t\"\n\n[workload]\nfile = \"" + (src / "workloads/gpt/gpt_small_test.toml").string() +
         "\"\n\n[training]\nmode = \"" + mode + "\"\n\n[architecture]\nfile = \"" +
         (src / "architectures/dual_core.toml").string() + "\"\n\n[parallelism]\n" + parallelism;
}

class ParallelismTest : public ::testing::Test {
 protected:
  Experiment load(const std::string& text) { return load_experiment(dir_.write("exp.toml", text), {}, Registry::global()); }
  std::string fail(const std::string& text) {
    return test::error_of([&] { load(text); });
  }
  test::ScratchDir dir_;
};

TEST_F(ParallelismTest, RecomputeBecomesTheCheckpointPolicy) {
  Experiment e = load(experiment_text("tensor = 1\nrecompute = \"selective\"\n"));
  EXPECT_TRUE(e.parallelism.given);
  EXPECT_EQ(e.parallelism.chips(), 1);
  EXPECT_EQ(e.training.checkpoint.kind, CheckpointPolicy::Kind::modules);
  EXPECT_EQ(e.training.checkpoint.modules, std::vector<std::string>{"layers.*.self_attention.core_attention"});
  e = load(experiment_text("recompute = \"full\"\n"));
  EXPECT_EQ(e.training.checkpoint.modules, std::vector<std::string>{"layers.*"});
  e = load(experiment_text("recompute = \"none\"\n"));
  EXPECT_EQ(e.training.checkpoint.kind, CheckpointPolicy::Kind::none);
}

TEST_F(ParallelismTest, MistakesAreLocated) {
  // [parallelism] is on line 13 of experiment_text; its first key on line 14.
  // Several chips need a system of chips (tests/e2e/test_multichip.cpp runs them on one).
  EXPECT_THAT(fail(experiment_text("tensor = 8\n")),
              HasSubstr("exp.toml:14:10: error: a step over 8 chips needs a system of chips: [architecture] system"));
  EXPECT_THAT(fail(experiment_text("data = 4\n")), HasSubstr("exp.toml:14:8: error: a step over 4 chips"));
  EXPECT_THAT(fail(experiment_text("virtual_pipeline = 2\n")),
              HasSubstr("parallelism.virtual_pipeline: interleaving 2 chunks per stage needs pipeline >= 2"));
  EXPECT_THAT(fail(experiment_text("sequence_parallel = true\n")),
              HasSubstr("parallelism.sequence_parallel: sequence parallelism splits over the tensor-parallel group"));
  EXPECT_THAT(fail(experiment_text("zero_stage = 1\n")), HasSubstr("parallelism.zero_stage: ZeRO stage 1"));
  EXPECT_THAT(fail(experiment_text("zero_stage = 4\n")), HasSubstr("parallelism.zero_stage"));
  EXPECT_THAT(fail(experiment_text("data = 4\nnum_distributed_optimizer_instances = 2\n")),
              HasSubstr("exp.toml:15:39: error: parallelism.num_distributed_optimizer_instances: replicates ZeRO's shards"));
  EXPECT_THAT(fail(experiment_text("data = 4\nzero_stage = 1\nnum_distributed_optimizer_instances = 4\n")),
              HasSubstr("4 instances must divide data x context = 4 into groups of at least 2 ranks"));
  EXPECT_THAT(fail(experiment_text("recompute = \"partial\"\n")), HasSubstr("parallelism.recompute"));
  EXPECT_THAT(fail(experiment_text("tensr = 2\n")), HasSubstr("tensr"));
  EXPECT_THAT(fail(experiment_text("recompute = \"full\"\n", "inference")),
              HasSubstr("parallelism.recompute: recomputation needs a training step"));
  const std::string both = test::replace_first(experiment_text("recompute = \"full\"\n"), "[architecture]",
                                         "[training.checkpoint]\nsegments = 2\n\n[architecture]");
  EXPECT_THAT(fail(both), HasSubstr("[training.checkpoint] already chooses what to recompute"));
}

// stack names whose runtime the step follows; what DeepSpeed's pipeline engine does not do is refused at its key.
TEST_F(ParallelismTest, StackIsMegatronOrDeepSpeed) {
  EXPECT_EQ(load(experiment_text("tensor = 1\n")).parallelism.stack, "megatron");
  const Experiment e = load(experiment_text("stack = \"deepspeed\"\n"));
  EXPECT_EQ(e.parallelism.stack, "deepspeed");
  EXPECT_THAT(parallelism_toml(e.parallelism), HasSubstr("stack = \"deepspeed\"\n"));
  EXPECT_THAT(fail(experiment_text("stack = \"colossal\"\n")),
              HasSubstr("exp.toml:14:9: error: parallelism.stack: 'colossal' is not one of 'megatron', 'deepspeed'"));
  EXPECT_THAT(fail(experiment_text("stack = \"deepspeed\"\ndata = 4\noverlap_grad_reduce = true\n")),
              HasSubstr("exp.toml:16:23: error: parallelism.overlap_grad_reduce: Megatron's DDP buckets"));
  EXPECT_THAT(fail(experiment_text("stack = \"deepspeed\"\ndata = 4\nzero_stage = 1\nnum_distributed_optimizer_instances = 2\n")),
              HasSubstr("parallelism.num_distributed_optimizer_instances: Megatron-Core's distributed-optimizer instances"));
}

}  // namespace
}  // namespace monet
