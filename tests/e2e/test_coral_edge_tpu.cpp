// End to end: the Coral Edge TPU (architectures/coral_edge_tpu.toml) running one NAS-Bench-201 cell's int8 inference
// at batch 1 (experiments/cosearch/nb201_coral_edge_tpu.toml): the one core does all the work and its 64 x 64
// array is filled by the widest layers, int8 operands move 1 byte per element over the host link, the energy
// per MAC is Coral's 2 TOPS/W, and another cell through --set workload.set.arch has the MACs of the README's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;

struct CoralRun {
  json results;
  std::string schedule_csv;
};

CoralRun run_experiment(const test::ScratchDir& dir, const std::string& extra = "") {
  const auto out = dir.path() / "coral";
  const auto r = test::monet("run " + test::q(test::source_dir() / "experiments/cosearch/nb201_coral_edge_tpu.toml") +
                             " --out " + test::q(out) + " --log-level warn " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return {json::parse(test::read_file(out / "results.json")), test::read_file(out / "schedule.csv")};
}

// schedule.csv's CN rows as (core, macs, latency_cycles, energy_pj), by the header's column names.
struct CnRow {
  std::string core;
  double macs = 0, cycles = 0, energy_pj = 0;
};
std::vector<CnRow> cn_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t core = col("core"), macs = col("macs"), cycles = col("latency_cycles"), energy = col("energy_pj");
  std::vector<CnRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    for (std::istringstream l(line); std::getline(l, cell, ',');) f.push_back(cell);  // mapping (quoted) is last
    rows.push_back({f.at(core), std::stod(f.at(macs)), std::stod(f.at(cycles)), std::stod(f.at(energy))});
  }
  return rows;
}

constexpr double kFrequencyHz = 500e6;
constexpr double kPeakMacsPerCycle = 64 * 64;
constexpr std::int64_t kBestCellMacs = 153272960;   // cell 6111: 7,783,040 + 15 (4 · 2,359,296 + 262,144)
constexpr std::int64_t kParameters = 1073466;       // its trainable parameters
constexpr std::int64_t kBuffers = 6144;             // BatchNorm running statistics (monet inspect: params_buffers)
constexpr std::int64_t kInputElements = 3 * 32 * 32;

TEST(CoralEdgeTpu, BestNasBench201CellRunsInt8OnTheOneCore) {
  test::ScratchDir dir;
  const CoralRun run = run_experiment(dir);
  const json& j = run.results;
  ASSERT_TRUE(j.at("feasible").get<bool>());
  EXPECT_EQ(j.at("workload").at("macs").get<std::int64_t>(), kBestCellMacs);
  const json& core = j.at("architecture").at("cores").at(0);
  EXPECT_EQ(j.at("architecture").at("cores").size(), 1u);
  EXPECT_EQ(core.at("pe_count").get<int>(), 4096);

  // Every computation node runs on the Edge TPU, none exceeds the array's 4,096 MACs per cycle, and the widest
  // layers (the 64-channel stage: K = C = 64) fill most of it — measured 3,236 MACs/cycle (79 %), the rest is
  // filling and draining the array for an 8 x 8 feature map.
  const auto rows = cn_rows(run.schedule_csv);
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(j.at("computation_node_count").get<int>()));
  double best_rate = 0, busy = 0, cn_energy = 0, macs = 0;
  for (const CnRow& r : rows) {
    EXPECT_EQ(r.core, "edge_tpu");
    if (r.cycles > 0) best_rate = std::max(best_rate, r.macs / r.cycles);
    EXPECT_LE(r.macs, r.cycles * kPeakMacsPerCycle);
    busy += r.cycles;
    cn_energy += r.energy_pj;
    macs += r.macs;
  }
  EXPECT_EQ(macs, static_cast<double>(kBestCellMacs));
  EXPECT_GT(best_rate, 0.75 * kPeakMacsPerCycle);

  // int8: the workload's parameters are 1 byte each; the host link carries every weight and buffer once and the
  // 3 x 32 x 32 image in, the 10 logits out — 1 byte per element, nothing spilled.
  EXPECT_EQ(j.at("workload").at("parameter_bytes").get<std::int64_t>(), kParameters);
  EXPECT_EQ(j.at("offchip_read_bytes").get<std::int64_t>(), kParameters + kBuffers + kInputElements);
  EXPECT_EQ(j.at("offchip_write_bytes").get<std::int64_t>(), 10);
  EXPECT_EQ(j.at("spilled_bytes").get<std::int64_t>(), 0);

  // Latency: at least the parameters over the 8-bit/cycle link and at least the computation; measured 2.496 ms
  // (weights 2.17 ms, computation 0.38 ms, partly overlapped).
  const double latency = j.at("latency_cycles").get<double>();
  EXPECT_GT(j.at("latency_s").get<double>(), 0);
  EXPECT_GE(latency, static_cast<double>(kParameters + kBuffers + kInputElements));  // 8 bits per cycle
  EXPECT_GE(latency, busy);
  EXPECT_DOUBLE_EQ(j.at("latency_s").get<double>(), latency / kFrequencyHz);

  // Energy: positive, and its average power below Coral's 2 W (the chip's rating at 4 TOPS; measured 0.144 W: the
  // array waits for the link). The computation's energy per MAC against 2 TOPS/W = 1 pJ per MAC at peak: measured
  // 1.076 pJ (horowitz at 28 nm, MACs and on-chip memories, the normalisations and additions included).
  const double energy_pj = j.at("energy_pj").get<double>();
  EXPECT_GT(energy_pj, 0);
  EXPECT_LT(energy_pj * 1e-12, 2.0 * j.at("latency_s").get<double>());
  const double pj_per_mac = cn_energy / static_cast<double>(kBestCellMacs);
  EXPECT_NEAR(pj_per_mac, 1.0, 0.15) << "2 TOPS/W is 1 pJ per MAC";
  EXPECT_LT(cn_energy * 1e-12, 2.0 * busy / kFrequencyHz) << "the array draws less than 2 W while it computes";
}

TEST(CoralEdgeTpu, AnotherCellThroughWorkloadSetHasItsOwnMacs) {
  // Three nor_conv_3x3 edges, no conv 1x1: 7,783,040 + 15 · 3 · 2,359,296 MACs.
  test::ScratchDir dir;
  const CoralRun run = run_experiment(
      dir, "--set 'workload.set.arch=|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|"
           "skip_connect~2|'");
  const json& j = run.results;
  EXPECT_EQ(j.at("workload").at("macs").get<std::int64_t>(), 7783040 + 15 * 3 * 2359296);
  EXPECT_NE(j.at("workload").at("macs").get<std::int64_t>(), kBestCellMacs);
  EXPECT_GT(j.at("latency_cycles").get<double>(), 0);
  EXPECT_GT(j.at("energy_pj").get<double>(), 0);
}

TEST(CoralEdgeTpu, AWrongCellIsOneLocatedErrorAndWritesNothing) {
  test::ScratchDir dir;
  const auto out = dir.path() / "bad";
  const auto r = test::monet("run " + test::q(test::source_dir() / "experiments/cosearch/nb201_coral_edge_tpu.toml") +
                             " --out " + test::q(out) + " --log-level warn --set 'workload.set.arch=|nor_conv_3x3~0|'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("workload.arch"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace monet
