// Multi-objective building blocks against hand-computed values and brute-force definitions: dominance,
// Deb's constrained domination, fast non-dominated sorting, crowding distance, the Pareto filter and the
// hypervolume (2-D sweep, 3-D dimension sweep, WFG from 4-D) cross-checked by inclusion-exclusion, by unit-cell
// counting on integer points and by lifting a set into one more dimension.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "monet/search/pareto.hpp"
#include "monet/search/random.hpp"

namespace monet {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Points = std::vector<std::vector<double>>;

Evaluation ev(std::vector<double> f, double violation = 0) {
  Evaluation e;
  e.objectives = std::move(f);
  e.violation = violation;
  return e;
}

/// Random evaluations with small integer objectives (ties and duplicates are common) and some infeasible ones.
std::vector<Evaluation> random_evaluations(Random& r, std::size_t n, std::size_t objectives) {
  std::vector<Evaluation> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> f;
    for (std::size_t m = 0; m < objectives; ++m) f.push_back(static_cast<double>(r.below(6)));
    const std::int64_t kind = r.below(10);
    out.push_back(ev(f, kind == 0 ? kInf : kind == 1 ? static_cast<double>(1 + r.below(3)) : 0.0));
  }
  return out;
}

// ------------------------------------------------------------------------------------------- dominance

TEST(SearchPareto, DominanceIsStrictInOneObjective) {
  EXPECT_TRUE(dominates({1, 2}, {1, 3}));
  EXPECT_TRUE(dominates({0, 0, 0}, {1, 1, 1}));
  EXPECT_FALSE(dominates({1, 2}, {1, 2}));  // equal: neither dominates
  EXPECT_FALSE(dominates({1, 3}, {2, 2}));  // incomparable
  EXPECT_FALSE(dominates({2, 2}, {1, 3}));
  EXPECT_FALSE(dominates({std::nan(""), 0}, {1, 1}));  // NaN never dominates, nor is dominated
  EXPECT_FALSE(dominates({0, 0}, {std::nan(""), 1}));
}

TEST(SearchPareto, ConstrainedDominationFollowsDebsRules) {
  // (i) feasible beats infeasible, whatever the objectives
  EXPECT_TRUE(constrained_dominates(ev({9, 9}), ev({0, 0}, 0.1)));
  EXPECT_FALSE(constrained_dominates(ev({0, 0}, 0.1), ev({9, 9})));
  // (ii) both infeasible: smaller violation wins, objectives ignored; equal violations: neither
  EXPECT_TRUE(constrained_dominates(ev({9, 9}, 0.1), ev({0, 0}, 0.2)));
  EXPECT_FALSE(constrained_dominates(ev({0, 0}, 0.2), ev({9, 9}, 0.1)));
  EXPECT_FALSE(constrained_dominates(ev({0, 0}, 0.2), ev({1, 1}, 0.2)));
  EXPECT_TRUE(constrained_dominates(ev({std::nan(""), 0}, 5), ev({std::nan(""), 0}, kInf)));  // unevaluable is worst
  EXPECT_FALSE(constrained_dominates(ev({1, 1}, kInf), ev({2, 2}, kInf)));
  // (iii) both feasible: ordinary dominance
  EXPECT_TRUE(constrained_dominates(ev({1, 1}), ev({1, 2})));
  EXPECT_FALSE(constrained_dominates(ev({1, 3}), ev({2, 2})));
}

// ------------------------------------------------------------------------------- non-dominated sorting

