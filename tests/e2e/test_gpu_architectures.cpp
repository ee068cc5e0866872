// The GPU chips as one-core architectures (architectures/gpu/, costed by the `gpu` model; docs/architectures.md):
// every file validates, the ResNet-18-CIFAR and small GPT-2 training steps run on each as one kernel after the
// other, and a broken core file or calibration table is one located error with exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using json = nlohmann::json;
using test::q;
namespace fs = std::filesystem;

const fs::path kGpus = test::source_dir() / "architectures/gpu";

TEST(GpuArchitectures, EveryFileValidates) {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kGpus)) {
    if (entry.path().extension() != ".toml") continue;
    const auto r = test::monet("validate " + q(entry.path()));
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("valid accelerator")) << entry.path();
    EXPECT_THAT(r.out, MatchesRegex("(.|\n)*  idle power [0-9]+ W \\(over every schedule's time\\)\n(.|\n)*")) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 5u);  // A100, H100, B200, MI300X, MI350X
}

// Chip power (docs/cost-models.md#chip-power): each chip file's tensor-core MAC energy is the whole chip's,
// calibrated so that the 8192^3 bf16 GEMM (workloads/gemm_8192_bf16.toml) run on the chip draws its power limit
// (A100 SXM4 400 W, H100 SXM5 700 W, HGX B200 1,000 W, MI300X 750 W, MI350X 1,000 W: the datasheets in the
// data-center design notes), its idle power included; the MAC energies are rounded to 0.1 fJ, so 0.05 %. The
// ResNet-18-CIFAR step at batch 4 is made of small, launch-bound kernels: the chip draws little above idle.
TEST(GpuArchitectures, TheLargeGemmDrawsEachChipsPowerLimit) {
  const std::map<std::string, std::pair<double, double>> power = {{"a100_sxm4_80g", {60, 400}}, {"h100_sxm5_80g", {70, 700}},
                                                                  {"b200", {140, 1000}},        {"mi300x", {145, 750}},
                                                                  {"mi350x", {255, 1000}}};
  for (const auto& [chip, watts] : power) {
    SCOPED_TRACE(chip);
    const auto [idle, limit] = watts;
    test::ScratchDir dir;
    const fs::path exp = dir.write("gemm.toml", "[experiment]\nname = \"gemm\"\n[workload]\nfile = " +
                                                    ("\"" + (test::source_dir() / "workloads/gemm_8192_bf16.toml").string() + "\"") +
                                                    "\n[architecture]\nfile = " + ("\"" + (kGpus / (chip + ".toml")).string() + "\"") +
                                                    "\n[fusion]\nplugin = \"layer_by_layer\"\n[output]\nartifacts = [\"summary\"]\n");
    const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("idle "));
    const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
    const double seconds = j["latency_s"].get<double>(), joules = j["energy_pj"].get<double>() * 1e-12;
    EXPECT_NEAR(j["energy_breakdown"]["idle_energy_pj"].get<double>() * 1e-12, idle * seconds, 1e-9 * joules);
    EXPECT_NEAR(joules / seconds, limit, 0.0005 * limit);

    const auto step = test::monet("run " + q(test::source_dir() / "experiments/gpu/a100_sxm4_80g.toml") + " --out " +
                                  q(dir.path() / "step") + " --log-level warn --set " +
                                  q("architecture.file=\"" + (kGpus / (chip + ".toml")).string() + "\""));
    ASSERT_EQ(step.exit_code, 0) << step.out;
    const json s = json::parse(test::read_file(dir.path() / "step/results.json"));
    const double w = s["energy_pj"].get<double>() * 1e-12 / s["latency_s"].get<double>();
    EXPECT_GT(w, idle);
    EXPECT_LT(w, idle + 0.1 * (limit - idle));
  }
}

