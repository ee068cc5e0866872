// Cost of the search machinery itself (no accelerator model): what a generation of nsga2 adds to the
// evaluations it asks for, and the hypervolume the kernel computes for progress and convergence.
#include <benchmark/benchmark.h>

#include "support/search_problems.hpp"

namespace {

using namespace monet::test;

/// nsga2 on grid-ZDT1 (30 genes of 101 values), N = 100, G = 250: 25,100 trivial evaluations, so the time is
/// the algorithm's (sorting, crowding, variation, duplicate elimination).
void BM_Nsga2GridZdt1(benchmark::State& state) {
  std::uint64_t seed = 1;
  for (auto _ : state) {
    ProblemContext ctx(grid_zdt(Zdt::one, 30, 100), seed++);
    benchmark::DoNotOptimize(run_search("nsga2", {{"population", std::int64_t{100}}, {"generations", std::int64_t{250}}}, ctx));
  }
  state.SetItemsProcessed(state.iterations() * 100 * 251);
}
BENCHMARK(BM_Nsga2GridZdt1)->Unit(benchmark::kMillisecond);

/// Exact hypervolume of n mutually non-dominated points on the unit sphere's positive orthant, in d objectives.
void BM_Hypervolume(benchmark::State& state) {
  const auto d = static_cast<std::size_t>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  monet::Random r(3);
  std::vector<std::vector<double>> points;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> p(d);
    double norm = 0;
    for (double& x : p) {
      x = 0.01 + r.uniform();
      norm += x * x;
    }
    for (double& x : p) x /= std::sqrt(norm);
    points.push_back(p);
  }
  const std::vector<double> ref(d, 1.1);
  for (auto _ : state) benchmark::DoNotOptimize(monet::hypervolume(points, ref));
}
BENCHMARK(BM_Hypervolume)->Args({2, 1000})->Args({3, 1000})->Args({4, 100})->Args({5, 50})->Unit(benchmark::kMillisecond);

}  // namespace