/// The definition: front k = the members not dominated by any member outside fronts 0..k-1, peeled one by one.
std::vector<std::vector<std::size_t>> fronts_by_definition(const std::vector<Evaluation>& evals) {
  std::vector<std::vector<std::size_t>> fronts;
  std::vector<bool> placed(evals.size(), false);
  std::size_t left = evals.size();
  while (left > 0) {
    std::vector<std::size_t> front;
    for (std::size_t p = 0; p < evals.size(); ++p) {
      if (placed[p]) continue;
      bool dominated = false;
      for (std::size_t q = 0; q < evals.size() && !dominated; ++q)
        dominated = !placed[q] && constrained_dominates(evals[q], evals[p]);
      if (!dominated) front.push_back(p);
    }
    for (std::size_t p : front) placed[p] = true;
    left -= front.size();
    fronts.push_back(front);
  }
  return fronts;
}

TEST(SearchPareto, FastNonDominatedSortMatchesTheDefinitionOnRandomSets) {
  Random r(11);
  for (int trial = 0; trial < 200; ++trial) {
    const auto evals = random_evaluations(r, 1 + static_cast<std::size_t>(r.below(60)), 1 + static_cast<std::size_t>(r.below(4)));
    ASSERT_EQ(non_dominated_fronts(evals), fronts_by_definition(evals)) << "trial " << trial;
  }
}

TEST(SearchPareto, NonDominatedSortPutsFeasibleFirstAndInfeasibleByViolation) {
  const std::vector<Evaluation> evals = {ev({0, 0}, 2), ev({5, 5}), ev({1, 9}), ev({9, 1}), ev({6, 6}),
                                         ev({0, 0}, 1), ev({0, 0}, kInf), ev({5, 5})};
  const std::vector<std::vector<std::size_t>> expected = {{1, 2, 3, 7}, {4}, {5}, {0}, {6}};
  EXPECT_EQ(non_dominated_fronts(evals), expected);
  EXPECT_TRUE(non_dominated_fronts({}).empty());
}

// ----------------------------------------------------------------------------------- crowding distance

TEST(SearchPareto, CrowdingDistanceByHand) {
  // f1 range 4: (0,4) and (4,0) are boundaries; (1,2): (2-0)/4 + (4-1)/4 = 1.25; (2,1): (4-1)/4 + (2-0)/4 = 1.25.
  const std::vector<Evaluation> evals = {ev({9, 9}), ev({2, 1}), ev({0, 4}), ev({1, 2}), ev({4, 0})};
  const std::vector<double> d = crowding_distance(evals, {2, 3, 1, 4});
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], kInf);
  EXPECT_DOUBLE_EQ(d[1], 1.25);
  EXPECT_DOUBLE_EQ(d[2], 1.25);
  EXPECT_EQ(d[3], kInf);
}

