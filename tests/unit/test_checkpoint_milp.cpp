// The `optimal` checkpointing policy as a MILP (Checkmate's formulation over monet's per-block choices, CBC): its
// memory model is the rewritten graph for every choice, on chains and on a graph whose blocks are not a chain; the
// MILP's optimum equals the chain DP's on chains and brute force on the non-chain graph; a time limit that stops
// CBC early keeps the best choice and reports the gap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint_milp.hpp"
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

std::string layer(const std::string& name, const std::string& op, const std::string& module, const std::string& extra) {
  return "\n[[layers]]\nname = \"" + name + "\"\nop = \"" + op + "\"\nmodule = \"" + module + "\"\n" + extra;
}


// tests/data/checkpoint_chain17.toml: 17 blocks where CBC's root does not close the gap at this budget.
constexpr std::int64_t kNodeLimitBudget = 18'057;

// Five blocks that are not a chain: b3 adds b0's output to b2's (a skip over two blocks), so whether b3 is
// recomputed decides how long b0's output stays; b1 starts with a ReLU, whose backward does not read its input.
std::string skip_graph() {
  std::string s = "[[inputs]]\nname = \"x\"\nshape = [4, 16]\n";
  s += layer("b0_fc", "linear", "b0", "out_features = 32\nbias = false\n") + layer("b0_relu", "relu", "b0", "");
  s += layer("b1_relu", "relu", "b1", "input = \"b0_relu\"\n") +
       layer("b1_fc", "linear", "b1", "out_features = 48\nbias = false\n");
  s += layer("b2_fc", "linear", "b2", "out_features = 32\nbias = false\n") + layer("b2_relu", "relu", "b2", "");
  s += layer("b3_add", "add", "b3", "inputs = [\"b2_relu\", \"b0_relu\"]\n") +
       layer("b3_fc", "linear", "b3", "out_features = 40\nbias = false\n") + layer("b3_relu", "relu", "b3", "");
  return s + layer("fc", "linear", "head", "out_features = 10\n");
}

std::vector<bool> bits(std::size_t n, std::uint64_t mask) {
  std::vector<bool> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = (mask >> i & 1) != 0;
  return c;
}

/// What the rewritten graph measures for a choice: (peak_activation_bytes, recompute MACs).
std::pair<std::int64_t, std::int64_t> measured(const GraphPtr& g, const CheckpointRegionGraph& m, const std::vector<bool>& c) {
  const TrainingSummary s = training_summary(*apply_checkpointing(*g, m.regions_of(c)));
  return {s.memory.peak_activation_bytes, s.recompute.macs};
}

class MilpCheckpoint : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
};

TEST_F(MilpCheckpoint, MatchesTheDpOnTheChain) {
  const GraphPtr g = training_graph(load("toml", dir_.write("w.toml", uneven_chain())));
  const CheckpointChain chain = checkpoint_chain(g);
  const CheckpointRegionGraph model = checkpoint_region_graph(g);
  ASSERT_EQ(model.size(), 7u);
  for (std::uint64_t mask = 0; mask < 128; ++mask) {
    const std::vector<bool> c = bits(7, mask);
    ASSERT_EQ(model.peak(c), chain.peak(c)) << mask;
    ASSERT_EQ(model.total_cost(c), chain.total_cost(c)) << mask;
  }
  const std::vector<ChainChoice> front = chain_front(chain);
  ASSERT_GE(front.size(), 4u);
  for (const ChainChoice& f : front) {
    for (std::int64_t budget : {f.peak, f.peak + 100}) {
      const auto dp = optimal_choice(chain, budget);
      const MilpSolution milp = solve_checkpoint_milp(model, budget, 30);
      ASSERT_TRUE(milp.checkpointed.has_value()) << budget;
      EXPECT_TRUE(milp.optimal);
      EXPECT_EQ(milp.gap, 0);
      EXPECT_EQ(milp.cost, dp->cost) << budget;
      EXPECT_LE(milp.peak, budget);
    }
  }
  const MilpSolution below = solve_checkpoint_milp(model, front.front().peak - 1, 30);
  EXPECT_TRUE(below.infeasible);
  EXPECT_FALSE(below.checkpointed.has_value());
  EXPECT_EQ(min_peak_milp(model, 30).peak, front.front().peak);
}

