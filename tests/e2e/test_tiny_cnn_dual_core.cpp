// End to end: `monet run experiments/tiny_cnn_dual_core.toml` gives the latency and energy worked out by hand below,
// and `monet run resolved.toml` reproduces it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/csv.hpp"
#include "support/energy_records.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

json run_tiny_cnn(const test::ScratchDir& dir, const std::string& extra = "") {
  const auto out = dir.path() / "quick";
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/tiny_cnn_dual_core.toml").string() + "' --out '" +
                             out.string() + "' --log-level warn " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(test::read_file(out / "results.json"));
}

// The hand computation. tiny_cnn (int8): image [1,4,8,8] -> conv1 (8 out, 3x3, pad 1) -> relu1 -> flatten ->
// fc (10 out). dual_core: core0 = 8x8 MACs (64 PEs, 0.5 pJ/MAC), SRAM read 0.1 pJ/bit and write 0.2 pJ/bit
// through 64-bit ports; core1 = 16 lanes (0.25 pJ/op), SRAM read 0.05 and write 0.1 pJ/bit through 128-bit
// ports; p2p link core0-core1 128 bit/cycle, 0.25 pJ/bit; bus core0-core1-dram 64 bit/cycle, 1 pJ/bit;
// DRAM 10 pJ/bit read and write, 64 bit/cycle port. Roofline cost model, utilization 1.
//
// conv1 on core0: 1·8·4·8·8·3·3 = 18,432 MACs / 64 PEs = 288 cycles. Reads image 256·8 = 2,048 bits and
//   weights 288·8 = 2,304 bits through the read port: 4,352 / 64 = 68 cycles < 288 -> compute bound.
//   Energy 18,432·0.5 = 9,216 MAC + 4,352·0.1 + 4,096·0.2 = 1,254.4 memory -> 10,470.4 pJ.
//   Fetches over the bus from DRAM: image [0,32), weights [32,68). Runs [68,356).
// relu1 on core1: 512 ops / 16 = 32 cycles; 4,096 bits in / 128 = 32, out 32 -> 32 cycles.
//   Energy 512·0.25 = 128 + 4,096·0.05 + 4,096·0.1 = 614.4 -> 742.4 pJ.
//   conv1's output crosses the p2p link [356,388) (4,096 / 128). Runs [388,420).
// flatten: a view, stays on core1 at t = 420.
// fc on core0: 5,120 MACs / 64 = 80 cycles; reads 512·8 + 5,120·8 = 45,056 bits / 64 = 704 cycles -> memory
//   bound, 704 cycles. Energy 5,120·0.5 = 2,560 + 45,056·0.1 + 80·0.2 = 4,521.6 -> 7,081.6 pJ.
//   Input back over p2p [420,452). Its weights are prefetched while conv1 runs (a transfer for a core's next CN
//   may start once its previous CN has started): bus [68,708). Runs [708,1412).
//   The 80-bit output is written to DRAM over the bus [1412,1414).
// Latency: 1,414 cycles. Peak memory of core0, during [68,356): image 2,048 + conv weights 2,304 + conv1's
// output 4,096 + fc weights 40,960 bits = 6,176 bytes.
// Energy: MAC 9,216 + 128 + 2,560 = 11,904 pJ.
//   Transfers: each bit costs link + source memory read + destination memory write:
//   image 2,048·(1 + 10 + 0.2), weights 2,304·(1 + 10 + 0.2), conv1->relu1 4,096·(0.25 + 0.1 + 0.1),
//   flatten->fc 4,096·(0.25 + 0.05 + 0.2), fc weights 40,960·(1 + 10 + 0.2), output 80·(0.1 + 1 + 10).
//   On-chip memory: 1,254.4 + 614.4 + 4,521.6 (cost model) + 409.6 + 460.8 + 819.2 + 1,024 + 8,192 + 8
//   (transfers) = 17,304 pJ. Off-chip: (2,048 + 2,304 + 40,960)·10 + 80·10 = 453,920 pJ.
//   Links: bus (2,048 + 2,304 + 40,960 + 80)·1 = 45,392 + p2p 8,192·0.25 = 2,048 -> 47,440 pJ.
//   Total 11,904 + 17,304 + 453,920 + 47,440 = 530,568 pJ.
// The numbers are exact in binary floating point up to rounding of sums of tenths: tolerance 1e-6 relative.
TEST(TinyCnnDualCore, MatchesTheHandComputation) {
  test::ScratchDir dir;
  const json r = run_tiny_cnn(dir);
  EXPECT_EQ(r["latency_cycles"].get<long>(), 1414);
  EXPECT_NEAR(r["latency_s"].get<double>(), 1414 / 500e6, 1e-15);
  EXPECT_EQ(r["architecture"]["cores"][0]["peak_memory_bytes"].get<long>(), 6176);
  EXPECT_NEAR(r["energy_pj"].get<double>(), 530568.0, 530568.0 * 1e-6);
  const json& e = r["energy_breakdown"];
  EXPECT_NEAR(e["mac_energy_pj"].get<double>(), 11904.0, 1e-6);
  EXPECT_NEAR(e["onchip_memory_energy_pj"].get<double>(), 17304.0, 1e-6);
  EXPECT_NEAR(e["offchip_energy_pj"].get<double>(), 453920.0, 1e-6);
  EXPECT_NEAR(e["link_energy_pj"].get<double>(), 47440.0, 1e-6);
  EXPECT_EQ(r["offchip_read_bytes"].get<long>(), (2048 + 2304 + 40960) / 8);
  EXPECT_EQ(r["workload"]["macs"].get<long>(), 18432 + 5120);
  EXPECT_EQ(r["workload"]["parameters"].get<long>(), 288 + 5120);

  const auto nodes = test::read_csv(dir.path() / "quick/schedule.csv");
  ASSERT_EQ(nodes.size(), 4u);
  const std::vector<std::tuple<std::string, std::string, long, long>> expected{
      {"conv1", "core0", 68, 356}, {"relu1", "core1", 388, 420}, {"flatten", "core1", 420, 420}, {"fc", "core0", 708, 1412}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(nodes[i]["name"], std::get<0>(expected[i]));
    EXPECT_EQ(nodes[i]["core"], std::get<1>(expected[i]));
    EXPECT_EQ(nodes[i].integer("start_cycle"), std::get<2>(expected[i]));
    EXPECT_EQ(nodes[i].integer("end_cycle"), std::get<3>(expected[i]));
  }
  EXPECT_EQ(nodes[3]["bound"], "sram_256KB.r");
  EXPECT_NEAR(nodes[0].number("energy_pj"), 10470.4, 1e-9);
  // conv1's 18,432 MACs at 0.5 pJ; the rest of its energy is SRAM accesses.
  EXPECT_NEAR(nodes[0].number("mac_energy_pj"), 9216.0, 1e-9);
  EXPECT_NEAR(nodes[0].number("onchip_memory_energy_pj"), 1254.4, 1e-9);
}