TEST(SearchPareto, CrowdingDistanceSkipsFlatAndIncomparableObjectives) {
  // f2 is constant (adds nothing, no infinities); f1 sorted 0, 1, 3, 4 → interior (3-0)/4, (4-1)/4;
  // f3 has a NaN (an unevaluated point) and is skipped for the whole front.
  const std::vector<Evaluation> evals = {ev({0, 7, 1}), ev({1, 7, std::nan("")}), ev({3, 7, 2}), ev({4, 7, 3})};
  const std::vector<double> d = crowding_distance(evals, {0, 1, 2, 3});
  EXPECT_EQ(d[0], kInf);
  EXPECT_DOUBLE_EQ(d[1], 0.75);
  EXPECT_DOUBLE_EQ(d[2], 0.75);
  EXPECT_EQ(d[3], kInf);
  // one or two members are both boundaries; all equal: nothing
  EXPECT_EQ(crowding_distance(evals, {2}), std::vector<double>{0.0});  // zero range everywhere
  EXPECT_EQ(crowding_distance(evals, {0, 2}), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(crowding_distance({ev({1, 1}), ev({1, 1}), ev({1, 1})}, {0, 1, 2}), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(crowding_distance(evals, {}).empty());
}

TEST(SearchPareto, CrowdingDistanceTiesAreBrokenByPositionInTheFront) {
  // Duplicated objective vectors: the first of equal values is the lower boundary, the last the upper.
  const std::vector<Evaluation> evals = {ev({0, 2}), ev({1, 1}), ev({1, 1}), ev({2, 0})};
  const std::vector<double> d = crowding_distance(evals, {0, 1, 2, 3});
  EXPECT_EQ(d[0], kInf);
  EXPECT_DOUBLE_EQ(d[1], (1.0 - 0.0) / 2 + (2.0 - 1.0) / 2);  // f1 neighbours 0 and 1, f2 neighbours 1 and 2
  EXPECT_DOUBLE_EQ(d[2], (2.0 - 1.0) / 2 + (1.0 - 0.0) / 2);
  EXPECT_EQ(d[3], kInf);
}

// -------------------------------------------------------------------------------------- Pareto filter

TEST(SearchPareto, ParetoFrontKeepsFeasibleNonDominatedFirstOfDuplicates) {
  const std::vector<Evaluation> evals = {ev({2, 2}), ev({1, 3}), ev({0, 0}, 0.5), ev({1, 3}), ev({3, 1}),
                                         ev({2, 3}), ev({std::nan(""), 0}), ev({3, 1})};
  EXPECT_EQ(pareto_front(evals), (std::vector<std::size_t>{0, 1, 4}));
  EXPECT_TRUE(pareto_front({ev({0, 0}, 1)}).empty());
}

TEST(SearchPareto, ParetoFrontMatchesTheDefinitionOnRandomSets) {
  Random r(5);
  for (int trial = 0; trial < 200; ++trial) {
    const auto evals = random_evaluations(r, 1 + static_cast<std::size_t>(r.below(80)), 1 + static_cast<std::size_t>(r.below(4)));
    std::vector<std::size_t> expected;
    std::set<std::vector<double>> kept;
    for (std::size_t p = 0; p < evals.size(); ++p) {
      if (!evals[p].feasible() || kept.contains(evals[p].objectives)) continue;
      bool dominated = false;
      for (const Evaluation& q : evals) dominated = dominated || (q.feasible() && dominates(q.objectives, evals[p].objectives));
      if (!dominated) {
        expected.push_back(p);
        kept.insert(evals[p].objectives);
      }
    }
    ASSERT_EQ(pareto_front(evals), expected) << "trial " << trial;
  }
}

TEST(SearchPareto, BestFrontIsOrderedByObjectivesOrTheLeastViolation) {
  const auto best = best_front({ev({2, 2}), ev({3, 1}), ev({1, 3}), ev({0, 0}, 1)});
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].objectives, (std::vector<double>{1, 3}));
  EXPECT_EQ(best[2].objectives, (std::vector<double>{3, 1}));
  const auto infeasible = best_front({ev({0, 0}, kInf), ev({5, 5}, 0.3), ev({1, 1}, 0.7), ev({4, 4}, 0.3)});
  ASSERT_EQ(infeasible.size(), 1u);
  EXPECT_EQ(infeasible[0].objectives, (std::vector<double>{5, 5}));
  EXPECT_TRUE(best_front({}).empty());
}

// ----------------------------------------------------------------------------------------- hypervolume

/// Inclusion-exclusion over all subsets: the volume of the union of boxes [p, ref]. Exact, O(2^n d).
double hv_inclusion_exclusion(const Points& points, const std::vector<double>& ref) {
  double volume = 0;
  const std::size_t n = points.size();
  for (std::uint64_t mask = 1; mask < (1ULL << n); ++mask) {
    std::vector<double> corner(ref.size(), -kInf);
    int members = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(mask >> i & 1)) continue;
      ++members;
      for (std::size_t m = 0; m < ref.size(); ++m) corner[m] = std::max(corner[m], points[i][m]);
    }
    double box = 1;
    for (std::size_t m = 0; m < ref.size(); ++m) box *= std::max(0.0, ref[m] - corner[m]);
    volume += (members % 2 == 1 ? 1 : -1) * box;
  }
  return volume;
}