// ResNet-18 (CIFAR, batch 4): its 10 top-level items, as the DP's test takes them; the MILP's optimum equals the
// DP's at budgets across its front.
TEST_F(MilpCheckpoint, MatchesTheDpOnResNet18TopLevelItems) {
  const GraphPtr g = training_graph(load("onnx", test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx"));
  const auto [blocks, names] = test::top_level_chain(*g);
  const CheckpointChain chain = checkpoint_chain(g, blocks, names);
  const CheckpointRegionGraph model = checkpoint_region_graph(g, blocks, names);
  ASSERT_EQ(model.size(), 10u);
  const std::vector<ChainChoice> front = chain_front(chain);
  std::mt19937 random(11);
  for (int i = 0; i < 6; ++i) {
    const ChainChoice& f = front[std::uniform_int_distribution<std::size_t>(0, front.size() - 1)(random)];
    EXPECT_EQ(model.peak(f.checkpointed), f.peak);
    const MilpSolution milp = solve_checkpoint_milp(model, f.peak, 30);
    ASSERT_TRUE(milp.checkpointed.has_value());
    EXPECT_TRUE(milp.optimal);
    EXPECT_EQ(milp.cost, optimal_choice(chain, f.peak)->cost) << f.peak;
    EXPECT_EQ(measured(g, model, *milp.checkpointed).first, milp.peak);
  }
}

TEST_F(MilpCheckpoint, NonChainGraphMatchesBruteForce) {
  const GraphPtr g = training_graph(load("toml", dir_.write("w.toml", skip_graph())));
  const CheckpointRegionGraph model = checkpoint_region_graph(g);
  ASSERT_EQ(model.size(), 5u);
  std::map<std::int64_t, double> cheapest;  // budget (a peak some choice reaches) -> least MACs within it
  for (std::uint64_t mask = 0; mask < 32; ++mask) {
    const std::vector<bool> c = bits(5, mask);
    const auto [peak, macs] = measured(g, model, c);
    ASSERT_EQ(model.peak(c), peak) << mask;
    ASSERT_EQ(static_cast<std::int64_t>(model.total_cost(c)), macs) << mask;
    cheapest.emplace(peak, 1e300);
  }
  for (auto& [budget, best] : cheapest) {
    for (std::uint64_t mask = 0; mask < 32; ++mask) {
      const auto [peak, macs] = measured(g, model, bits(5, mask));
      if (peak <= budget) best = std::min(best, static_cast<double>(macs));
    }
    const MilpSolution milp = solve_checkpoint_milp(model, budget, 30);
    ASSERT_TRUE(milp.checkpointed.has_value()) << budget;
    EXPECT_EQ(milp.cost, best) << budget;
  }
  EXPECT_GE(cheapest.size(), 4u);
  // The chain DP's pairwise model does not hold here: b0's output outlives b1 when b3 is recomputed.
  const CheckpointChain chain = checkpoint_chain(g);
  int differ = 0;
  for (std::uint64_t mask = 0; mask < 32; ++mask) differ += chain.peak(bits(5, mask)) != model.peak(bits(5, mask));
  EXPECT_GT(differ, 0);
}

// A node limit stops CBC at the same point on any machine and under any load (a time limit does not): the choice
// it keeps is within the budget, no cheaper than the DP's optimum, and its bound no higher; the gap is theirs.
TEST_F(MilpCheckpoint, NodeLimitStopsEarlyWithItsGapTheSameEveryTime) {
  const GraphPtr g = training_graph(load("toml", test::source_dir() / "tests/data/checkpoint_chain17.toml"));
  const CheckpointRegionGraph model = checkpoint_region_graph(g);
  ASSERT_EQ(model.size(), 17u);
  const auto dp = optimal_choice(checkpoint_chain(g), kNodeLimitBudget);
  ASSERT_TRUE(dp.has_value());

  const MilpSolution full = solve_checkpoint_milp(model, kNodeLimitBudget, 60);
  ASSERT_TRUE(full.checkpointed.has_value());
  EXPECT_TRUE(full.optimal);
  EXPECT_FALSE(full.node_limit || full.time_limit);
  EXPECT_EQ(full.gap, 0);
  EXPECT_EQ(full.cost, dp->cost);
  EXPECT_EQ(full.bound, full.cost);
  EXPECT_GE(full.nodes, 1);  // it had to branch: the root alone does not prove it

  const MilpSolution stopped = solve_checkpoint_milp(model, kNodeLimitBudget, 60, 0);
  ASSERT_TRUE(stopped.checkpointed.has_value());
  EXPECT_FALSE(stopped.optimal);
  EXPECT_TRUE(stopped.node_limit);
  EXPECT_FALSE(stopped.time_limit);
  EXPECT_EQ(stopped.nodes, 0);
  EXPECT_LE(stopped.peak, kNodeLimitBudget);
  EXPECT_EQ(stopped.peak, model.peak(*stopped.checkpointed));
  EXPECT_GT(stopped.cost, dp->cost);
  EXPECT_LE(stopped.bound, dp->cost + 1e-6 * dp->cost);
  EXPECT_GT(stopped.gap, 0.01);
  EXPECT_DOUBLE_EQ(stopped.gap, (stopped.cost - stopped.bound) / stopped.cost);
  const MilpSolution again = solve_checkpoint_milp(model, kNodeLimitBudget, 60, 0);
  EXPECT_EQ(again.checkpointed, stopped.checkpointed);
  EXPECT_EQ(again.bound, stopped.bound);

  // Through the policy: how it was solved comes back with the regions.
  CheckpointPolicy p = parse_checkpoint_policy("optimal=" + std::to_string(kNodeLimitBudget), SourceLocation{});
  CheckpointSolve solve;
  const std::vector<CheckpointRegion> regions =
      optimal_regions(g, p, {}, {}, parse_checkpoint_solver("milp,60,0", SourceLocation{}), &solve);
  EXPECT_EQ(solve.solver, "milp");
  EXPECT_EQ(solve.status, "node_limit");
  EXPECT_EQ(solve.objective, stopped.cost);
  EXPECT_EQ(solve.best_bound, stopped.bound);
  EXPECT_EQ(solve.node_limit, 0);
  EXPECT_EQ(solve.checkpointed.size(), regions.size());
  (void)optimal_regions(g, p, {}, {}, CheckpointSolver{}, &solve);
  EXPECT_EQ(solve.solver, "dp");
  EXPECT_EQ(solve.status, "optimal");
  EXPECT_EQ(solve.objective, dp->cost);
  EXPECT_EQ(solve.gap, 0);
}

TEST_F(MilpCheckpoint, SolverSpellings) {
  EXPECT_EQ(parse_checkpoint_solver("dp", SourceLocation{}).text(), "dp");
  EXPECT_EQ(parse_checkpoint_solver("segments", SourceLocation{}).text(), "segments");
  EXPECT_EQ(parse_checkpoint_solver("milp", SourceLocation{}).text(), "milp,10");
  EXPECT_EQ(parse_checkpoint_solver("milp,2.5", SourceLocation{}).text(), "milp,2.5");
  const CheckpointSolver s = parse_checkpoint_solver("milp,60,100", SourceLocation{});
  EXPECT_EQ(s.node_limit, 100);
  EXPECT_EQ(s.text(), "milp,60,100");
  for (const char* bad : {"", "cplex", "dp,5", "milp,", "milp,-1", "milp,5,", "milp,5,-1", "milp,5,1.5", "milp,1,2,3", "segments,5"}) {
    EXPECT_THROW((void)parse_checkpoint_solver(bad, SourceLocation{}), UserError) << bad;
  }
}

TEST_F(MilpCheckpoint, BudgetBelowEveryChoiceIsAUserErrorAtTheBudget) {
  const GraphPtr g = training_graph(load("toml", dir_.write("w.toml", uneven_chain())));
  const CheckpointPolicy p = parse_checkpoint_policy("optimal=1", SourceLocation{"cli", 3, 5});
  CheckpointSolver milp;
  milp.name = "milp";
  try {
    (void)optimal_regions(g, p, {}, {}, milp);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 3u);
    EXPECT_THAT(e.what(), HasSubstr("checkpoint budget 1 B is below the smallest backward activation peak any choice "
                                    "of the 7 blocks of"));
    EXPECT_THAT(e.what(), HasSubstr("(" + std::to_string(chain_front(checkpoint_chain(g)).front().peak) + " B)"));
  }
}

}  // namespace
}  // namespace monet
