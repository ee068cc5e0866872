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

std::shared_ptr<const monet::CostModel> loopnest(const std::string& key, const std::string& value) {
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* mh = r.find(monet::PluginKind::cost_model, "loopnest");
  monet::ParamValues params = monet::default_params(mh->info.params, "bench");
  params.set(key, monet::ParamValue(value));
  return r.create<monet::CostModel>(*mh, params);
}

struct Totals {
  std::int64_t mappings = 0;
  double energy = 0;
  double latency = 0;
};

/// Every operator once, in one thread, nothing cached between operators.
Totals cost_all(const monet::CostModel& model, const monet::Graph& graph, const std::vector<const monet::Operator*>& ops,
                const monet::Core& core) {
  Totals t;
  for (const monet::Operator* op : ops) {
    const auto ranges = op->full_ranges();
    const monet::Cost c = model.evaluate(monet::CostQuery{graph, *op, ranges, core});
    t.mappings += c.mappings_evaluated;
    t.energy += c.energy_pj;
    t.latency += c.exact_cycles;
  }
  return t;
}

void BM_LoopnestResNet18TpuLike(benchmark::State& state) {
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* fh = r.find(monet::PluginKind::frontend, "onnx");
  const auto graph = r.create<monet::WorkloadFrontend>(*fh, monet::default_params(fh->info.params, "bench"))
                         ->load(kSource / "workloads/reference/resnet18_zigzag.onnx");
  std::vector<const monet::Operator*> layers;
  for (const monet::Operator& op : graph->operators()) {
    if (monet::is_mac_kind(op.kind)) layers.push_back(&op);
  }
  const monet::CorePtr core = monet::load_core(kSource / "architectures/cores/tpu_like.toml");
  const auto model = loopnest("compat", "zigzag");
  Totals t;
  for (auto _ : state) t = cost_all(*model, *graph, layers, *core);
  state.counters["mappings"] = static_cast<double>(t.mappings);
  state.counters["mappings_per_s"] = benchmark::Counter(
      static_cast<double>(t.mappings) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["energy_pJ"] = t.energy;
}
BENCHMARK(BM_LoopnestResNet18TpuLike)->Unit(benchmark::kMillisecond)->UseRealTime();

/// `search` is loopnest's search mode.
void BM_LoopnestResNet18TrainingStep(benchmark::State& state, const std::string& search) {
  const monet::GraphPtr graph = monet::test::training_step(kSource);
  const auto ops = monet::test::distinct_operators(*graph);
  const monet::CorePtr core = monet::load_core(kSource / "architectures/cores/tpu_like.toml");
  const auto model = loopnest("search", search);
  Totals t;
  for (auto _ : state) t = cost_all(*model, *graph, ops, *core);
  state.counters["operators"] = static_cast<double>(ops.size());
  state.counters["mappings"] = static_cast<double>(t.mappings);
  state.counters["latency_cycles"] = t.latency;
}
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, exhaustive, std::string("exhaustive"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, pruned, std::string("pruned"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoopnestResNet18TrainingStep, fast, std::string("fast"))->Unit(benchmark::kMillisecond);

}  // namespace
