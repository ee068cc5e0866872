// End to end: the README's first run, `monet run experiments/quickstart.toml`, shows monet's main job — one training
// step of a real network (ResNet-18-CIFAR, Adam, mixed bf16) on a multi-core accelerator with fused stacks — and
// prints the step's time, energy and memory by cause with the numbers results.json holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

TEST(Quickstart, ShowsATrainingStepOnAMultiCoreAcceleratorWithFusion) {
  test::ScratchDir dir;
  const auto out = dir.path() / "quick";
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/quickstart.toml").string() + "' --out '" +
                             out.string() + "' --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(out / "results.json"));
  EXPECT_EQ(j.at("workload").at("mode"), "training");
  // Fusion happened (stacks of several layers), every phase of the step ran (forward, loss, backward dX and dW,
  // Adam's update), and every core of the mesh worked.
  std::map<std::string, std::set<std::string>> stack_operators;
  std::set<std::string> phases, cores;
  for (const test::CsvRow& row : test::read_csv(out / "schedule.csv")) {
    stack_operators[row["stack"]].insert(row["operator"]);
    phases.insert(row["phase"]);
    cores.insert(row["core"]);
  }
  std::size_t largest = 0;
  for (const auto& [stack, ops] : stack_operators) largest = std::max(largest, ops.size());
  EXPECT_GT(largest, 2u);
  EXPECT_EQ(phases, (std::set<std::string>{"forward", "loss", "backward_dx", "backward_dw", "optimizer"}));
  EXPECT_EQ(cores, (std::set<std::string>{"pooling", "simd", "pe_0_0", "pe_0_1", "pe_1_0", "pe_1_1"}));
  // No core held nothing (0 B).
  EXPECT_THAT(r.out, HasSubstr("experiment    quickstart (seed 1, training)"));
  EXPECT_THAT(r.out, HasSubstr("workload      resnet18_cifar_b4: "));
  EXPECT_THAT(r.out, HasSubstr(" cycles = "));  // a time in seconds, not only cycles
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr(" 0 B")));
  // The memory of the step by cause, as results.json reports it (bytes, SI-formatted with four digits).
  const json& m = j.at("training");
  const auto mb = [&](const char* key) {
    std::ostringstream s;
    s.precision(4);
    s << m.at(key).get<double>() / 1e6 << " MB";
    return s.str();
  };
  EXPECT_THAT(r.out, HasSubstr("step memory   parameters " + mb("param_bytes") + ", saved activations " +
                               mb("saved_activation_bytes") + ", gradients " + mb("grad_bytes") +
                               ", optimizer states " + mb("optimizer_state_bytes") + ", master weights " +
                               mb("master_weight_bytes")));
  // ResNet-18-CIFAR's 11,173,962 parameters in bf16 (2 B), their bf16 gradients, Adam's two fp32 states (8 B) and
  // the fp32 master weights (4 B).
  const std::int64_t params = 11173962;
  EXPECT_EQ(m.at("param_bytes").get<std::int64_t>(), 2 * params);
  EXPECT_EQ(m.at("grad_bytes").get<std::int64_t>(), 2 * params);
  EXPECT_EQ(m.at("optimizer_state_bytes").get<std::int64_t>(), 8 * params);
  EXPECT_EQ(m.at("master_weight_bytes").get<std::int64_t>(), 4 * params);
  EXPECT_THAT(r.out, HasSubstr("report.html"));
}

}  // namespace
}  // namespace monet
