// The `optimal` checkpointing policy: the chain model reproduces the rewritten graph's activation peak and recompute
// MACs for every choice of blocks, and the dynamic programme finds the same optimum as trying all 2^n choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"
#include "support/plugin_graphs.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

using test::load;
using test::training_graph;
using test::uneven_chain;


std::vector<bool> bits(std::size_t n, std::uint64_t mask) {
  std::vector<bool> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = (mask >> i & 1) != 0;
  return c;
}

/// What the rewritten graph measures for a choice: (peak_activation_bytes, recompute MACs).
std::pair<std::int64_t, std::int64_t> measured(const GraphPtr& g, const CheckpointChain& ch, const std::vector<bool>& c) {
  const GraphPtr x = apply_checkpointing(*g, ch.regions_of(c));
  const TrainingSummary s = training_summary(*x);
  return {s.memory.peak_activation_bytes, s.recompute.macs};
}

/// The cheapest choice with peak <= budget by trying all of them (model numbers); -1 when none fits.
double brute_force(const CheckpointChain& ch, std::int64_t budget) {
  double best = -1;
  for (std::uint64_t m = 0; m < (std::uint64_t{1} << ch.size()); ++m) {
    const std::vector<bool> c = bits(ch.size(), m);
    if (ch.peak(c) <= budget && (best < 0 || ch.total_cost(c) < best)) best = ch.total_cost(c);
  }
  return best;
}

class OptimalCheckpoint : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
};

TEST_F(OptimalCheckpoint, ChainModelIsTheRewrittenGraphAndTheDpIsExact) {
  const GraphPtr g = training_graph(load("toml", dir_.write("w.toml", uneven_chain())));
  for (const RecomputeSemantics semantics : {RecomputeSemantics::pytorch, RecomputeSemantics::minimal}) {
    SCOPED_TRACE(std::string(to_string(semantics)));
    const CheckpointChain ch = checkpoint_chain(g, {}, {}, semantics);
    ASSERT_EQ(ch.size(), 7u);
    std::set<std::int64_t> peaks;
    for (std::uint64_t m = 0; m < (std::uint64_t{1} << ch.size()); ++m) {
      const std::vector<bool> c = bits(ch.size(), m);
      const auto [peak, macs] = measured(g, ch, c);
      ASSERT_EQ(ch.peak(c), peak) << "choice " << m;
      ASSERT_EQ(static_cast<std::int64_t>(ch.total_cost(c)), macs) << "choice " << m;
      peaks.insert(peak);
    }
    // Hand check: checkpointing b0 alone reruns fcA, the ReLU and fcB (pytorch), 2·4·16·64 MACs, or recomputes fcA
    // and the ReLU (minimal), 4·16·64 MACs.
    EXPECT_EQ(ch.macs[0], (semantics == RecomputeSemantics::pytorch ? 2 : 1) * 4 * 16 * 64);
    for (std::int64_t budget : peaks) {
      const auto best = optimal_choice(ch, budget);
      ASSERT_TRUE(best.has_value()) << budget;
      EXPECT_EQ(best->cost, brute_force(ch, budget)) << budget;
      EXPECT_LE(best->peak, budget);
      EXPECT_EQ(measured(g, ch, best->checkpointed).first, best->peak);
    }
    EXPECT_FALSE(optimal_choice(ch, *peaks.begin() - 1).has_value());
  }
}

// ResNet-18 (CIFAR, batch 4): its 10 top-level items as the chain. Brute force over all 1,024 choices with the
// model; the model against the rewritten graph on the DP's optima and on random choices.
TEST_F(OptimalCheckpoint, ResNet18TopLevelItems) {
  const GraphPtr g = training_graph(load("onnx", test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx"));
  const auto [blocks, names] = test::top_level_chain(*g);
  const CheckpointChain ch = checkpoint_chain(g, blocks, names);
  ASSERT_EQ(ch.size(), 10u);
  std::vector<std::int64_t> peaks;
  for (std::uint64_t m = 0; m < 1024; ++m) peaks.push_back(ch.peak(bits(10, m)));
  std::sort(peaks.begin(), peaks.end());
  const std::vector<ChainChoice> front = chain_front(ch);
  EXPECT_EQ(front.front().peak, peaks.front());
  std::mt19937 random(7);
  for (int i = 0; i < 8; ++i) {
    const std::int64_t budget = peaks[std::uniform_int_distribution<std::size_t>(0, peaks.size() - 1)(random)];
    const auto best = optimal_choice(ch, budget);
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->cost, brute_force(ch, budget)) << budget;
    const auto [peak, macs] = measured(g, ch, best->checkpointed);
    EXPECT_EQ(peak, best->peak) << budget;
    EXPECT_EQ(macs, static_cast<std::int64_t>(best->cost)) << budget;
    const std::vector<bool> any = bits(10, std::uniform_int_distribution<std::uint64_t>(0, 1023)(random));
    EXPECT_EQ(measured(g, ch, any).first, ch.peak(any));
  }
}

TEST_F(OptimalCheckpoint, BudgetBelowEveryChoiceIsAUserError) {
  const GraphPtr g = training_graph(load("toml", dir_.write("w.toml", uneven_chain())));
  CheckpointPolicy p = parse_checkpoint_policy("optimal=1", SourceLocation{"cli", 3, 5});
  try {
    (void)checkpoint_regions(*g, p);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("checkpoint budget 1 B is below the smallest backward activation peak"));
  }
  EXPECT_EQ(p.text(), "optimal=1");
  EXPECT_EQ(parse_checkpoint_policy("optimal=5000,latency", SourceLocation{}).cost, "latency");
  EXPECT_THROW((void)parse_checkpoint_policy("optimal=5000,time", SourceLocation{}), UserError);
}

}  // namespace
}  // namespace monet
