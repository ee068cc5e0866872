// [workload.set] from the command line: a generated GPT's keys changed by the experiment and by --set, recorded in
// resolved.toml (which runs to the same results), and a grid gene over one of them (issue #36).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;

/// gpt_small_test (2 layers) in inference on the dual-core example accelerator.
std::string experiment(const std::string& extra) {
  const fs::path src = test::source_dir();
  return "[experiment]\nname = \"wlset\"\n\n[workload]\nfile = \"" + (src / "workloads/gpt/gpt_small_test.toml").string() +
         "\"\n" + extra + "\n[architecture]\nfile = \"" + (src / "architectures/dual_core.toml").string() + "\"\n";
}

json run(const test::ScratchDir& dir, const fs::path& exp, const std::string& out, const std::string& extra = "") {
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / out) + " --log-level warn" + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(test::read_file(dir.path() / out / "results.json"));
}

TEST(WorkloadSet, ExperimentAndCommandLineChangeTheGeneratorAndResolvedTomlReproducesIt) {
  test::ScratchDir dir;
  const json two = run(dir, dir.write("plain.toml", experiment("")), "plain");
  const json three = run(dir, dir.write("three.toml", experiment("\n[workload.set]\nlayers = 3\n")), "three");
  // The --set comes after the file's [workload.set]: four layers.
  const json four = run(dir, dir.path() / "three.toml", "four", " --set workload.set.layers=4");
  const auto macs = [](const json& j) { return j["workload"]["macs"].get<std::int64_t>(); };
  // Every decoder layer has the same MACs; the embedding and the output layer are the rest.
  const std::int64_t per_layer = macs(three) - macs(two);
  EXPECT_GT(per_layer, 0);
  EXPECT_EQ(macs(four) - macs(three), per_layer);
  EXPECT_GT(four["latency_cycles"].get<double>(), three["latency_cycles"].get<double>());

  const std::string resolved = test::read_file(dir.path() / "four/resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("\n[workload.set]\n\"layers\" = 4\n"));
  const json again = run(dir, dir.path() / "four/resolved.toml", "again");
  EXPECT_EQ(macs(again), macs(four));
  EXPECT_EQ(again["latency_cycles"], four["latency_cycles"]);
  EXPECT_EQ(again["energy_pj"], four["energy_pj"]);
}

TEST(WorkloadSet, AGridGeneOverAGeneratorKeyBuildsOneGraphPerValue) {
  test::ScratchDir dir;
  const std::string space = R"(
[search]
plugin = "grid"

[space]
objectives = ["latency_cycles", "macs"]

[space.genes.layers]
path = "workload.set.layers"
values = [2, 4]
)";
  const fs::path exp = dir.write("grid.toml", experiment(space));
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "grid") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = test::read_csv(dir.path() / "grid/evaluations.csv");
  ASSERT_EQ(rows.size(), 2u);
  std::map<std::string, std::pair<double, double>> by_layers;  // macs, latency
  for (const test::CsvRow& row : rows) by_layers[row["layers"]] = {row.number("macs"), row.number("latency_cycles")};
  // Each point is the run of that many layers: the grid's 2-layer point is the file's own run, the 4-layer one the
  // --set run's.
  const json two = run(dir, dir.write("plain.toml", experiment("")), "plain");
  const json four = run(dir, dir.path() / "plain.toml", "four", " --set workload.set.layers=4");
  EXPECT_EQ(by_layers.at("2").first, two["workload"]["macs"].get<double>());
  EXPECT_EQ(by_layers.at("4").first, four["workload"]["macs"].get<double>());
  EXPECT_EQ(by_layers.at("2").second, two["latency_cycles"].get<double>());
  EXPECT_EQ(by_layers.at("4").second, four["latency_cycles"].get<double>());
  const json s = json::parse(test::read_file(dir.path() / "grid/search.json"));
  // Per value its forward graph and the graph it evaluates (here the same operators): the set values key the cache.
  EXPECT_EQ(s["graphs_built"].get<int>(), 4);
}

}  // namespace
}  // namespace monet
