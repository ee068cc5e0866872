// NVIDIA NeMo's FP8 pre-training runs on DGX-H100 (container 24.12) and DGX-B200 (25.02) from the command line:
// eleven rows of NeMo's performance summary (GPT-3 175B, Llama 2 7B/13B/70B, Llama 3 8B/70B/405B, 8 to 512 GPUs),
// each an experiment of experiments/datacenter/nemo_fp8/, against the published tokens per second. One
// calibration per chip, fitted to its rows by scripts/fit_matrix_calibration.py (docs/validation.md#nemo-fp8-on-h100-and-b200);
// and what the FP8 linear layers and userbuffers' overlap change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using test::q;

const char* const kDir = "experiments/datacenter/nemo_fp8/";

json run(const test::ScratchDir& dir, const std::string& name, const std::string& extra = "") {
  const auto r = test::monet("run " + q(test::source_dir() / kDir / (name + ".toml")) + " --out " +
                             q(dir.path() / name) + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(test::read_file(dir.path() / name / "results.json"));
}

/// The published step the experiment's comment derives: GBS x sequence / (tokens/s per GPU x GPUs).
double published_step(const std::string& name) {
  const std::string text = test::read_file(test::source_dir() / kDir / (name + ".toml"));
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex(R"(a step of (\d+) x (\d+) / \((\d+) x (\d+)\) = ([0-9.]+) s)")));
  const double step = std::stod(m[1]) * std::stod(m[2]) / (std::stod(m[3]) * std::stod(m[4]));
  EXPECT_NEAR(step, std::stod(m[5]), 5e-5);  // the comment's rounding
  return step;
}

struct Row {
  const char* name;
  double error;  // measured against the published step
};

// Each bound is the measured error plus or minus a tenth of a point: the runs are deterministic, and the fits move
// every row by a few points when the model changes (a changed model must refit the table, and these numbers).
// Power per GPU (the step's energy over its time and GPUs) is held within the range measured over the chip's rows.
void expect_rows(const std::vector<Row>& rows, double mean_abs, double max_abs, double min_watts, double max_watts) {
  test::ScratchDir dir;
  double sum = 0, worst = 0;
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const json j = run(dir, row.name);
    const double error = j["step_time_s"].get<double>() / published_step(row.name) - 1;
    EXPECT_NEAR(error, row.error, 0.001);
    sum += std::abs(error), worst = std::max(worst, std::abs(error));
    EXPECT_TRUE(j["feasible"].get<bool>()) << "every NeMo row fits its GPUs' memory";
    const double watts = j["system"]["energy_j"]["step"].get<double>() / (j["step_time_s"].get<double>() * j["system"]["chips"].get<double>());
    EXPECT_GE(watts, min_watts);
    EXPECT_LE(watts, max_watts);
  }
  EXPECT_NEAR(sum / static_cast<double>(rows.size()), mean_abs, 0.001);
  EXPECT_NEAR(worst, max_abs, 0.001);
}

TEST(NemoFp8, H100RowsWithOneCalibration) {
  expect_rows({{"h100_gpt3_175b_128_gpus", -0.0568},
               {"h100_gpt3_175b_512_gpus", 0.0545},
               {"h100_llama2_7b_8_gpus", 0.0224},
               {"h100_llama2_13b_16_gpus", -0.0018},
               {"h100_llama2_70b_64_gpus", -0.0192},
               {"h100_llama3_8b_8_gpus", -0.0078},
               {"h100_llama3_70b_64_gpus", -0.0003}},
              0.0233, 0.0568, 390, 435);  // measured 394-431 W of the 700 W limit
}

TEST(NemoFp8, B200RowsWithOneCalibration) {
  expect_rows({{"b200_gpt3_175b_512_gpus", 0.0296},
               {"b200_llama3_8b_8_gpus", 0.0192},
               {"b200_llama3_70b_64_gpus", -0.0193},
               {"b200_llama3_405b_128_gpus", -0.0298}},
              0.0245, 0.0298, 545, 590);  // measured 548-588 W of the 1,000 W limit
}

// Userbuffers' overlap on NeMo's Llama 3 70B on 64 H100s (t = 4, sequence parallel): without tp_comm_overlap
// the forward all-gathers and reduce-scatters and the backward all-gathers of the row-parallel outputs' gradients
// wait on the critical path. The links carry the same bytes either way: the same communication energy. Without
// sequence parallelism there is nothing to pipeline: a located error, exit code 2, nothing written.
TEST(NemoFp8, UserbuffersOverlapHidesSequenceParallelCollectives) {
  test::ScratchDir dir;
  const char* const row = "h100_llama3_70b_64_gpus";
  const json overlapped = run(dir, row);
  test::ScratchDir other;
  const json exposed = run(other, row, " --set parallelism.tp_comm_overlap=false");
  const auto& a = overlapped["system"]["time_s"];
  const auto& b = exposed["system"]["time_s"];
  EXPECT_NEAR(a["tensor_parallel_communication"].get<double>(), 0.16968, 0.0005);
  EXPECT_NEAR(b["tensor_parallel_communication"].get<double>(), 1.35614, 0.0005);
  EXPECT_NEAR(a["compute"].get<double>(), b["compute"].get<double>(), 1e-9);  // the same operators, summed in another order
  EXPECT_GT(b["step"].get<double>() - a["step"].get<double>(), 0.9 * (1.35614 - 0.16968));
  EXPECT_DOUBLE_EQ(overlapped["system"]["energy_j"]["communication"].get<double>(),
                   exposed["system"]["energy_j"]["communication"].get<double>());
  const auto r = test::monet("run " + q(test::source_dir() / kDir / (std::string(row) + ".toml")) + " --out " +
                             q(dir.path() / "refused") + " --set parallelism.sequence_parallel=false");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // Located at the [parallelism] table, which names the plugin's parameters.
  const std::string text = test::read_file(test::source_dir() / kDir / (std::string(row) + ".toml"));
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(text.find("[parallelism]")), '\n') + 1;
  EXPECT_THAT(r.out, HasSubstr("h100_llama3_70b_64_gpus.toml:" + std::to_string(line) +
                               ":1: error: megatron: tp_comm_overlap pipelines sequence parallelism's collectives "
                               "with their GEMMs"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "refused"));
}

}  // namespace
}  // namespace monet