/// Integer points: count the unit cells [c, c+1) of [0, ref) dominated by some point.
double hv_cells(const Points& points, const std::vector<int>& ref) {
  const std::size_t d = ref.size();
  std::vector<int> cell(d, 0);
  double count = 0;
  while (true) {
    bool covered = false;
    for (const auto& p : points) {
      bool inside = true;
      for (std::size_t m = 0; m < d && inside; ++m) inside = p[m] <= cell[m];
      covered = covered || inside;
    }
    count += covered ? 1 : 0;
    std::size_t m = 0;
    while (m < d && ++cell[m] == ref[m]) cell[m++] = 0;
    if (m == d) break;
  }
  return count;
}

Points random_points(Random& r, std::size_t n, std::size_t d, bool integer) {
  Points points;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> p;
    for (std::size_t m = 0; m < d; ++m) p.push_back(integer ? static_cast<double>(r.below(6)) : r.uniform());
    points.push_back(p);
  }
  return points;
}

TEST(SearchHypervolume, HandCheckedValues) {
  EXPECT_DOUBLE_EQ(hypervolume({{0, 1}, {0.5, 0.5}, {1, 0}}, {2, 2}), 3.25);  // 2 + 0.75 + 0.5 (search.md §3)
  EXPECT_DOUBLE_EQ(hypervolume({{1, 1, 1}}, {2, 2, 2}), 1.0);
  EXPECT_DOUBLE_EQ(hypervolume({{1, 1, 1, 1}}, {2, 3, 2, 2}), 2.0);
  EXPECT_DOUBLE_EQ(hypervolume({{3}, {1}}, {4}), 3.0);
  // two 3-D boxes 2x2x1 and 1x1x2 overlapping in 1x1x1: 4 + 2 - 1
  EXPECT_DOUBLE_EQ(hypervolume({{0, 0, 1}, {1, 1, 0}}, {2, 2, 2}), 5.0);
}

