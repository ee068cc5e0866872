// MLPerf Training v5.1's Llama 3.1 8B pre-training on 8 MI350X (AMD's closed-division submission) from the command
// line, beside NeMo's Llama 3 8B on 8 B200s: the same model, FP8 recipe and micro-batch on both vendors' chips. How
// far the uncalibrated tables that the chip comparison uses (docs/datacenter-validation.md) are from a measured step
// on each, and whether the B200's fitted kernel factors carry over to the MI350X
// (docs/validation.md#mlperf-training-on-mi350x).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
using test::q;

double step(const test::ScratchDir& dir, const std::string& experiment, const std::string& name, const std::string& extra = "") {
  const auto r = test::monet("run " + q(test::source_dir() / experiment) + " --out " + q(dir.path() / name) + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(test::read_file(dir.path() / name / "results.json"))["step_time_s"].get<double>();
}

// Each bound is the measured error plus or minus a tenth of a point (the runs are deterministic).
TEST(MlperfMi350x, UncalibratedTablesAgainstPublishedStepsOnBothVendors) {
  test::ScratchDir dir;
  const std::string mi350x = "experiments/datacenter/mlperf/mi350x_llama31_8b_8_gpus.toml";
  const std::string b200 = "experiments/datacenter/nemo_fp8/b200_llama3_8b_8_gpus.toml";
  // The published step the experiment's comment derives: the global batch over the log's steady throughput.
  std::smatch m;
  const std::string text = test::read_file(test::source_dir() / mi350x);
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(a step of (\d+) / ([0-9.]+) = ([0-9.]+) s)")));
  const double published = std::stod(m[1]) / std::stod(m[2]);
  EXPECT_NEAR(published, std::stod(m[3]), 5e-5);
  const double b200_published = 128.0 * 8192 / (26006.0 * 8);  // NeMo 25.02's DGX-B200 row

  const double uncalibrated = step(dir, mi350x, "mi350x");
  EXPECT_NEAR(uncalibrated / published - 1, -0.3350, 0.001);
  EXPECT_NEAR(step(dir, b200, "b200", " --unset architecture.set") / b200_published - 1, -0.4421, 0.001);
  // The B200's NeMo-fitted factors (fp8 GEMMs 0.6338, FlashAttention 0.2909) on the MI350X's table overshoot.
  const std::string carried = " --set 'architecture.cores.gpu.cost_model_params.calibration="
                              "\"../calibration/mi350x_with_b200_nemo_factors.csv\"'";
  EXPECT_NEAR(step(dir, mi350x, "carried", carried) / published - 1, 0.2073, 0.001);
  // At MLPerf's settings (global batch 32) the calibrated B200 takes 1.307 s, the measured MI350X 1.281 s; the
  // uncalibrated tables make the MI350X 17 % slower than the B200 instead.
  const double b200_fitted = step(dir, b200, "b200_fitted", " --set parallelism.global_batch=32");
  const double b200_uncalibrated = step(dir, b200, "b200_uncalibrated", " --unset architecture.set --set parallelism.global_batch=32");
  EXPECT_NEAR(published / b200_fitted, 0.980, 0.001);
  EXPECT_NEAR(uncalibrated / b200_uncalibrated, 1.174, 0.001);
}

}  // namespace
}  // namespace monet
