// The network-hardware co-search of issue #36: NSGA-II over NAS-Bench-201's six cell edges and the edge-TPU's
// hardware genes (experiments/cosearch/nb201_edge_tpu_joint.toml, 40 x 25 = 1,000 evaluations, accuracy from the
// benchmark's table). The target: under 60 s on this 2-core machine; every point builds its own network and CN graph.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include "monet/experiment/experiment.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/search/design_evaluator.hpp"
#include "monet/search/search_run.hpp"

namespace {

const std::filesystem::path kJoint = std::filesystem::path(MONET_SOURCE_DIR) / "experiments/cosearch/nb201_edge_tpu_joint.toml";

/// Reading the experiment and its space, then the whole search (each iteration from cold caches).
void BM_CoSearchNasBench201EdgeTpu1000(benchmark::State& state) {
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(state.range(0)));
  const monet::Registry& registry = monet::Registry::global();
  std::size_t evaluated = 0;
  for (auto _ : state) {
    const monet::ExperimentSource source(kJoint, {}, registry);
    const monet::DesignEvaluator evaluator(source, monet::read_space_spec(source), registry);
    const monet::Experiment e = source.build();
    const auto search = monet::Registry::create<monet::SearchAlgorithm>(*e.search.plugin, e.search.params);
    const monet::SearchResult r = monet::run_search(evaluator, *search, e.seed);
    evaluated = r.archive.size();
    benchmark::DoNotOptimize(r.archive.data());
  }
  state.counters["evaluations"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_CoSearchNasBench201EdgeTpu1000)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