TEST(SearchHypervolume, OnlyPointsStrictlyBetterThanTheReferenceCount) {
  EXPECT_EQ(hypervolume({}, {1, 1}), 0.0);
  EXPECT_EQ(hypervolume({{1, 0}, {0, 2}, {std::nan(""), 0}}, {1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(hypervolume({{1, 0}, {0.5, 0.5}, {2, -1}}, {1, 1}), 0.25);
  EXPECT_DOUBLE_EQ(hypervolume({{0.5, 0.5, 1}, {0.5, 0.5, 0.5}}, {1, 1, 1}), 0.125);
}

TEST(SearchHypervolume, ReferenceFrontsOfSearchMd) {
  // grid-ZDT1, K = 10 and K = 100: 0.820509 and 0.871463 at r = (1.1, 1.1) (search.md §4.2, 6 digits).
  for (const auto& [k, expected] : {std::pair{10, 0.820509}, std::pair{100, 0.871463}}) {
    Points front;
    for (int j = 0; j <= k; ++j) front.push_back({j / static_cast<double>(k), 1 - std::sqrt(j / static_cast<double>(k))});
    EXPECT_NEAR(hypervolume(front, {1.1, 1.1}), expected, 5e-7);
  }
  // ZDT5 front f1 = 1..31, f2 = 10 / f1: 300.7275 at r = (32, 11), 260.0501 at r = (31, 10).
  Points zdt5;
  for (int f1 = 1; f1 <= 31; ++f1) zdt5.push_back({static_cast<double>(f1), 10.0 / f1});
  EXPECT_NEAR(hypervolume(zdt5, {32, 11}), 300.7275, 5e-5);
  EXPECT_NEAR(hypervolume(zdt5, {31, 10}), 260.0501, 5e-5);
}

TEST(SearchHypervolume, MatchesInclusionExclusionInTwoToFiveDimensions) {
  Random r(3);
  for (std::size_t d = 2; d <= 5; ++d) {
    for (int trial = 0; trial < 60; ++trial) {
      const Points points = random_points(r, 1 + static_cast<std::size_t>(r.below(11)), d, trial % 2 == 0);
      const std::vector<double> ref(d, trial % 2 == 0 ? 6.0 : 1.0);
      const double exact = hv_inclusion_exclusion(points, ref);
      ASSERT_NEAR(hypervolume(points, ref), exact, 1e-9 * std::max(1.0, exact)) << d << "-D trial " << trial;
    }
  }
}

TEST(SearchHypervolume, MatchesUnitCellCountsOnIntegerPoints) {
  Random r(8);
  for (std::size_t d = 3; d <= 4; ++d) {
    for (int trial = 0; trial < 20; ++trial) {
      const Points points = random_points(r, 40, d, true);
      EXPECT_EQ(hypervolume(points, std::vector<double>(d, 6.0)), hv_cells(points, std::vector<int>(d, 6))) << d << "-D";
    }
  }
}

TEST(SearchHypervolume, LiftingIntoOneMoreDimensionMultipliesByTheSlab) {
  // The 2-D sweep, the 3-D sweep and WFG in 4 and 5 dimensions must agree: adding a coordinate c with reference
  // r multiplies the volume by r - c.
  Random r(21);
  for (int trial = 0; trial < 20; ++trial) {
    Points points = random_points(r, 60, 2, false);
    std::vector<double> ref = {1, 1};
    double volume = hypervolume(points, ref);
    for (int extra = 0; extra < 3; ++extra) {
      const double c = 0.25 * extra;
      for (auto& p : points) p.push_back(c);
      ref.push_back(1.5);
      const double lifted = hypervolume(points, ref);
      ASSERT_NEAR(lifted, volume * (1.5 - c), 1e-12) << "to " << ref.size() << "-D";
      volume = lifted;
    }
  }
}

TEST(SearchHypervolume, IndependentOfOrderAndDuplicates) {
  Random r(4);
  for (std::size_t d = 2; d <= 4; ++d) {
    Points points = random_points(r, 50, d, false);
    const std::vector<double> ref(d, 1.0);
    const double volume = hypervolume(points, ref);
    Points shuffled(points.rbegin(), points.rend());
    shuffled.insert(shuffled.end(), points.begin(), points.begin() + 10);
    EXPECT_DOUBLE_EQ(hypervolume(shuffled, ref), volume);
  }
}

TEST(SearchHypervolume, MonteCarloAgreesOnLargerFourDimensionalSets) {
  // 30 points on the unit sphere's positive orthant (all non-dominated), r = (1.1)^4: 400,000 uniform samples of
  // the reference box; the standard error of the estimate is ~0.0011 here, the bound is 4 standard errors.
  Random r(99);
  Points points;
  for (int i = 0; i < 30; ++i) {
    std::vector<double> p(4);
    double norm = 0;
    for (double& x : p) {
      x = 0.05 + r.uniform();
      norm += x * x;
    }
    for (double& x : p) x /= std::sqrt(norm);
    points.push_back(p);
  }
  const std::vector<double> ref(4, 1.1);
  std::int64_t hits = 0;
  const std::int64_t samples = 400000;
  for (std::int64_t s = 0; s < samples; ++s) {
    double x[4];
    for (double& v : x) v = 1.1 * r.uniform();
    for (const auto& p : points) {
      if (p[0] <= x[0] && p[1] <= x[1] && p[2] <= x[2] && p[3] <= x[3]) {
        ++hits;
        break;
      }
    }
  }
  const double box = std::pow(1.1, 4);
  const double fraction = static_cast<double>(hits) / samples;
  const double estimate = box * fraction;
  const double standard_error = box * std::sqrt(fraction * (1 - fraction) / samples);
  EXPECT_NEAR(hypervolume(points, ref), estimate, 4 * standard_error);
}

}  // namespace
}  // namespace monet
