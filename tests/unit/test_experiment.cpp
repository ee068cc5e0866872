// Experiment files: defaults, overrides, and the messages for every kind of mistake.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/experiment/runner.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

/// A minimal experiment pointing at the project's quickstart workload and architecture.
std::string experiment_text(const std::string& extra = "") {
  const auto src = test::source_dir();
  return "[experiment]\nname = \"t\"\nseed = 7\n\n[workload]\nfile = \"" + (src / "workloads/tiny_cnn.toml").string() +
         "\"\n\n[architecture]\nfile = \"" + (src / "architectures/dual_core.toml").string() + "\"\n" + extra;
}

using test::error_of;

class ExperimentTest : public ::testing::Test {
 protected:
  Experiment load(const std::string& text, const std::vector<std::string>& sets = {}) {
    file_ = dir_.write("exp.toml", text);
    return load_experiment(file_, sets, Registry::global());
  }
  std::string fail(const std::string& text, const std::vector<std::string>& sets = {}) {
    return error_of([&] { load(text, sets); });
  }
  std::string path() const { return (dir_.path() / "exp.toml").string(); }

  test::ScratchDir dir_;
  std::filesystem::path file_;
};

TEST_F(ExperimentTest, DefaultsAreFilledIn) {
  const Experiment e = load(experiment_text());
  EXPECT_EQ(e.name, "t");
  EXPECT_EQ(e.seed, 7u);
  EXPECT_EQ(e.frontend.name(), "toml");  // from the .toml extension
  EXPECT_EQ(e.frontend.params.get_int("batch"), 0);
  EXPECT_EQ(e.training_mode, "inference");
  EXPECT_EQ(e.fusion.name(), "layer_by_layer");
  EXPECT_EQ(e.search.name(), "fixed");
  EXPECT_EQ(e.core_cost_model, (std::vector<std::string>{"roofline", "roofline"}));
  EXPECT_DOUBLE_EQ(e.cost_models.at("roofline").params.get_number("utilization"), 1.0);
  EXPECT_EQ(e.output_dir, std::filesystem::path("results/t"));
  EXPECT_TRUE(e.overwrite);
}

TEST_F(ExperimentTest, SetOverridesValuesAndCreatesTables) {
  const Experiment e = load(experiment_text(), {"experiment.seed=11", "cost_model.roofline.utilization=0.25",
                                                "output.dir=elsewhere", "workload.batch=4"});
  EXPECT_EQ(e.seed, 11u);
  EXPECT_DOUBLE_EQ(e.cost_models.at("roofline").params.get_number("utilization"), 0.25);
  EXPECT_EQ(e.output_dir, std::filesystem::path("elsewhere"));
  EXPECT_EQ(e.frontend.params.get_int("batch"), 4);
}

TEST_F(ExperimentTest, QuotedKeySegmentsKeepTheirDots) {
  // As in TOML: a constraint on a dotted metric name is reachable from --set.
  toml::table root;
  apply_override(root, "space.constraints.\"training.peak_activation_bytes\".max=5");
  EXPECT_EQ(root.at_path("space.constraints").as_table()->get("training.peak_activation_bytes")->as_table()->get("max")->value<int>(), 5);
  EXPECT_EQ(error_of([&] { apply_override(root, "space.\"open.max=1"); }),
            "error: --set 'space.\"open.max=1': unterminated quote in 'space.\"open.max'");
}

TEST_F(ExperimentTest, BadOverridesNameTheOverride) {
  EXPECT_EQ(fail(experiment_text(), {"cost_model.roofline.utilization=2"}),
            "--set cost_model.roofline.utilization=2:1:9: error: cost_model.roofline.utilization: expected a value in "
            "(0, 1], got 2");
  EXPECT_EQ(fail(experiment_text(), {"seed"}), "error: --set 'seed': expected section.key=value");
  EXPECT_EQ(fail(experiment_text(), {"experiment..seed=1"}),
            "error: --set 'experiment..seed=1': empty key segment in 'experiment..seed'");
  EXPECT_EQ(fail(experiment_text(), {"experiment.name.x=1"}),
            "--set experiment.name.x=1: error: 'name' is a string, not a table");
}

TEST_F(ExperimentTest, UnknownSectionSuggestsTheClosest) {
  EXPECT_EQ(fail(experiment_text("\n[serach]\nplugin = \"fixed\"\n")),
            path() + ":11:2: error: unknown key 'serach' (did you mean 'search'?); valid keys here: allocation, "
                     "architecture, compat, cost_model, experiment, fusion, output, parallelism, plugins, precision, "
                     "provenance, quality, schedule, search, space, training, workload");
}

TEST_F(ExperimentTest, UnknownPluginListsTheAvailableOnes) {
  EXPECT_EQ(fail(experiment_text("\n[fusion]\nplugin = \"layer_by_layr\"\n")),
            path() + ":12:10: error: no fusion plugin named 'layer_by_layr' (did you mean 'layer_by_layer'?); "
                     "available: fused_stacks, layer_by_layer");
}

