// Benchmarks of the evaluation pipeline. The inner loop of every search is Evaluator::evaluate with a warm
// cost cache; a full run adds reading files, instantiating plugins and cold cost-model calls.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include "monet/experiment/runner.hpp"

namespace {

const std::filesystem::path kQuickstart = std::filesystem::path(MONET_SOURCE_DIR) / "experiments/quickstart.toml";

/// Everything `monet run` does except writing the output folder.
void BM_QuickstartFullRun(benchmark::State& state) {
  for (auto _ : state) {
    monet::PreparedExperiment p = monet::prepare(monet::load_experiment(kQuickstart, {}, monet::Registry::global()),
                                                 monet::Registry::global());
    benchmark::DoNotOptimize(monet::run(p).best.summary.latency_cycles);
  }
}
BENCHMARK(BM_QuickstartFullRun)->Unit(benchmark::kMicrosecond);

/// One design-point evaluation with a warm cost cache: the unit of work of a search.
void BM_QuickstartEvaluateWarm(benchmark::State& state) {
  const monet::PreparedExperiment p =
      monet::prepare(monet::load_experiment(kQuickstart, {}, monet::Registry::global()), monet::Registry::global());
  monet::DesignPoint point;
  point.allocation.assign(p.graph->operators().size(), -1);
  (void)p.evaluator->evaluate(point);  // warm the cache
  for (auto _ : state) benchmark::DoNotOptimize(p.evaluator->evaluate(point).summary.latency_cycles);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuickstartEvaluateWarm)->Unit(benchmark::kMicrosecond);

}  // namespace

