// Data-center workloads from the command line (docs/datacenter.md): the generated 1T GPT inspected and validated,
// and the one-chip GPT experiment with Megatron's selective recomputation, reproduced from its resolved.toml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  // The scores, softmax and attention dropout of both layers; the context is not recomputed (linear_proj keeps
  // its output). Recomputed MACs: the scores, 2 · (b·a·s²·d = 2·4·128²·64 = 8,388,608).
  EXPECT_EQ(a["training"]["operators_recompute"].get<int>(), 6);
  EXPECT_EQ(a["training"]["recompute_macs"].get<std::int64_t>(), 16'777'216);
  const auto again = test::monet("run " + q(dir.path() / "a/resolved.toml") + " --out " + q(dir.path() / "b"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const json b = json::parse(test::read_file(dir.path() / "b/results.json"));
  EXPECT_EQ(a["latency_cycles"], b["latency_cycles"]);
  EXPECT_EQ(a["training"]["saved_activation_bytes"], b["training"]["saved_activation_bytes"]);
}

}  // namespace
}  // namespace monet