TEST_F(ExperimentTest, PluginParametersAreValidated) {
  EXPECT_EQ(fail(experiment_text("\n[cost_model.roofline]\nutilization = \"high\"\n")),
            path() + ":12:15: error: cost_model.roofline.utilization: expected a number (a value in (0, 1]), got a "
                     "string");
  EXPECT_THAT(fail(experiment_text("\n[search]\nplugin = \"fixed\"\niterations = 3\n")),
              HasSubstr(path() + ":13:1: error: unknown key 'search.iterations'; valid keys here: plugin"));
  EXPECT_EQ(fail(experiment_text("\n[cost_model.loopnets]\nx = 1\n")),
            path() + ":11:1: error: no cost_model plugin named 'loopnets' (did you mean 'loopnest'?); available: "
                     "gpu, loopnest, roofline, table");
  EXPECT_EQ(fail(experiment_text("\n[cost_model.loopnest]\nx = 1\n")),
            path() + ":12:1: error: unknown key 'cost_model.loopnest.x'; valid keys here: compat, "
                     "compat_stream_bandwidth_rounding, compat_stream_elementwise_dims, compat_stream_mapping_objective, "
                     "compat_stream_pooling_channel_loop, compat_stream_zigzag_model, lpf_limit, mixed_spatial, objective, "
                     "search, shared_memories, "
                     "spatial_mappings");
}

TEST_F(ExperimentTest, MissingFilesAndSections) {
  EXPECT_EQ(fail("[experiment]\nname = \"x\"\n"), path() + ": error: missing required table [workload]");
  EXPECT_THAT(fail("[workload]\nfile = \"nope.toml\"\n"),
              HasSubstr(path() + ":2:8: error: workload.file: file not found: "));
  dir_.write("model.xyz", "");
  EXPECT_EQ(fail("[workload]\nfile = \"model.xyz\"\n"),
            path() + ":2:8: error: workload.file: no workload frontend reads '.xyz' files; frontends: onnx (.onnx), toml (.toml); "
                     "name one with [workload] plugin = \"...\"");
}

TEST_F(ExperimentTest, AllocationNamesAreChecked) {
  EXPECT_EQ(fail(experiment_text("\n[allocation.kind]\nconv = [\"core3\"]\n")),
            path() + ":12:8: error: allocation.kind.conv: 'core3' is not a core of accelerator 'dual_core' (did you "
                     "mean 'core0' or 'core1'?); cores: core0, core1");
  EXPECT_THAT(fail(experiment_text("\n[allocation.kind]\nconvolution = [\"core0\"]\n")),
              HasSubstr(path() + ":12:15: error: allocation.kind.convolution: 'convolution' is not an operator kind"));
  // Operator names and core capabilities need the workload: checked by prepare(), still before any work.
  Experiment e = load(experiment_text("\n[allocation.operator]\nconv2 = [\"core0\"]\n"));
  EXPECT_EQ(error_of([&] { prepare(std::move(e), Registry::global()); }),
            path() + ":12:9: error: allocation.operator: the workload has no operator 'conv2' (did you mean 'conv1'?)");
  Experiment f = load(experiment_text("\n[allocation.kind]\nconv = [\"core1\"]\n"));
  EXPECT_THAT(error_of([&] { prepare(std::move(f), Registry::global()); }),
              HasSubstr(path() + ":12:8: error: core 'core1' cannot run conv operators such as 'conv1'"));
}

TEST_F(ExperimentTest, TrainingModeResolvesItsPlugins) {
  const Experiment e = load(experiment_text("\n[training]\nmode = \"training\"\nmicro_batches = 2\n"));
  EXPECT_EQ(e.backward->name(), "autodiff");
  EXPECT_EQ(e.optimizer->name(), "sgd");
  EXPECT_EQ(e.training.micro_batches, 2);
  EXPECT_THAT(fail(experiment_text("\n[training]\nmode = \"training\"\n[training.optimizer]\nplugin = \"adamm\"\n")),
              HasSubstr(path() + ":14:10: error: no optimizer plugin named 'adamm' (did you mean 'adam'"));
  EXPECT_EQ(fail(experiment_text("\n[precision]\npreset = \"mixed_fp16\"\n")),
            path() + ":12:10: error: precision.preset: 'mixed_fp16' is not one of 'fp32', 'mixed_bf16', "
                     "'fp8_hybrid', 'int8_stream' (did you mean 'mixed_bf16'?)");
  EXPECT_EQ(fail(experiment_text("\n[precision]\nweight = 12\n")),
            path() + ":12:10: error: precision.weight: expected 64, 32, 16 (bf16), 8 (int8) or 4 (int4) bits, or an "
                     "element type name");
  // In inference mode the training sub-tables are kept but not used.
  EXPECT_NO_THROW(load(experiment_text("\n[training]\nmode = \"inference\"\n[training.optimizer]\nplugin = \"adam\"\n")));
}