// Every transfer names its data, flows the way the data does, and its read, link and write energies add up, by
// where they happen, to the breakdown worked out above: e.g. the image fetched for conv1 (2,048 bits) reads
// DRAM (20,480 pJ), crosses the bus (2,048 pJ) and is written into core0's SRAM (409.6 pJ).
TEST(TinyCnnDualCore, TransferRecordsSumToTheSummary) {
  test::ScratchDir dir;
  run_tiny_cnn(dir);
  const auto transfers = test::read_csv(dir.path() / "quick/transfers.csv");
  ASSERT_FALSE(transfers.empty());
  const test::CsvRow& image = transfers.front();
  EXPECT_EQ(image["tensor"], "image");
  EXPECT_EQ(image["from"], "dram");
  EXPECT_EQ(image["to"], "core0");
  EXPECT_EQ(image["cause"], "fetch");
  EXPECT_NEAR(image.number("read_energy_pj"), 20480.0, 1e-9);
  EXPECT_NEAR(image.number("link_energy_pj"), 2048.0, 1e-9);
  EXPECT_NEAR(image.number("write_energy_pj"), 409.6, 1e-9);
  test::expect_records_sum_to_summary(dir.path() / "quick");
}

TEST(TinyCnnDualCore, ResolvedConfigurationReproducesTheResults) {
  test::ScratchDir dir;
  const json first = run_tiny_cnn(dir);
  const auto resolved = dir.path() / "quick/resolved.toml";
  const std::string text = test::read_file(resolved);
  EXPECT_THAT(text, HasSubstr("[provenance]"));
  EXPECT_THAT(text, HasSubstr("utilization = 1.0"));
  EXPECT_THAT(text, HasSubstr("\"search:fixed\" = \"1.0.0\""));
  const auto again = test::monet("run '" + resolved.string() + "' --out '" + (dir.path() / "again").string() + "'");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  json second = json::parse(test::read_file(dir.path() / "again/results.json"));
  EXPECT_EQ(first, second);  // every number
  for (const char* table : {"schedule.csv", "transfers.csv"}) {  // every schedule entry
    EXPECT_EQ(test::read_file(dir.path() / "quick" / table), test::read_file(dir.path() / "again" / table)) << table;
  }
  // The resolved file of the re-run is the same configuration; only the output folder and the source differ.
  auto strip_source = [](const std::string& s) {
    std::string kept;
    std::istringstream lines(s);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("dir = ", 0) != 0 && line.rfind("source = ", 0) != 0) kept += line + "\n";
    }
    return kept;
  };
  EXPECT_EQ(strip_source(text), strip_source(test::read_file(dir.path() / "again/resolved.toml")));
}

