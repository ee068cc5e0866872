// The measurements behind the bounds of test_search_quality.cpp and the numbers of docs/search.md: hypervolume
// of nsga2, random and anneal over many seeds. Disabled (they print, they do not check); run them with
//   SEEDS=10 build/bin/monet_unit_tests --gtest_also_run_disabled_tests --gtest_filter='SearchMeasure.*'
// Environment variables change the settings: N (population), G (generations), K (grid steps), SEEDS, ...
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "support/search_problems.hpp"

namespace monet::test {
namespace {

int setting(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

void print_stats(const std::string& label, const std::vector<double>& v) {
  double mean = 0, low = v[0], high = v[0];
  for (double x : v) {
    mean += x;
    low = std::min(low, x);
    high = std::max(high, x);
  }
  mean /= static_cast<double>(v.size());
  std::printf("  %-28s mean %.6f  min %.6f  max %.6f  (%zu seeds)\n", label.c_str(), mean, low, high, v.size());
}

Overrides nsga2(int population, int generations) {
  return {{"population", std::int64_t{population}}, {"generations", std::int64_t{generations}}};
}
Overrides random_budget(int evaluations) { return {{"budget", std::int64_t{evaluations}}}; }

/// nsga2 and random search (same budget) on one problem: HV of the returned fronts for seeds 1..SEEDS.
void compare(const std::string& title, const std::function<TestProblem()>& problem, const std::vector<double>& ref,
             int population, int generations) {
  std::vector<double> ga, sampled;
  for (int seed = 1; seed <= setting("SEEDS", 10); ++seed) {
    ProblemContext a(problem(), static_cast<std::uint64_t>(seed)), b(problem(), static_cast<std::uint64_t>(seed));
    ga.push_back(front_hypervolume(run_search("nsga2", nsga2(population, generations), a), ref));
    sampled.push_back(front_hypervolume(run_search("random", random_budget(population * (generations + 1)), b), ref));
  }
  std::printf("%s, N %d, G %d\n", title.c_str(), population, generations);
  print_stats("nsga2", ga);
  print_stats("random, same budget", sampled);
}

TEST(SearchMeasure, DISABLED_GridZdt) {
  const int n = setting("NV", 30), k = setting("K", 100);
  for (Zdt z : {Zdt::one, Zdt::two, Zdt::three}) {
    for (const std::vector<double>& ref : {std::vector<double>{1.1, 1.1}, std::vector<double>{11, 11}}) {
      const std::string title = "grid-ZDT" + std::to_string(static_cast<int>(z) + 1) + " n " + std::to_string(n) +
                                " K " + std::to_string(k) + " HV(" + std::to_string(ref[0]) + "), true front " +
                                std::to_string(hypervolume(grid_zdt_front(z, n, k), ref));
      compare(title, [&] { return grid_zdt(z, n, k); }, ref, setting("N", 100), setting("G", 250));
    }
  }
}

TEST(SearchMeasure, DISABLED_OneMinMax) {
  const int n = setting("NV", 20);
  compare("OneMinMax n " + std::to_string(n) + ", true front " + std::to_string((n + 1) * (n + 2) / 2),
          [&] { return one_min_max(n); }, {1, 1}, setting("N", 32), setting("G", 100));
}

TEST(SearchMeasure, DISABLED_Zdt5) {
  compare("ZDT5 HV(32, 11), true front 300.7275", zdt5, {32, 11}, setting("N", 100), setting("G", 250));
}

TEST(SearchMeasure, DISABLED_Constr) {
  const int k = setting("K", 200);
  ProblemContext all(grid_constr(k), 0);
  const double truth = front_hypervolume(run_search("grid", {}, all), {1.1, 10});
  compare("CONSTR K " + std::to_string(k) + " HV(1.1, 10), true front " + std::to_string(truth),
          [&] { return grid_constr(k); }, {1.1, 10}, setting("N", 40), setting("G", 50));
}

TEST(SearchMeasure, DISABLED_Allocation) {
  // How often the whole front is found (HV equal to the grid's) by nsga2 and by random search, same budget.
  const int ops = setting("OPS", 6), population = setting("N", 32), generations = setting("G", 40);
  const int seeds = setting("SEEDS", 20);
  ProblemContext all(allocation(ops, 4), 0);
  const double truth = front_hypervolume(run_search("grid", {}, all), {1000, 1000});
  int ga = 0, sampled = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    ProblemContext a(allocation(ops, 4), static_cast<std::uint64_t>(seed)), b(allocation(ops, 4), static_cast<std::uint64_t>(seed));
    ga += front_hypervolume(run_search("nsga2", nsga2(population, generations), a), {1000, 1000}) == truth;
    sampled += front_hypervolume(run_search("random", random_budget(population * (generations + 1)), b), {1000, 1000}) == truth;
  }
  std::printf("allocation %d ops x 4 cores, N %d, G %d: whole front found by nsga2 %d/%d, by random %d/%d\n", ops,
              population, generations, ga, seeds, sampled, seeds);
}

TEST(SearchMeasure, DISABLED_Anneal) {
  // How often anneal's best point is the exact optimum of its scalarisation (equal weights, configured scales).
  const int ops = setting("OPS", 8), chains = setting("C", 16), iterations = setting("I", 200);
  const int seeds = setting("SEEDS", 20);
  const TestProblem problem = allocation(ops, 4);
  const DefaultScalarisation scalar(problem);
  const double optimum = exhaustive_minimum(problem, scalar);
  int hits = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    ProblemContext ctx(problem, static_cast<std::uint64_t>(seed));
    const auto best = run_search("anneal", {{"chains", std::int64_t{chains}}, {"iterations", std::int64_t{iterations}}}, ctx);
    hits += scalar(best[0]) == optimum;
  }
  std::printf("anneal on allocation %d ops x 4 cores, %d chains x %d steps: optimum found %d/%d\n", ops, chains,
              iterations, hits, seeds);
}

}  // namespace
}  // namespace monet::test
