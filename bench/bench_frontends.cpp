// Workload import speed. Target (frontend issue): loading gpt2_small.onnx and building its IR < 0.5 s.
#include <benchmark/benchmark.h>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"

namespace {

void load_model(benchmark::State& state, const char* file) {
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* h = r.find(monet::PluginKind::frontend, "onnx");
  const auto frontend = r.create<monet::WorkloadFrontend>(*h, monet::default_params(h->info.params, "bench"));
  const auto path = std::filesystem::path(MONET_SOURCE_DIR) / "workloads/onnx" / file;
  std::size_t operators = 0;
  for (auto _ : state) operators = frontend->load(path)->operators().size();
  state.counters["operators"] = static_cast<double>(operators);
}

void BM_LoadGpt2Small(benchmark::State& state) { load_model(state, "gpt2_small.onnx"); }
BENCHMARK(BM_LoadGpt2Small)->Unit(benchmark::kMillisecond);

void BM_LoadResNet18(benchmark::State& state) { load_model(state, "resnet18.onnx"); }
BENCHMARK(BM_LoadResNet18)->Unit(benchmark::kMillisecond);

/// Target (ONNX breadth issue): `monet inspect` of Swin-T (7,204 nodes) under a second — its import.
void BM_InspectSwinT(benchmark::State& state) { load_model(state, "swin_t.onnx"); }
BENCHMARK(BM_InspectSwinT)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

/// Target (training-graph issue): the training graph of gpt2_small (≈ 1,000 operators with backward and Adam)
/// in < 1 s.
void BM_TrainingGraphGpt2Small(benchmark::State& state) {
  const monet::Registry& r = monet::Registry::global();
  const monet::PluginHandle* f = r.find(monet::PluginKind::frontend, "onnx");
  const auto forward = r.create<monet::WorkloadFrontend>(*f, monet::default_params(f->info.params, "bench"))
                           ->load(std::filesystem::path(MONET_SOURCE_DIR) / "workloads/onnx/gpt2_small.onnx");
  const monet::PluginHandle* b = r.find(monet::PluginKind::backward, "autodiff");
  const monet::PluginHandle* o = r.find(monet::PluginKind::optimizer, "adam");
  const auto backward = r.create<monet::BackwardGenerator>(*b, monet::default_params(b->info.params, "bench"));
  const auto adam = r.create<monet::OptimizerModel>(*o, monet::default_params(o->info.params, "bench"));
  std::size_t operators = 0;
  for (auto _ : state) {
    const monet::TrainingSettings settings;
    operators = adam->apply(*backward->generate(*forward, settings), settings)->operators().size();
  }
  state.counters["operators"] = static_cast<double>(operators);
}
BENCHMARK(BM_TrainingGraphGpt2Small)->Unit(benchmark::kMillisecond);

}  // namespace
