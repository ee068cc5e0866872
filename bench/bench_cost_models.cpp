// Cost-model speed. Target (cost-model issue): ResNet-18's 21 conv/gemm layers on tpu_like with the default
// loopnest search (ZigZag's settings) in <= 0.5 s single-threaded with a cold cache; ZigZag 3.8.5 takes 86 s of
// CPU for the same 13,860 mappings here (163 mappings/s). Reports mappings evaluated per second.
// The training step (issue 10): every distinct operator of ResNet-18-CIFAR's training step on tpu_like, cold, with
// each loopnest search mode; docs/cost-models.md quotes the speed-ups.
#include <benchmark/benchmark.h>

#include "monet/arch/core.hpp"
#include "monet/ir/types.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/training_operators.hpp"

namespace {

const std::filesystem::path kSource = MONET_SOURCE_DIR;

void BM_LoopnestResNet18TpuLike(benchmark::State& state) {
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* fh = r.find(monet::PluginKind::frontend, "onnx");
  const auto graph = r.create<monet::WorkloadFrontend>(*fh, monet::default_params(fh->info.params, "bench"))
                         ->load(kSource / "workloads/reference/resnet18_zigzag.onnx");
  const monet::CorePtr core = monet::load_core(kSource / "architectures/cores/tpu_like.toml");
  const monet::PluginHandle* mh = r.find(monet::PluginKind::cost_model, "loopnest");
  monet::ParamValues params = monet::default_params(mh->info.params, "bench");
  params.set("compat", monet::ParamValue(std::string("zigzag")));
  const auto model = r.create<monet::CostModel>(*mh, params);
  std::int64_t mappings = 0;
  double energy = 0;
  for (auto _ : state) {
    mappings = 0;
    energy = 0;
    for (const monet::Operator& op : graph->operators()) {  // single thread, nothing cached between layers
      if (!monet::is_mac_kind(op.kind)) continue;
      const auto ranges = op.full_ranges();
      const monet::Cost c = model->evaluate(monet::CostQuery{*graph, op, ranges, *core});
      mappings += c.mappings_evaluated;
      energy += c.energy_pj;
    }
  }
  state.counters["mappings"] = static_cast<double>(mappings);
  state.counters["mappings_per_s"] =
      benchmark::Counter(static_cast<double>(mappings) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["energy_pJ"] = energy;
}
BENCHMARK(BM_LoopnestResNet18TpuLike)->Unit(benchmark::kMillisecond)->UseRealTime();

/// One thread, nothing cached between operators; `search` is loopnest's search mode.
void BM_LoopnestResNet18TrainingStep(benchmark::State& state, const std::string& search) {
  const monet::GraphPtr graph = monet::test::training_step(kSource);
  const auto ops = monet::test::distinct_operators(*graph);
  const monet::CorePtr core = monet::load_core(kSource / "architectures/cores/tpu_like.toml");
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* mh = r.find(monet::PluginKind::cost_model, "loopnest");
  monet::ParamValues params = monet::default_params(mh->info.params, "bench");
  params.set("search", monet::ParamValue(search));
  const auto model = r.create<monet::CostModel>(*mh, params);
  std::int64_t mappings = 0;
  double latency = 0;
  for (auto _ : state) {
    mappings = 0;
    latency = 0;
    for (const monet::Operator* op : ops) {
      const auto ranges = op->full_ranges();
      const monet::Cost c = model->evaluate(monet::CostQuery{*graph, *op, ranges, *core});
      mappings += c.mappings_evaluated;
      latency += c.exact_cycles;
    }
  }
  state.counters["operators"] = static_cast<double>(ops.size());
  state.counters["mappings"] = static_cast<double>(mappings);
  state.counters["latency_cycles"] = latency;
}
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, exhaustive, std::string("exhaustive"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, pruned, std::string("pruned"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, fast, std::string("fast"))->Unit(benchmark::kMillisecond);

}  // namespace
