// Per-layer quantization (issue #36, docs/cost-models.md#operand-width-and-mac-energy): [precision.group.NAME] stores a
// layer's weights (and produced activations) at its own width, and a core whose array declares energy_scaling =
// "operand_bits" costs each MAC by its operands' widths. Checked by hand on the tiny CNN's GEMM (fc: 5,120 MACs,
// 5,120 int8 weights) on the dual-core example, and as a search gene.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;

fs::path experiment(const test::ScratchDir& dir, const std::string& extra = "") {
  const fs::path src = test::source_dir();
  return dir.write("q.toml", "[experiment]\nname = \"q\"\n\n[workload]\nfile = \"" + (src / "workloads/tiny_cnn.toml").string() +
                                 "\"\n\n[architecture]\nfile = \"" + (src / "architectures/dual_core.toml").string() +
                                 "\"\n\n[allocation.kind]\nconv = [\"core0\"]\ngemm = [\"core0\"]\nelementwise = [\"core1\"]\n" + extra);
}

const std::string kScaling =
    " --set 'architecture.cores.core0.array.precision=\"int8\"' --set 'architecture.cores.core0.array.energy_scaling=\"operand_bits\"'";

test::CommandResult run(const fs::path& exp, const fs::path& out, const std::string& extra) {
  return test::monet("run " + q(exp) + " --out " + q(out) + " --log-level warn" + extra);
}

test::CsvRow row(const fs::path& out, const std::string& op) {
  for (const test::CsvRow& r : test::read_csv(out / "schedule.csv")) {
    if (r["operator"] == op) return r;
  }
  ADD_FAILURE() << "no CN of " << op;
  return {};
}

TEST(Quantization, AGroupsWeightWidthSetsItsBytesAndItsMacEnergyOnAScalingCore) {
  test::ScratchDir dir;
  const fs::path exp = experiment(dir);
  ASSERT_EQ(run(exp, dir.path() / "int8", "").exit_code, 0);
  // The core declares its units int8 and scaling; the workload is int8: every factor is 1, nothing moves.
  ASSERT_EQ(run(exp, dir.path() / "scaling", kScaling).exit_code, 0);
  EXPECT_EQ(test::read_file(dir.path() / "scaling/schedule.csv"), test::read_file(dir.path() / "int8/schedule.csv"));
  // fc's weights at int4: its MAC energy is 0.5 pJ x 5,120 x (8 x 4) / 8^2 = 1,280 pJ (half), conv1's unchanged.
  const std::string fc4 = " --set 'precision.group.fc={ operators = \"fc\", weight = 4 }'";
  auto r = run(exp, dir.path() / "fc4", kScaling + fc4);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(row(dir.path() / "int8", "fc").number("mac_energy_pj"), 0.5 * 5120);
  EXPECT_EQ(row(dir.path() / "fc4", "fc").number("mac_energy_pj"), 0.5 * 5120 * (8.0 * 4.0) / 64.0);
  EXPECT_EQ(row(dir.path() / "fc4", "conv1").number("mac_energy_pj"), row(dir.path() / "int8", "conv1").number("mac_energy_pj"));
  // Its 5,120 weights are read from DRAM at half a byte: 2,560 B x 8 bits x 10 pJ/bit = 204.8 nJ less off-chip energy.
  const json a = json::parse(test::read_file(dir.path() / "int8/results.json"));
  const json b = json::parse(test::read_file(dir.path() / "fc4/results.json"));
  EXPECT_NEAR(a["energy_breakdown"]["offchip_energy_pj"].get<double>() - b["energy_breakdown"]["offchip_energy_pj"].get<double>(),
              2560.0 * 8 * 10, 1e-6);
  EXPECT_THAT(test::read_file(dir.path() / "fc4/resolved.toml"),
              HasSubstr("\n[precision.group.\"fc\"]\noperators = [\"fc\"]\nweight = \"int4\"\n"));
  // Without the core's declaration the bytes still halve, the MAC energy does not (a fixed-width datapath).
  r = run(exp, dir.path() / "fixed_width", fc4);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(row(dir.path() / "fixed_width", "fc").number("mac_energy_pj"), 0.5 * 5120);
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "fixed_width/results.json"))["energy_breakdown"]["offchip_energy_pj"],
            b["energy_breakdown"]["offchip_energy_pj"]);
  // 16-bit weights and activations of conv1: its MAC reads an int8 image and int16 weights, (8 x 16) / 64 = 2.
  r = run(exp, dir.path() / "conv16", kScaling + " --set 'precision.group.c={ operators = [\"conv*\"], weight = 16, activation = \"int16\" }'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(row(dir.path() / "conv16", "conv1").number("mac_energy_pj"), 2 * row(dir.path() / "int8", "conv1").number("mac_energy_pj"));
}

TEST(Quantization, AGroupsWidthIsASearchGene) {
  test::ScratchDir dir;
  const fs::path exp = experiment(dir, R"(
[precision.group.fc]
operators = "fc"
weight = 8

[search]
plugin = "grid"

[space]
objectives = ["energy_pj", "latency_cycles"]

[space.genes.fc_weight]
path = "precision.group.fc.weight"
values = [4, 8, 16]
)");
  const auto r = run(exp, dir.path() / "s", kScaling);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = test::read_csv(dir.path() / "s/evaluations.csv");
  ASSERT_EQ(rows.size(), 3u);
  // Narrower weights: less energy, every time (bytes and MACs both shrink).
  EXPECT_LT(rows[0].number("energy_pj"), rows[1].number("energy_pj"));
  EXPECT_LT(rows[1].number("energy_pj"), rows[2].number("energy_pj"));
}

TEST(Quantization, BadWidthsAndGroupsAreOneLocatedError) {
  test::ScratchDir dir;
  const fs::path exp = experiment(dir);
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --set 'precision.group.fc={ operators = \"fc\", weight = 0 }'", "expected 64, 32, 16 (bf16), 8 (int8) or 4 (int4) bits"},
      {" --set 'precision.group.fc={ operators = \"fc\", weight = \"int3\" }'", "'int3' is not an element type"},
      {" --set 'precision.group.fc={ operators = \"fcc*\", weight = 4 }'", "precision group 'fc': 'fcc*' matches no forward operator"},
      {" --set 'precision.group.fc={ operators = \"fc\" }'", "a precision group sets weight, activation or both"},
      {" --set 'precision.group.fc={ weight = 4 }'", "missing required key 'operators'"},
      {" --set 'architecture.cores.core0.array.energy_scaling=\"operand_bits\"'", "give precision (e.g. \"int8\")"},
      {" --set 'architecture.cores.core0.array.energy_scaling=\"quadratic\"'", "energy_scaling"},
  };
  for (const auto& [extra, message] : cases) {
    const fs::path out = dir.path() / "out";
    const auto r = run(exp, out, extra);
    EXPECT_EQ(r.exit_code, 2) << extra << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << extra;
    EXPECT_THAT(r.out, HasSubstr(": error: ")) << extra;
    EXPECT_FALSE(fs::exists(out)) << extra;
  }
}

}  // namespace
}  // namespace monet
