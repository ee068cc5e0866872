// What every search plugin owes the kernel, on test problems without an accelerator: determinism for a seed,
// plan() before the first batch, the batch structure each plugin documents, SearchStopped propagating, only
// feasible points on a returned front, and parameter errors that name the parameter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "monet/search/genome.hpp"
#include "support/search_problems.hpp"

namespace monet::test {
namespace {

using ::testing::HasSubstr;

/// Small budgets: these tests check contracts, not quality.
const std::map<std::string, Overrides> kSmall = {
    {"nsga2", {{"population", std::int64_t{16}}, {"generations", std::int64_t{5}}}},
    {"random", {{"budget", std::int64_t{100}}, {"batch", std::int64_t{32}}}},
    {"grid", {}},
    {"anneal", {{"chains", std::int64_t{4}}, {"iterations", std::int64_t{20}}}},
};

TEST(SearchPlugins, AreFoundWithDocumentedParameters) {
  for (const auto& [name, overrides] : kSmall) {
    const PluginHandle* h = Registry::global().find(PluginKind::search, name);
    ASSERT_NE(h, nullptr) << name;
    EXPECT_FALSE(h->info.description.empty()) << name;
    for (const ParamSpec& p : h->info.params) EXPECT_FALSE(p.doc.empty()) << name << "." << p.name;
  }
}

TEST(SearchPlugins, SameSeedSameRunOtherSeedOtherRun) {
  for (const auto& [name, overrides] : kSmall) {
    ProblemContext a(grid_constr(20), 1), b(grid_constr(20), 1), c(grid_constr(20), 2);
    const auto ra = run_search(name, overrides, a);
    const auto rb = run_search(name, overrides, b);
    (void)run_search(name, overrides, c);
    EXPECT_EQ(a.batches, b.batches) << name;
    ASSERT_EQ(ra.size(), rb.size()) << name;
    for (std::size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].point, rb[i].point) << name;
    if (name == "grid") {
      EXPECT_EQ(a.batches, c.batches);  // no randomness at all
    } else {
      EXPECT_NE(a.batches, c.batches) << name;
    }
  }
}

TEST(SearchPlugins, PlanFirstThenEvaluateInTheAnnouncedAmount) {
  for (const auto& [name, overrides] : kSmall) {
    ProblemContext ctx(grid_constr(20), 3);
    (void)run_search(name, overrides, ctx);
    ASSERT_EQ(ctx.plans.size(), 1u) << name;
    EXPECT_EQ(ctx.plans[0], ctx.archive.size()) << name;
  }
}

TEST(SearchPlugins, SearchStoppedPropagates) {
  for (const auto& [name, overrides] : kSmall) {
    ProblemContext ctx(grid_constr(20), 1);
    ctx.stop_at_call = 1;
    EXPECT_THROW((void)run_search(name, overrides, ctx), SearchStopped) << name;
    EXPECT_EQ(ctx.batches.size(), 1u) << name;
  }
}

TEST(SearchPlugins, ReturnedFrontsHoldOnlyFeasiblePoints) {
  // grid_constr has infeasible points (constraints) and unevaluable ones (NaN objectives, infinite violation).
  for (const auto& [name, overrides] : kSmall) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      ProblemContext ctx(grid_constr(20), seed);
      const auto chosen = run_search(name, overrides, ctx);
      ASSERT_FALSE(chosen.empty()) << name;
      for (const Evaluation& e : chosen) EXPECT_TRUE(e.feasible()) << name << " seed " << seed;
      const bool saw_infeasible = std::any_of(ctx.archive.begin(), ctx.archive.end(), [](const Evaluation& e) { return !e.feasible(); });
      EXPECT_TRUE(saw_infeasible) << name;  // the test means something
    }
  }
}

