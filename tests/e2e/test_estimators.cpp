// Estimators through the CLI: validate shows each number with its origin, `plugins --describe` documents the
// model, runs and `monet cost` use the estimated numbers, results.json carries the area.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_json.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using test::q;

const char* kCore = R"([core]
name = "est"
cost_model = "roofline"
estimator = "horowitz"
technology_nm = 45

[array]
dims = ["D1", "D2"]
sizes = [8, 8]
precision = "int8"

[[memories]]
name = "sram"
size_bits = 262144
operands = ["I1", "I2", "O"]
served_dims = ["D1", "D2"]
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["tl"], I2 = ["tl"], O = ["fl", "tl"] }
)";

const char* kAccelerator = R"([accelerator]
name = "two"
[[cores]]
name = "c0"
file = "est.toml"
[[cores]]
name = "c1"
file = "est.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 20
write_energy_pj_per_bit = 20
bandwidth_bits_per_cycle = 64
[[links]]
kind = "bus"
endpoints = ["c0", "c1", "dram"]
bandwidth_bits_per_cycle = 64
energy_pj_per_bit = 0.1
)";

TEST(Estimators, ValidateShowsEveryNumberWithItsOrigin) {
  const auto r = test::monet("validate " + q(test::source_dir() / "architectures/cores/edge_tpu_pe.toml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("valid core 'edge_tpu_pe' (256 PEs, 4 memory levels)"));
  EXPECT_THAT(r.out, HasSubstr("estimator horowitz at 28 nm"));
  EXPECT_THAT(r.out, HasSubstr("int8 MAC (int8 multiplier, int32 adder)"));
  EXPECT_THAT(r.out, HasSubstr("memory register_file: 256 x"));
  EXPECT_THAT(r.out, HasSubstr("(estimated)"));
  EXPECT_THAT(r.out, HasSubstr("core area "));
}

TEST(Estimators, DescribeDocumentsTheModelAndEveryParameter) {
  const auto r = test::monet("plugins --describe horowitz");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s : {"estimator", "vdd", "accumulator", "dram_pj_per_bit", "8 KB 10 pJ", "Stillmaker"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
  EXPECT_THAT(test::monet("plugins --kind estimator").out, HasSubstr("horowitz 1.0.0"));
}

// 64 int8 MACs (419 um2 each) + a 32 KB single-port SRAM (0.375 um2/bit x 262,144 + 646 um2) = 0.1258 mm2 per
// core at 45 nm; two instances.
TEST(Estimators, RunsUseTheEstimatesAndReportTheArea) {
  test::ScratchDir dir;
  dir.write("est.toml", kCore);
  const auto acc = dir.write("two.toml", kAccelerator);
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"" + (test::source_dir() / "workloads/tiny_cnn.toml").string() +
                                           "\"\n[architecture]\nfile = \"two.toml\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const double core_mm2 = (64 * 419.0 + 0.375 * 262144 + 646) * 1e-6;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  EXPECT_NEAR(j["area_mm2"].get<double>(), 2 * core_mm2, 1e-12);
  EXPECT_NEAR(j["architecture"]["cores"][1]["area_mm2"].get<double>(), core_mm2, 1e-12);
  EXPECT_EQ(j["provenance"]["plugins"]["estimator:horowitz"], "1.0.0");
  EXPECT_THAT(r.out, HasSubstr("area          0.251"));
  // Every op was costed at the estimated 0.3 pJ per unit operation: tiny_cnn's 18,432 + 5,120 MACs and relu's
  // 512 ops, which run on these cores too.
  const double macs = j["energy_breakdown"]["mac_energy_pj"].get<double>();
  EXPECT_NEAR(macs / 0.3, 18432 + 5120 + 512, 1e-6);
  // The accelerator's area as `monet validate` prints it.
  EXPECT_THAT(test::monet("validate " + q(acc)).out, HasSubstr("area 0.2515 mm2 (cores)"));
  // An accelerator whose cores pin no area has none.
  const auto quick = test::monet("run " + q(test::source_dir() / "experiments/tiny_cnn_dual_core.toml") + " --out " +
                                 q(dir.path() / "quick") + " --log-level warn");
  ASSERT_EQ(quick.exit_code, 0) << quick.out;
  EXPECT_TRUE(json::parse(test::read_file(dir.path() / "quick/results.json"))["area_mm2"].is_null());
}

TEST(Estimators, AnUnknownEstimatorStopsRunAndCostAtTheCoreFile) {
  test::ScratchDir dir;
  const auto core_file = dir.write("est.toml", test::replace_first(kCore, "\"horowitz\"", "\"horowitz45\""));
  dir.write("two.toml", kAccelerator);
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"" + (test::source_dir() / "workloads/tiny_cnn.toml").string() +
                                           "\"\n[architecture]\nfile = \"two.toml\"\n");
  const std::string at = core_file.string() + ":4:13: error: no estimator plugin named 'horowitz45'";
  const auto run = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr(at));
  const auto cost = test::monet("cost " + q(test::source_dir() / "workloads/tiny_cnn.toml") + " --core " + q(core_file));
  EXPECT_EQ(cost.exit_code, 2);
  EXPECT_THAT(cost.out, HasSubstr(at));
}

}  // namespace
}  // namespace monet
