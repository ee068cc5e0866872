// `monet cost --compat zigzag` against ZigZag 3.8.5 itself: the network totals of ZigZag's own test suite
// (30 accelerator/workload/option combinations, tests/data/zigzag/test_suite_expected.json) and, for the cases
// whose per-layer results are published (tests/data/zigzag/cases), every layer.
// Tolerances: the issue allows 2 % on network totals and 5 % per layer; monet reproduces all but two
// combinations to the printed digits, so the test holds those to 1e-8 (relative) — any model change shows.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "support/cli_json.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using test::q;

using test::cost_json;

std::string workload_file(const std::string& w) {
  const fs::path src = test::source_dir();
  if (w == "onnx") return q(src / "workloads/reference/resnet18_zigzag.onnx");
  if (w == "yaml") return q(src / "workloads/reference/resnet18_layers.toml");
  return q(src / "workloads/reference/gemm_layer.toml");
}

std::string arguments(const json& c) {
  const fs::path src = test::source_dir();
  std::string a = workload_file(c["workload"].get<std::string>()) + " --core " +
                  q(src / "architectures/cores" / (c["core"].get<std::string>() + ".toml")) + " --compat zigzag";
  const std::string opt = c.value("options", "");
  if (opt == "locality") a += " --data-locality";
  if (opt == "mixed") {
    // ZigZag's enable_mix_spatial_mapping also turns on the data-locality stages.
    a += " --data-locality --set mixed_spatial=true --mapping " +
         q(src / "architectures/cores/mappings" / (c["mapping"].get<std::string>() + ".toml"));
  }
  if (opt == "lpf3") a += " --set lpf_limit=3";
  return a;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

class TestSuite : public ::testing::TestWithParam<int> {};

TEST_P(TestSuite, NetworkTotalsMatchZigZag) {
  const json all = json::parse(test::read_file(test::source_dir() / "tests/data/zigzag/test_suite_expected.json"));
  const json& c = all["cases"][static_cast<std::size_t>(GetParam())];
  const json r = cost_json(arguments(c));
  const std::string what = c.dump();
  // Two mixed-mapping layer-list runs differ in a few small layers (0.004 % and 0.0008 % energy; 0 and 0.014 %
  // latency): see docs/cost-models.md. Everything else matches to ZigZag's printed precision.
  const bool known = c.value("options", "") == "mixed" && c["workload"] == "yaml" &&
                     (c["core"] == "ascend_like" || c["core"] == "meta_prototype");
  const double tol = known ? 2e-4 : 1e-8;
  EXPECT_LE(rel(r["energy_pj"].get<double>(), c["energy"].get<double>()), tol) << what << " got " << r["energy_pj"];
  // ZigZag's test file prints fractional latencies truncated to 2 decimals.
  EXPECT_LE(std::fabs(r["latency_cycles"].get<double>() - c["latency"].get<double>()),
            known ? 2e-4 * c["latency"].get<double>() : 0.01)
      << what << " got " << r["latency_cycles"];
}

INSTANTIATE_TEST_SUITE_P(ZigZag, TestSuite, ::testing::Range(0, 32));

/// The published per-layer results: every layer's energy and latency from monet's own search.
class PerLayer : public ::testing::TestWithParam<const char*> {};

TEST_P(PerLayer, EveryLayerMatchesZigZag) {
  const std::string name = GetParam();
  const json ref = json::parse(test::read_file(test::source_dir() / "tests/data/zigzag/cases" / (name + ".json")));
  const fs::path src = test::source_dir();
  std::string args;
  if (name.rfind("tpu_like", 0) == 0) {
    args = workload_file(name.find("onnx") != std::string::npos ? "onnx" : "yaml") + " --core " +
           q(src / "architectures/cores/tpu_like.toml") + " --compat zigzag";
  } else {
    args = workload_file("gemm") + " --core " + q(src / "architectures/cores/gemm_l1_l3.toml") + " --compat zigzag";
  }
  const json r = cost_json(args);
  std::map<std::string, json> got;
  for (const json& l : r["layers"]) got[l["name"].get<std::string>()] = l;
  std::size_t compared = 0;
  for (const json& l : ref["layers"]) {
    const std::string n = l["name"].get<std::string>();
    ASSERT_TRUE(got.contains(n)) << n;
    const json& g = got[n];
    EXPECT_LE(rel(g["energy_pj"].get<double>(), l["energy"]["total"].get<double>()), 1e-8) << n;
    EXPECT_LE(rel(g["latency_cycles"].get<double>(), l["latency"]["total"].get<double>()), 1e-8) << n;
    EXPECT_LE(rel(g["mac_energy_pj"].get<double>(), l["energy"]["mac"].get<double>()), 1e-8) << n;
    EXPECT_NEAR(g["stall_cycles"].get<double>(), l["latency"]["stall_slack_comb"].get<double>(), 1e-6) << n;
    EXPECT_NEAR(g["onloading_cycles"].get<double>(), l["latency"]["data_onloading_cycle"].get<double>(), 1e-6) << n;
    EXPECT_NEAR(g["offloading_cycles"].get<double>(), l["latency"]["data_offloading_cycle"].get<double>(), 1e-6) << n;
    ++compared;
  }
  EXPECT_EQ(compared, ref["layers"].size());
  EXPECT_EQ(got.size(), ref["layers"].size()) << "monet costs exactly the layers ZigZag costs";
}

INSTANTIATE_TEST_SUITE_P(ZigZag, PerLayer,
                         ::testing::Values("tpu_like__tpu_like__resnet18_onnx", "tpu_like__tpu_like__resnet18_yaml",
                                           "gemm_l1_l3__gemm_l1_l3__gemm_layer_yaml"));

}  // namespace
}  // namespace monet