TEST(SearchPlugins, AllInfeasibleReturnsTheLeastViolatingPoint) {
  TestProblem problem = grid_constr(20);
  auto inner = problem.evaluate;
  problem.evaluate = [inner](const DesignPoint& p) {
    Evaluation e = inner(p);
    if (e.feasible()) e.violation = 1 + p.genes[0];  // nothing is feasible; least violation at x1 = 0
    return e;
  };
  for (const auto& [name, overrides] : kSmall) {
    if (name == "anneal") continue;  // returns each chain's best, checked below
    ProblemContext ctx(problem, 1);
    const auto chosen = run_search(name, overrides, ctx);
    ASSERT_EQ(chosen.size(), 1u) << name;
    double least = std::numeric_limits<double>::infinity();
    for (const Evaluation& e : ctx.archive) least = std::min(least, e.violation);
    EXPECT_EQ(chosen[0].violation, least) << name;
  }
}

// ---------------------------------------------------------------------------------------------- nsga2

TEST(SearchNsga2, OneBatchPerGenerationSeedsFirst) {
  ProblemContext ctx(grid_zdt(Zdt::one, 8, 20), 5);
  (void)run_search("nsga2", {{"population", std::int64_t{12}}, {"generations", std::int64_t{7}}}, ctx);
  EXPECT_EQ(ctx.plans, std::vector<std::size_t>{12 * 8});
  ASSERT_EQ(ctx.batches.size(), 8u);
  for (const auto& batch : ctx.batches) EXPECT_EQ(batch.size(), 12u);
  EXPECT_EQ(ctx.batches[0][0], ctx.space().configured());
  std::set<DesignPoint> distinct;  // duplicate elimination against every earlier point
  for (const Evaluation& e : ctx.archive) distinct.insert(e.point);
  EXPECT_EQ(distinct.size(), ctx.archive.size());
}

TEST(SearchNsga2, SeedingCanBeTurnedOff) {
  ProblemContext seeded(grid_zdt(Zdt::one, 8, 20), 5), unseeded(grid_zdt(Zdt::one, 8, 20), 5);
  (void)run_search("nsga2", {{"population", std::int64_t{12}}, {"generations", std::int64_t{0}}}, seeded);
  (void)run_search("nsga2", {{"population", std::int64_t{12}}, {"generations", std::int64_t{0}}, {"seed_population", false}},
                   unseeded);
  EXPECT_EQ(seeded.batches[0][0], seeded.space().configured());
  EXPECT_NE(unseeded.batches[0][0], unseeded.space().configured());
}

TEST(SearchNsga2, SpaceSmallerThanThePopulationRepeatsPoints) {
  const TestProblem tiny{space_of({gene("a", 3, false)}, {"f"}), [](const DesignPoint& p) { return feasible({1.0 * p.genes[0]}); }};
  ProblemContext ctx(tiny, 1);
  const auto chosen = run_search("nsga2", {{"population", std::int64_t{8}}, {"generations", std::int64_t{2}}}, ctx);
  EXPECT_EQ(ctx.archive.size(), 24u);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].point.genes[0], 0);
}

// ---------------------------------------------------------------------------------------------- random

TEST(SearchRandomSampling, DrawsWithoutReplacementConfiguredFirst) {
  ProblemContext ctx(grid_zdt(Zdt::one, 3, 9), 4);  // 1000 points
  (void)run_search("random", {{"budget", std::int64_t{300}}, {"batch", std::int64_t{64}}}, ctx);
  ASSERT_EQ(ctx.archive.size(), 300u);
  EXPECT_EQ(ctx.archive[0].point, ctx.space().configured());
  std::set<DesignPoint> distinct;
  for (const Evaluation& e : ctx.archive) distinct.insert(e.point);
  EXPECT_EQ(distinct.size(), 300u);
  ASSERT_EQ(ctx.batches.size(), 5u);  // 4 x 64 + 44
  EXPECT_EQ(ctx.batches.back().size(), 44u);
}

TEST(SearchRandomSampling, BudgetAboveTheSpaceEnumeratesEveryPointOnce) {
  ProblemContext ctx(grid_zdt(Zdt::one, 3, 9), 4);
  (void)run_search("random", {{"budget", std::int64_t{5000}}}, ctx);
  EXPECT_EQ(ctx.plans, std::vector<std::size_t>{1000});
  std::set<DesignPoint> distinct;
  for (const Evaluation& e : ctx.archive) distinct.insert(e.point);
  EXPECT_EQ(distinct.size(), 1000u);
  EXPECT_EQ(ctx.archive.size(), 1000u);
}

