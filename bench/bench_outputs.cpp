// What writing a run's output folder costs, per [output] artifacts, on a large run: MobileNetV2 training on the
// quad core (bench/experiments/mobilenet_v2_training_quad_core.toml, 29,085 CNs, 103,821 transfers). Counters:
// the bytes of each file and of the folder. Numbers in docs/experiments.md.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <map>

#include "monet/report/report.hpp"

namespace {

namespace fs = std::filesystem;

struct LargeRun {
  monet::PreparedExperiment prepared;
  monet::RunResult result;
};

LargeRun& large_run() {
  static LargeRun run = [] {
    const fs::path file = fs::path(MONET_SOURCE_DIR) / "bench/experiments/mobilenet_v2_training_quad_core.toml";
    LargeRun r{monet::prepare(monet::load_experiment(file, {}, monet::Registry::global()), monet::Registry::global()), {}};
    r.result = monet::run(r.prepared);
    return r;
  }();
  return run;
}

/// Arg: 0 summary only, 1 + csv, 2 + trace, 3 + plots, 4 + report (everything, the default).
void BM_WriteOutputsMobileNetV2Training(benchmark::State& state) {
  LargeRun& run = large_run();
  monet::PreparedExperiment& p = run.prepared;
  const auto level = state.range(0);
  p.experiment.artifacts = monet::OutputArtifacts{level >= 1, level >= 2, level >= 3, level >= 4};
  const fs::path dir = fs::temp_directory_path() / ("monet_bench_outputs_" + std::to_string(getpid()));
  std::map<std::string, std::size_t> sizes;
  for (auto _ : state) {
    const auto files = monet::output_files(p, run.result, dir);
    monet::write_folder_atomically(dir, true, files);
    for (const auto& [name, content] : files) sizes[name] = content.size();
  }
  std::size_t total = 0;
  for (const auto& [name, bytes] : sizes) {
    state.counters[name] = static_cast<double>(bytes);
    total += bytes;
  }
  state.counters["folder_bytes"] = static_cast<double>(total);
  std::error_code ec;
  fs::remove_all(dir, ec);
}
BENCHMARK(BM_WriteOutputsMobileNetV2Training)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->Arg(4)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
