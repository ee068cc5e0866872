// What report.html costs: building the page of a 10,000-point search (4 genes of 10 values, 4 objectives, 100
// batches, a tenth infeasible) and its size. The page is kept at $TMPDIR/monet_bench_search_report_10000.html for
// the open-time measurement (tests/browser/report_browser_test.py --open-time FILE). Numbers in
// docs/experiments.md#reporthtml.
#include <benchmark/benchmark.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "monet/report/html_report.hpp"
#include "monet/search/random.hpp"

namespace {

namespace fs = std::filesystem;

struct Sweep {
  monet::Experiment experiment;
  monet::DesignSpace space;
  monet::SearchResult result;
};

/// Objectives shaped like a hardware sweep's: latency falls and area grows with the array, energy has a valley.
Sweep sweep() {
  Sweep s;
  s.experiment = monet::load_experiment(fs::path(MONET_SOURCE_DIR) / "experiments/tiny_cnn_dual_core.toml", {}, monet::Registry::global());
  for (const char* name : {"rows", "columns", "memory", "register_file"}) {
    monet::Gene g;
    g.key = std::string("architecture.") + name;
    g.name = name;
    for (int v = 0; v < 10; ++v) g.labels.push_back(std::to_string(1 << v));
    g.ordinal = true;
    s.space.genes.push_back(g);
  }
  s.space.objectives = {{"latency_cycles", "cycles"}, {"energy_pj", "pJ"}, {"area_mm2", "mm2"}, {"peak_onchip_bytes", "B"}};
  monet::Random r(11);
  std::vector<std::size_t> order(10000);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[static_cast<std::size_t>(r.below(static_cast<std::int64_t>(i + 1)))]);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    monet::Evaluation e;
    e.point.genes = {static_cast<int>(i % 10), static_cast<int>(i / 10 % 10), static_cast<int>(i / 100 % 10), static_cast<int>(i / 1000)};
    const double pes = std::pow(2.0, e.point.genes[0] + e.point.genes[1]);
    const double mem = std::pow(2.0, e.point.genes[2]) * 65536 + std::pow(2.0, e.point.genes[3]) * 4096;
    const double noise = 1 + 0.1 * r.uniform();
    e.objectives = {std::round(4e8 / pes * noise + 1e5 * std::log2(mem)), 3e9 * (1 + std::pow(std::log2(pes) - 8, 2) / 20) * noise,
                    0.01 * pes + mem * 1e-6, mem * (0.5 + 0.5 * r.uniform())};
    if (r.below(10) == 0) {
      e.violation = 0.5 * r.uniform();
      e.reason = "pe_0 peak exceeds its capacity by " + std::to_string(r.below(100000)) + " bits";
    }
    s.result.archive.push_back(e);
    s.result.first_batch.push_back(k / 100);
  }
  for (std::size_t b = 0; b < 100; ++b) {
    monet::SearchBatch batch;
    for (std::size_t k = b * 100; k < (b + 1) * 100; ++k) batch.evaluations.push_back(s.result.archive[k]);
    s.result.batches.push_back(batch);
  }
  return s;
}

void BM_SearchReport10000Points(benchmark::State& state) {
  static const Sweep s = sweep();
  std::string page;
  for (auto _ : state) {
    page = monet::search_report_html(s.experiment, s.space, s.result, s.result.archive.front().point, nullptr, nullptr);
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["page_bytes"] = static_cast<double>(page.size());
  std::ofstream(fs::temp_directory_path() / "monet_bench_search_report_10000.html", std::ios::binary) << page;
}
BENCHMARK(BM_SearchReport10000Points)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