TEST(TinyCnnDualCore, OverridesAndThreadCountsBehave) {
  test::ScratchDir dir;
  const json base = run_tiny_cnn(dir, "--threads 1");
  const json same = run_tiny_cnn(dir, "--threads 2");
  EXPECT_EQ(base, same);
  // Half the PEs doing useful work doubles conv1's 288 compute cycles; fc stays memory bound.
  const json half = run_tiny_cnn(dir, "--set cost_model.roofline.utilization=0.5");
  const auto nodes = test::read_csv(dir.path() / "quick/schedule.csv");
  EXPECT_EQ(nodes[0].integer("latency_cycles"), 576);
  EXPECT_EQ(nodes[3].integer("latency_cycles"), 704);
  EXPECT_GT(half["latency_cycles"].get<long>(), base["latency_cycles"].get<long>());
}

TEST(TinyCnnDualCore, ArtifactsAreSelectable) {
  test::ScratchDir dir;
  const std::string exp = "'" + (test::source_dir() / "experiments/tiny_cnn_dual_core.toml").string() + "'";
  auto files = [](const std::filesystem::path& out) {
    std::set<std::string> names;
    for (const auto& f : std::filesystem::directory_iterator(out)) names.insert(f.path().filename().string());
    return names;
  };
  const auto summary = test::monet("run " + exp + " --out '" + (dir.path() / "s").string() + "' --set 'output.artifacts=[\"summary\"]'");
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_EQ(files(dir.path() / "s"), (std::set<std::string>{"results.json", "resolved.toml"}));
  EXPECT_THAT(summary.out, HasSubstr("results.json (+ resolved.toml)\n"));
  EXPECT_THAT(test::read_file(dir.path() / "s/resolved.toml"), HasSubstr("artifacts = [\"summary\"]"));
  const auto csv = test::monet("run " + exp + " --out '" + (dir.path() / "c").string() + "' --set 'output.artifacts=[\"csv\"]'");
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  EXPECT_EQ(files(dir.path() / "c"), (std::set<std::string>{"results.json", "resolved.toml", "schedule.csv", "transfers.csv"}));
  const auto page = test::monet("run " + exp + " --out '" + (dir.path() / "r").string() + "' --set 'output.artifacts=[\"report\"]'");
  ASSERT_EQ(page.exit_code, 0) << page.out;
  EXPECT_EQ(files(dir.path() / "r"), (std::set<std::string>{"results.json", "resolved.toml", "report.html"}));
  EXPECT_THAT(test::read_file(dir.path() / "r/report.html"), HasSubstr("\"latency_cycles\":1414"));
  // The same numbers whatever is written.
  EXPECT_EQ(test::read_file(dir.path() / "s/results.json"), test::read_file(dir.path() / "c/results.json"));
  const auto bad = test::monet("run " + exp + " --out '" + (dir.path() / "b").string() + "' --set 'output.artifacts=[\"sumary\"]'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("--set output.artifacts=[\"sumary\"]:1:9: error: output.artifacts: 'sumary' is not an "
                                 "artefact (did you mean 'summary'?); artefacts: summary, csv, trace, plots, report"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "b"));
}

TEST(TinyCnnDualCore, WritesCsvAndPrintsASummary) {
  test::ScratchDir dir;
  const auto out = dir.path() / "q";
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/tiny_cnn_dual_core.toml").string() + "' --out '" +
                             out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("latency       1,414 cycles = 2.828 us at 500 MHz"));
  EXPECT_THAT(r.out, HasSubstr("(530568 pJ)"));
  const std::string csv = test::read_file(out / "schedule.csv");
  EXPECT_THAT(csv, HasSubstr("cn,name,operator,kind,phase,core,start_cycle,end_cycle,latency_cycles,macs,energy_pj,"));
  EXPECT_THAT(csv, HasSubstr("3,fc,fc,gemm,forward,core0,708,1412,704,5120,"));
  EXPECT_THAT(r.out, HasSubstr("(+ resolved.toml, schedule.csv, transfers.csv, trace.json.gz, schedule.svg, memory.svg, report.html)"));
}

}  // namespace
}  // namespace monet
