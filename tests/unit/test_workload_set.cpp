// [workload.set] and --set workload.set.PATH: the workload file's keys changed from the experiment, read by the
// frontend from the changed document, checked where the experiment wrote them, part of the preparation cache key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/experiment/runner.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using test::error_of;

std::string experiment_with(const std::string& workload, const std::string& extra = "") {
  const auto src = test::source_dir();
  return "[experiment]\nname = \"t\"\n\n[workload]\nfile = \"" + (src / workload).string() + "\"\n" + extra +
         "\n[architecture]\nfile = \"" + (src / "architectures/dual_core.toml").string() + "\"\n";
}

class WorkloadSetTest : public ::testing::Test {
 protected:
  Experiment load(const std::string& text, const std::vector<std::string>& sets = {}) {
    return load_experiment(dir_.write("exp.toml", text), sets, Registry::global());
  }
  std::string fail(const std::string& text, const std::vector<std::string>& sets = {}) {
    return error_of([&] { (void)prepare(load(text, sets), Registry::global()); });
  }
  std::string path() const { return (dir_.path() / "exp.toml").string(); }
  test::ScratchDir dir_;
};

TEST_F(WorkloadSetTest, LayerListKeysByEntryName) {
  // tiny_cnn: conv1 8 x 8 x 8 outputs of 4 x 3 x 3 MACs (18,432), fc 512 -> 10 (5,120). 16 channels double both.
  const Experiment plain = load(experiment_with("workloads/tiny_cnn.toml"));
  EXPECT_EQ(prepare(plain, Registry::global()).forward->total_macs(), 23552);
  const Experiment e = load(experiment_with("workloads/tiny_cnn.toml", "[workload.set]\n\"layers.conv1.out_channels\" = 16\n"));
  EXPECT_EQ(e.workload_set, (std::vector<std::pair<std::string, std::string>>{{"layers.conv1.out_channels", "16"}}));
  EXPECT_EQ(prepare(e, Registry::global()).forward->total_macs(), 47104);
}

TEST_F(WorkloadSetTest, GeneratorKeysAndTheCommandLine) {
  // gpt_small_test gives layers = 2; the --set comes after the file's [workload.set], so it wins; a key the file
  // leaves at its default (ffn_hidden) is the generator's too.
  const std::string text = experiment_with("workloads/gpt/gpt_small_test.toml", "[workload.set]\nlayers = 3\nffn_hidden = 512\n");
  const Experiment e = load(text, {"workload.set.layers=4"});
  EXPECT_EQ(e.workload_set,
            (std::vector<std::pair<std::string, std::string>>{{"ffn_hidden", "512"}, {"layers", "4"}}));
  const Experiment two = load(experiment_with("workloads/gpt/gpt_small_test.toml"), {"workload.set.ffn_hidden=512"});
  const Experiment four = load(experiment_with("workloads/gpt/gpt_small_test.toml"),
                               {"workload.set.ffn_hidden=512", "workload.set.layers=4"});
  PreparationCache cache;
  const auto g2 = prepare(two, Registry::global(), &cache).forward;
  const auto g4 = prepare(four, Registry::global(), &cache).forward;
  const auto again = prepare(e, Registry::global(), &cache).forward;
  EXPECT_NE(g2, g4);     // the set values are part of the cache key
  EXPECT_EQ(again, g4);  // the same changes (the --set replaced the file's layers = 3), the same graph
  // Each decoder layer has the same MACs: two more layers add as much as the first two.
  const Experiment zero = load(experiment_with("workloads/gpt/gpt_small_test.toml"),
                               {"workload.set.ffn_hidden=512", "workload.set.layers=1"});
  const auto g1 = prepare(zero, Registry::global(), &cache).forward;
  EXPECT_EQ(g4->total_macs() - g2->total_macs(), 2 * (g2->total_macs() - g1->total_macs()));
}

TEST_F(WorkloadSetTest, UnknownKeysAreLocatedAtTheExperiment) {
  const std::string gpt = "workloads/gpt/gpt_small_test.toml";
  EXPECT_THAT(fail(experiment_with(gpt, "[workload.set]\nlayerz = 3\n")),
              HasSubstr(path() + ":7:1: error: unknown key 'workload.layerz' (did you mean 'layers'?)"));
  EXPECT_THAT(fail(experiment_with(gpt, "[workload.set]\nlayers = \"two\"\n")),
              HasSubstr(path() + ":7:10: error: workload.layers: expected an integer"));
  EXPECT_THAT(fail(experiment_with(gpt), {"workload.set.layers=0"}), HasSubstr("--set workload.set.layers=0:1:9: error:"));
  EXPECT_THAT(fail(experiment_with(gpt, "[workload.set]\ngenerator = \"dlrm\"\n")),
              HasSubstr(path() + ":7:1: error: workload.set.generator: the generator is the file's"));
  EXPECT_THAT(fail(experiment_with("workloads/tiny_cnn.toml", "[workload.set]\n\"layers.conv9.out_channels\" = 3\n")),
              HasSubstr(path() + ":7:1: error: no [[layers]] entry named 'conv9' (did you mean 'conv1'?)"));
  EXPECT_THAT(fail(experiment_with("workloads/onnx/resnet18.onnx", "[workload.set]\nx = 1\n")),
              HasSubstr(path() + ":6:1: error: workload.set: changes keys of a TOML workload file"));
  EXPECT_THAT(fail(experiment_with(gpt), {"workload.set.layers.x=1"}), HasSubstr("'workload.layers' is an integer, not a table"));
}

TEST_F(WorkloadSetTest, APathSetTwiceIsRecordedOnceWithTheValueThatWon) {
  // resolved.toml writes the changes as one table: a key given twice there would not parse.
  const std::string arch = "[architecture.set]\n\"offchip.bandwidth_bits_per_cycle\" = 64\n";
  const Experiment e = load(experiment_with("workloads/tiny_cnn.toml") + arch,
                            {"architecture.set.offchip.bandwidth_bits_per_cycle=128"});
  EXPECT_EQ(e.architecture_set,
            (std::vector<std::pair<std::string, std::string>>{{"offchip.bandwidth_bits_per_cycle", "128"}}));
  EXPECT_DOUBLE_EQ(e.accelerator->offchip.bandwidth_bits_per_cycle, 128.0);
}

}  // namespace
}  // namespace monet
