// End to end: the `nasbench201` generator through the CLI — `monet inspect` of the shipped workloads (the README's
// MAC formula, the benchmark's parameter counts), its parameters in `monet plugins --describe`, and a training step
// of the best cell on the edge-TPU mesh with every cell checkpointed by its PyTorch module name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

json inspect(const std::string& workload) {
  const auto r = test::monet("--log-level warn inspect " +
                             test::q(test::source_dir() / "workloads/nasbench201" / workload) + " --training --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(r.out);
}

TEST(NasBench201, InspectGivesTheBenchmarksCounts) {
  // 6111: four nor_conv_3x3 and one nor_conv_1x1 edge: 7,783,040 + 15 (4 · 2,359,296 + 262,144) MACs per image.
  const json best = inspect("nb201_best_6111.toml");
  EXPECT_EQ(best.at("forward_macs").get<std::int64_t>(), 153272960);
  EXPECT_EQ(best.at("params_trainable").get<std::int64_t>(), 1073466);
  EXPECT_EQ(best.at("training").at("macs_backward_dw").get<std::int64_t>(), 153272960);
  // 3: no convolution in the cell, only the stem, the reduction blocks and the head.
  const json cheap = inspect("nb201_cheap_3.toml");
  EXPECT_EQ(cheap.at("forward_macs").get<std::int64_t>(), 7783040);
  EXPECT_EQ(cheap.at("params_trainable").get<std::int64_t>(), 73306);
  const auto d = test::monet("plugins --describe nasbench201");
  ASSERT_EQ(d.exit_code, 0) << d.out;
  EXPECT_THAT(d.out, HasSubstr("arch (string"));
  EXPECT_THAT(d.out, HasSubstr("batch (integer"));
}

TEST(NasBench201, TrainingStepOnTheEdgeTpuMeshCheckpointsEveryCell) {
  test::ScratchDir dir;
  const auto out = dir.path() / "nb";
  const auto r = test::monet("run " + test::q(test::source_dir() / "experiments/nasbench201_edge_tpu.toml") +
                             " --out " + test::q(out) + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(out / "results.json"));
  EXPECT_EQ(j.at("workload").at("parameters").get<std::int64_t>(), 1073466);
  const json& t = j.at("training");
  EXPECT_EQ(t.at("macs_forward").get<std::int64_t>(), 4 * 153272960);  // batch 4
  // modules = ["cells.*"]: the 17 cells, each recomputed whole; everything but the stem's conv and the classifier
  // runs again (4 · (442,368 + 640) MACs are not).
  ASSERT_EQ(t.at("checkpoint_regions").size(), 17u);
  EXPECT_EQ(t.at("checkpoint_regions").at(5).at("name"), "cells.5");
  EXPECT_EQ(t.at("recompute_macs").get<std::int64_t>(), 4 * (153272960 - 442368 - 640));
  EXPECT_GT(j.at("latency_cycles").get<double>(), 0);
}

}  // namespace
}  // namespace monet
