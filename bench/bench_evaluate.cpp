// Benchmarks of the evaluation pipeline. The inner loop of every search is Evaluator::evaluate with a warm
// cost cache; a full run adds reading files, instantiating plugins and cold cost-model calls.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>

#include "monet/experiment/runner.hpp"
#include "monet/report/report.hpp"

namespace {

const std::filesystem::path kQuickstart = std::filesystem::path(MONET_SOURCE_DIR) / "experiments/tiny_cnn_dual_core.toml";

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
  const std::vector<int> point(p.graph->operators().size(), -1);
  (void)p.evaluator->evaluate(point);  // warm the cache
  for (auto _ : state) benchmark::DoNotOptimize(p.evaluator->evaluate(point).summary.latency_cycles);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuickstartEvaluateWarm)->Unit(benchmark::kMicrosecond);

}  // namespace


// Stream's ResNet-18 reference with two fused stacks on the quad core: 3,867 computation nodes on six cores.
// Targets (docs/scheduling.md): full run ≤ 1 s, a warm schedule ≤ 50 ms, a changed allocation ≤ 20 ms.
namespace {

const std::filesystem::path kStreamFused =
    std::filesystem::path(MONET_SOURCE_DIR) / "experiments/reference/stream_resnet18_fused.toml";

monet::PreparedExperiment prepare_stream_fused() {
  return monet::prepare(monet::load_experiment(kStreamFused, {}, monet::Registry::global()), monet::Registry::global());
}

void BM_StreamFusedResNet18FullRun(benchmark::State& state) {
  for (auto _ : state) {
    monet::PreparedExperiment p = prepare_stream_fused();
    benchmark::DoNotOptimize(monet::run(p).best.summary.latency_cycles);
  }
}
BENCHMARK(BM_StreamFusedResNet18FullRun)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_StreamFusedResNet18ScheduleWarm(benchmark::State& state) {
  const monet::PreparedExperiment p = prepare_stream_fused();
  const std::vector<int>& point = p.configured_allocation;
  (void)p.evaluator->evaluate(point);
  for (auto _ : state) benchmark::DoNotOptimize(p.evaluator->evaluate(point).summary.latency_cycles);
  state.counters["computation_nodes"] = static_cast<double>(p.evaluator->cns().nodes.size());
}
BENCHMARK(BM_StreamFusedResNet18ScheduleWarm)->Unit(benchmark::kMillisecond);

/// A search step: one operator moves to another allowed core (the max-pool between the two pooling cores),
/// alternating, so both variants' costs are cached after the first two evaluations. As in a search, without the
/// per-step memory composition that only plots need (Arg 1: with it, as a full run records it).
void BM_StreamFusedResNet18Reallocate(benchmark::State& state) {
  const monet::PreparedExperiment p = prepare_stream_fused();
  const std::vector<int> a = p.configured_allocation;
  std::vector<int> b = a;
  for (const monet::Operator& op : p.graph->operators()) {
    if (op.name == "/maxpool/MaxPool") b[static_cast<std::size_t>(op.id)] = 5;
  }
  (void)p.evaluator->evaluate(a);
  (void)p.evaluator->evaluate(b);
  bool flip = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.evaluator->evaluate(flip ? a : b, {}, state.range(0) != 0).summary.latency_cycles);
    flip = !flip;
  }
}
BENCHMARK(BM_StreamFusedResNet18Reallocate)->Unit(benchmark::kMillisecond)->Arg(0)->Arg(1);

}  // namespace

// A single cold run (issue 10): ResNet-18-CIFAR's training step on tpu_like, no cost cache, at 1 and 2 threads.
// The distinct cost queries are known before scheduling and are costed in parallel (Evaluator::prewarm); the
// rest of a run (reading the model, building the training graph and tiles, scheduling) is serial, and the output
// files are made in parallel. Arg = threads. docs/search.md quotes the speed-ups.
namespace {

const std::filesystem::path kTpuLikeTraining =
    std::filesystem::path(MONET_SOURCE_DIR) / "experiments/resnet18_training_tpu_like.toml";

monet::PreparedExperiment prepare_tpu_like_training() {
  return monet::prepare(monet::load_experiment(kTpuLikeTraining, {}, monet::Registry::global()), monet::Registry::global());
}

/// The costing alone: every distinct cost query of the run, cold.
void BM_ColdCostingResNet18TrainingTpuLike(benchmark::State& state) {
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    const monet::PreparedExperiment p = prepare_tpu_like_training();  // a fresh cost cache
    state.ResumeTiming();
    p.evaluator->prewarm();
  }
}
BENCHMARK(BM_ColdCostingResNet18TrainingTpuLike)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

/// Everything `monet run` does in the process except writing the folder: prepare, cost, schedule, make the files.
void BM_ColdRunResNet18TrainingTpuLike(benchmark::State& state) {
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const monet::PreparedExperiment p = prepare_tpu_like_training();
    const monet::RunResult r = monet::run(p);
    benchmark::DoNotOptimize(monet::output_files(p, r, "/tmp/monet_bench_cold_run").size());
  }
}
BENCHMARK(BM_ColdRunResNet18TrainingTpuLike)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

}  // namespace
