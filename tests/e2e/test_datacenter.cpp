// Data-center workloads from the command line (docs/datacenter.md): the generated 1T GPT inspected and validated,
// and the one-chip GPT experiment with Megatron's selective recomputation, reproduced from its resolved.toml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using test::q;

TEST(Datacenter, GeneratedOneTrillionGpt) {
  const auto file = test::source_dir() / "workloads/gpt/megatron_1t.toml";
  const auto r = test::monet("inspect " + q(file) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["params_trainable"].get<std::int64_t>(), 1'008'038'758'400);
  EXPECT_EQ(j["forward_macs"].get<std::int64_t>(), 2'091'756'447'334'400);
  const auto v = test::monet("validate " + q(file));
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out, HasSubstr("valid workload 'megatron_1t' with 2822 operators"));
}

TEST(Datacenter, SelectiveRecomputeOnOneChip) {
  test::ScratchDir dir;
  const auto exp = test::source_dir() / "experiments/datacenter/gpt_small_tpu_v4.toml";
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "a"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json a = json::parse(test::read_file(dir.path() / "a/results.json"));
  // Megatron's core_attention of both layers reruns whole: the scores, softmax, attention dropout and the context
  // (its output only linear_proj reads, which keeps its input: "minimal" would leave it out). Recomputed MACs: the
  // scores and the context, 2 · 2 · (b·a·s²·d = 2·4·128²·64 = 8,388,608).
  EXPECT_EQ(a["training"]["operators_recompute"].get<int>(), 10);
  EXPECT_EQ(a["training"]["recompute_macs"].get<std::int64_t>(), 33'554'432);
  // Megatron's utilisations over every PE of the chip: hfu counts the recomputed MACs, mfu leaves them out.
  double pes = 0;
  for (const json& c : a["architecture"]["cores"]) pes += c["pe_count"].get<double>();
  const double slots = a["latency_cycles"].get<double>() * pes;
  const double macs = a["workload"]["macs"].get<double>();
  EXPECT_DOUBLE_EQ(a["hfu"].get<double>(), macs / slots);
  EXPECT_DOUBLE_EQ(a["mfu"].get<double>(), (macs - 33'554'432) / slots);
  EXPECT_LT(a["mfu"].get<double>(), a["hfu"].get<double>());
  const auto again = test::monet("run " + q(dir.path() / "a/resolved.toml") + " --out " + q(dir.path() / "b"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const json b = json::parse(test::read_file(dir.path() / "b/results.json"));
  EXPECT_EQ(a["latency_cycles"], b["latency_cycles"]);
  EXPECT_EQ(a["training"]["saved_activation_bytes"], b["training"]["saved_activation_bytes"]);
}

// Megatron's three granularities as a grid over [parallelism] recompute: selective recomputation removes exactly
// the attention core's 5·a·s²·b bytes per layer from the backward-pass activation peak (2 layers, a 4, s 128,
// b 2: 2 · 655,360), full recomputation removes more, and each step is slower than the one before.
TEST(Datacenter, RecomputeGranularitiesAsAGrid) {
  test::ScratchDir dir;
  const auto exp = test::source_dir() / "experiments/datacenter/gpt_small_tpu_v4_recompute.toml";
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "g"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string csv = test::read_file(dir.path() / "g/evaluations.csv");
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by;  // recompute -> (latency, peak)
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "id,batch,recompute,latency_cycles,energy_pj,training.peak_activation_bytes,feasible,violation,reason");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 6u) << line;
    by[f[2]] = {std::stoll(f[3]), std::stoll(f[5])};
  }
  ASSERT_EQ(by.size(), 3u);
  const auto none = by.at("\"\"\"none\"\"\""), sel = by.at("\"\"\"selective\"\"\""), full = by.at("\"\"\"full\"\"\"");
  EXPECT_EQ(none.second - sel.second, 2 * 5 * 4 * 128 * 128 * 2);
  EXPECT_LT(full.second, sel.second);
  EXPECT_LT(none.first, sel.first);
  EXPECT_LT(sel.first, full.first);
}

}  // namespace
}  // namespace monet