TEST_F(ExperimentTest, ProvenanceOfResolvedFilesIsIgnored) {
  EXPECT_NO_THROW(load(experiment_text("\n[provenance]\nmonet_version = \"0.0.1\"\nanything = 1\n")));
}

TEST_F(ExperimentTest, PreparedExperimentEvaluatesDeterministically) {
  PreparedExperiment p = prepare(load(experiment_text()), Registry::global());
  EXPECT_EQ(p.graph->operators().size(), 4u);
  const RunResult a = run(p);
  const RunResult b = run(p);
  EXPECT_EQ(a.best.summary.latency_cycles, b.best.summary.latency_cycles);
  EXPECT_EQ(a.best.summary.energy_pj(), b.best.summary.energy_pj());
  EXPECT_EQ(a.evaluation_count, 1u);
  EXPECT_GT(p.evaluator->cache().size(), 0u);
}

TEST_F(ExperimentTest, VariantsShareWhatTheirGraphDetermines) {
  // A search prepares thousands of variants with one cache: what depends on the graph alone is derived once.
  PreparationCache cache;
  int computed = 0;
  auto count = [&] { return ++computed; };
  EXPECT_EQ(*cache.derived<int>("a", count), 1);
  EXPECT_EQ(*cache.derived<int>("a", count), 1);
  EXPECT_EQ(*cache.derived<int>("b", count), 2);
  EXPECT_EQ(*cache.derived<long>("a", [] { return 5L; }), 5);  // another type, another entry
  EXPECT_EQ(computed, 2);

  const std::string training = "\n[training]\nmode = \"training\"\n";
  const PreparedExperiment p = prepare(load(experiment_text(training)), Registry::global(), &cache);
  const PreparedExperiment q = prepare(load(experiment_text(training)), Registry::global(), &cache);
  const PreparedExperiment r =
      prepare(load(experiment_text(training + "micro_batches = 2\n")), Registry::global(), &cache);
  ASSERT_TRUE(p.memory && q.memory && r.memory);
  EXPECT_EQ(p.graph, q.graph);
  EXPECT_EQ(p.memory, q.memory);  // the same object, not an equal one
  EXPECT_NE(p.memory, r.memory);
  EXPECT_EQ(&p.evaluator->cns(), &q.evaluator->cns());  // the CN graph is shared, not copied
  for (const PreparedExperiment* x : {&p, &r}) {
    const TrainingMemory direct = training_memory(*x->graph);
    EXPECT_EQ(x->memory->peak_bytes, direct.peak_bytes);
    EXPECT_EQ(x->memory->peak_activation_bytes, direct.peak_activation_bytes);
    EXPECT_EQ(x->memory->saved_activation_bytes, direct.saved_activation_bytes);
    EXPECT_EQ(x->memory->gradient_bytes, direct.gradient_bytes);
  }
  EXPECT_GT(r.memory->saved_activation_bytes, p.memory->saved_activation_bytes);
}

TEST_F(ExperimentTest, SummaryOfASharedRankScheduleIsTheEvaluations) {
  // With a cache, a system step's one-chip schedule is shared between variants; a search point's summary reads it
  // (Evaluator::summarize) where a full evaluation copies it. Both must give the same system step.
  PreparationCache cache;
  const auto file = test::source_dir() / "tests/data/experiments/gpt_small_system.toml";
  const PreparedExperiment p = prepare(load_experiment(file, {}, Registry::global()), Registry::global(), &cache);
  const ScheduleSummary summary = p.evaluator->summarize(p.configured_allocation);
  const ScheduleResult full = p.evaluator->evaluate(p.configured_allocation, {}, false);
  ASSERT_TRUE(summary.parallel && full.summary.parallel);
  EXPECT_GT(summary.parallel->step_time_s, 0);
  EXPECT_EQ(summary.parallel->step_time_s, full.summary.parallel->step_time_s);
  EXPECT_EQ(summary.parallel->energy_j, full.summary.parallel->energy_j);
  EXPECT_EQ(summary.parallel->memory_bytes, full.summary.parallel->memory_bytes);
  EXPECT_EQ(summary.latency_cycles, full.summary.latency_cycles);
  EXPECT_EQ(summary.capacity_violation, full.summary.capacity_violation);
  EXPECT_EQ(summary.capacity_reason, full.summary.capacity_reason);
  // The shared schedule keeps the rank's own summary: a second point gets the same step, not a twice-finished one.
  EXPECT_EQ(p.evaluator->summarize(p.configured_allocation).parallel->step_time_s, summary.parallel->step_time_s);
}

}  // namespace
}  // namespace monet
