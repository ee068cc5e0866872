// Data-center scale (issue 14, docs/datacenter.md): the 1T-parameter GPT step on 3,072 A100s of Selene (t 8, p 64,
// d 6, 512 micro-batches per pipeline) evaluated from scratch — read the files, generate one rank's whole-depth
// training step (13,467 operators), cost and schedule it on one chip, simulate the pipeline. Target: <= 2 s.
#include <benchmark/benchmark.h>

#include "monet/experiment/runner.hpp"
#include "monet/search/design_evaluator.hpp"
#include "monet/search/search_run.hpp"
#include "monet/search/space_spec.hpp"
#include "monet/system/parallel_step.hpp"

namespace {

const std::filesystem::path kMegatron1T =
    std::filesystem::path(MONET_SOURCE_DIR) / "experiments/datacenter/megatron_table1/1008b.toml";

void BM_Megatron1TStepOn3072Gpus(benchmark::State& state) {
  for (auto _ : state) {
    const monet::PreparedExperiment p =
        monet::prepare(monet::load_experiment(kMegatron1T, {}, monet::Registry::global()), monet::Registry::global());
    const monet::RunResult r = monet::run(p);
    benchmark::DoNotOptimize(r.best.summary.parallel->step_time_s);
  }
}
BENCHMARK(BM_Megatron1TStepOn3072Gpus)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

// The search at scale: every (tensor, pipeline, data, micro-batch, recompute) layout of GPT-3 175B on 1,024 A100s
// (2,592 grid points, 48 distinct one-rank schedules). Target: <= 1 minute.
namespace {

const std::filesystem::path kSearch175B =
    std::filesystem::path(MONET_SOURCE_DIR) / "experiments/datacenter/gpt3_175b_1024_gpus_search.toml";

void BM_Gpt3LayoutSearchOn1024Gpus(benchmark::State& state) {
  const monet::Registry& registry = monet::Registry::global();
  for (auto _ : state) {
    const monet::ExperimentSource source(kSearch175B, {}, registry);
    const monet::DesignEvaluator evaluator(source, monet::read_space_spec(source), registry);
    const auto search = registry.create<monet::SearchAlgorithm>(*evaluator.base().experiment.search.plugin,
                                                                evaluator.base().experiment.search.params);
    benchmark::DoNotOptimize(monet::run_search(evaluator, *search, 1).archive.size());
  }
}
BENCHMARK(BM_Gpt3LayoutSearchOn1024Gpus)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