TEST(SearchRandomSampling, SpacesBeyondSixtyFourBitsAreSampled) {
  ProblemContext ctx(zdt5(), 4);  // 2^80 points
  (void)run_search("random", {{"budget", std::int64_t{500}}}, ctx);
  EXPECT_EQ(ctx.archive[0].point, ctx.space().configured());
  std::set<DesignPoint> distinct;
  for (const Evaluation& e : ctx.archive) distinct.insert(e.point);
  EXPECT_EQ(distinct.size(), 500u);
}

// ------------------------------------------------------------------------------------------------ grid

TEST(SearchGrid, EnumeratesInMixedRadixOrder) {
  ProblemContext ctx(allocation(4, 3), 1);
  (void)run_search("grid", {{"batch", std::int64_t{10}}}, ctx);
  ASSERT_EQ(ctx.archive.size(), 81u);
  for (std::uint64_t i = 0; i < 81; ++i) EXPECT_EQ(ctx.archive[i].point, point_at(ctx.space(), i));
  EXPECT_EQ(ctx.batches.size(), 9u);
}

TEST(SearchGrid, RefusesSpacesAboveTheLimitNamingTheParameter) {
  ProblemContext ctx(allocation(6, 4), 1);
  try {
    (void)run_search("grid", {{"limit", std::int64_t{4000}}}, ctx);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("limit: the design space has 4096 points, more than limit = 4000; raise `limit`"));
  }
  EXPECT_TRUE(ctx.batches.empty());
  ProblemContext huge(zdt5(), 1);
  EXPECT_THROW((void)run_search("grid", {}, huge), UserError);
}

// ---------------------------------------------------------------------------------------------- anneal

TEST(SearchAnneal, OneBatchOfAllChainsPerIterationBestFirst) {
  ProblemContext ctx(allocation(6, 4), 2);
  const auto chosen = run_search("anneal", {{"chains", std::int64_t{5}}, {"iterations", std::int64_t{30}}}, ctx);
  EXPECT_EQ(ctx.plans, std::vector<std::size_t>{5 * 31});
  ASSERT_EQ(ctx.batches.size(), 31u);
  for (const auto& batch : ctx.batches) EXPECT_EQ(batch.size(), 5u);
  EXPECT_EQ(ctx.batches[0][0], ctx.space().configured());
  auto one_gene_apart = [](const DesignPoint& a, const DesignPoint& b) {
    int differ = 0;
    for (std::size_t g = 0; g < a.genes.size(); ++g) differ += a.genes[g] != b.genes[g];
    return differ == 1;
  };
  for (std::size_t step = 1; step < ctx.batches.size(); ++step)  // a proposal moves one gene of its chain's state
    for (std::size_t c = 0; c < 5; ++c) {
      bool from_chain = false;
      for (std::size_t earlier = 0; earlier < step; ++earlier)
        from_chain = from_chain || one_gene_apart(ctx.batches[step][c], ctx.batches[earlier][c]);
      EXPECT_TRUE(from_chain) << "step " << step << " chain " << c;
    }
  ASSERT_FALSE(chosen.empty());
  const DefaultScalarisation scalar(allocation(6, 4));
  for (std::size_t i = 1; i < chosen.size(); ++i) EXPECT_LE(scalar(chosen[0]), scalar(chosen[i]));
  for (const Evaluation& e : ctx.archive) EXPECT_LE(scalar(chosen[0]), scalar(e) + 1e-12);
}

TEST(SearchAnneal, WeightsMustMatchTheObjectives) {
  ProblemContext ctx(allocation(6, 4), 2);
  try {
    (void)run_search("anneal", {{"weights", std::vector<double>{1, 2, 3}}}, ctx);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("weights: has 3 values but the search has 2 objectives"));
  }
  EXPECT_THROW((void)run_search("anneal", {{"weights", std::vector<double>{0, 0}}}, ctx), UserError);
}

}  // namespace
}  // namespace monet::test