TEST(GpuArchitectures, TrainingStepsRunOneKernelAfterAnother) {
  // A GPU runs one kernel at a time: the step is the sum of its operators' kernels, each at least the launch
  // overhead (views excepted), and nothing waits for data (every operand streams from HBM inside its kernel).
  const std::map<std::string, std::int64_t> launch = {{"a100_sxm4_80g", 5640}, {"h100_sxm5_80g", 7320}, {"b200", 7424},
                                                        {"mi300x", 8400},        {"mi350x", 8800}};
  const std::string gpt = "workload.file=\"" + (test::source_dir() / "workloads/onnx/gpt2_monet_small.onnx").string() + "\"";
  for (const auto& [chip, launch_cycles] : launch) {
    for (const std::string& workload : {std::string(), gpt}) {
      test::ScratchDir dir;
      const std::string arch = "architecture.file=\"" + (kGpus / (chip + ".toml")).string() + "\"";
      std::string args = "run " + q(test::source_dir() / "experiments/gpu/a100_sxm4_80g.toml") + " --out " +
                         q(dir.path() / "out") + " --log-level warn --set " + q(arch) +
                         " --set 'output.artifacts=[\"summary\", \"csv\"]'";
      if (!workload.empty()) args += " --set " + q(workload);
      const auto r = test::monet(args);
      ASSERT_EQ(r.exit_code, 0) << chip << "\n" << r.out;
      const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
      std::int64_t sum = 0;
      std::size_t kernels = 0;
      for (const auto& row : test::read_csv(dir.path() / "out/schedule.csv")) {
        const auto cycles = static_cast<std::int64_t>(row.number("latency_cycles"));
        sum += cycles;
        if (row["kind"] == "view") continue;
        EXPECT_GE(cycles, launch_cycles) << chip << " " << row["operator"];
        ++kernels;
      }
      EXPECT_GT(kernels, 100u) << chip;
      EXPECT_EQ(j["latency_cycles"].get<std::int64_t>(), sum) << chip << " " << workload;
    }
  }
}

class BrokenGpuCore : public ::testing::Test {
 protected:
  /// The A100's core and calibration copied into a scratch folder, the core changed by `edit`.
  test::CommandResult validate(const std::function<std::string(std::string)>& edit, const std::string& csv = "") {
    const std::string core = test::read_file(kGpus / "cores/a100_sxm4_80g.toml");
    dir_.write("calibration/a100_sxm4_80g.csv",
               csv.empty() ? test::read_file(kGpus / "calibration/a100_sxm4_80g.csv") : csv);
    return test::monet("validate " + q(dir_.write("cores/gpu.toml", edit(core))));
  }
  test::ScratchDir dir_;
};

TEST_F(BrokenGpuCore, MissingCalibrationTable) {
  const auto r = validate([](std::string s) {
    return test::replace_first(s, "calibration/a100_sxm4_80g.csv", "calibration/none.csv");
  });
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, MatchesRegex(".*gpu\\.toml:[0-9]+:[0-9]+: error: cost_model_params\\.calibration: file not found: .*none\\.csv.*"));
}

TEST_F(BrokenGpuCore, BadCalibrationRow) {
  const std::string csv = "table,type,at_least,efficiency\nmatrix,*,0,0.5\nhbm,*,lots,0.9\n";
  const auto r = validate([](std::string s) { return s; }, csv);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("a100_sxm4_80g.csv:3:7: error: at_least: expected a size >= 0"));
  const std::string no_zero = "table,type,at_least,efficiency\nmatrix,*,1e9,0.5\nvector,*,0,0.1\nhbm,*,0,0.9\n";
  const auto z = validate([](std::string s) { return s; }, no_zero);
  EXPECT_EQ(z.exit_code, 2) << z.out;
  EXPECT_THAT(z.out, HasSubstr("a100_sxm4_80g.csv:2:1: error: the rows of this table and type need one with at_least = 0"));
}

TEST_F(BrokenGpuCore, MissingParameterAndBadTile) {
  const auto r = validate([](std::string s) { return test::replace_first(s, "sms = 108\n", ""); });
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, MatchesRegex(".*gpu\\.toml:[0-9]+:[0-9]+: error: .*sms.*"));
  const auto t = validate([](std::string s) { return test::replace_first(s, "\"64x64\"", "\"64by64\""); });
  EXPECT_EQ(t.exit_code, 2) << t.out;
  EXPECT_THAT(t.out, MatchesRegex(".*gpu\\.toml:[0-9]+:[0-9]+: error: .*tile '64by64'.*"));
  // The array must be the tensor cores of all SMs.
  const auto a = validate([](std::string s) { return test::replace_first(s, "sizes = [108, 1024]", "sizes = [108, 512]"); });
  EXPECT_EQ(a.exit_code, 2) << a.out;
  EXPECT_THAT(a.out, HasSubstr("must agree"));
}

}  // namespace
}  // namespace monet
