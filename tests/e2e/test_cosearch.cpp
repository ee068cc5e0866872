// Network-hardware co-search (issue #36, docs/search.md#quality-metrics-accuracy-as-an-objective): NAS-Bench-201's six
// cell edges as genes beside the edge-TPU's hardware genes, the cell's CIFAR-10 accuracy from the benchmark's table
// (the `table` quality plugin) as a maximised objective and as a constraint, and every way of getting it wrong.
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

const fs::path kJoint = test::source_dir() / "experiments/cosearch/nb201_edge_tpu_joint.toml";
const char* const kEdges[] = {"edge_1_0", "edge_2_0", "edge_2_1", "edge_3_0", "edge_3_1", "edge_3_2"};

/// The benchmark's accuracy of each cell, keyed by its six ops joined with '|' (read here independently of the plugin).
std::map<std::string, double> accuracy_by_ops() {
  std::map<std::string, double> out;
  for (const test::CsvRow& r : test::read_csv(test::source_dir() / "workloads/nasbench201/accuracy_cifar10.csv")) {
    std::string key;
    for (const char* e : kEdges) key += r[e] + "|";
    out[key] = r.number("cifar10_test_accuracy_percent");
  }
  return out;
}

/// A gene's cell in evaluations.csv is its TOML text: "\"nor_conv_3x3\"".
std::string unquoted(const std::string& s) { return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s; }

test::CommandResult run(const fs::path& exp, const fs::path& out, const std::string& extra) {
  return test::monet("run " + q(exp) + " --out " + q(out) + " --log-level warn" + extra);
}

const std::string kSmall = " --set search.population=16 --set search.generations=4";

TEST(CoSearch, EveryPointCarriesItsCellsAccuracyAndTheFrontMaximisesIt) {
  test::ScratchDir dir;
  const auto r = run(kJoint, dir.path() / "t2", kSmall + " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto table = accuracy_by_ops();
  ASSERT_EQ(table.size(), 15625U);
  const auto rows = test::read_csv(dir.path() / "t2/evaluations.csv");
  ASSERT_GE(rows.size(), 60U);
  std::set<std::string> cells;
  for (const test::CsvRow& row : rows) {
    std::string key;
    for (const char* e : kEdges) key += unquoted(row[e]) + "|";
    cells.insert(key);
    ASSERT_TRUE(table.contains(key)) << key;
    EXPECT_EQ(row.number("accuracy"), table.at(key)) << key;  // the table's value, as written (not negated)
    EXPECT_EQ(row["feasible"], "true");
  }
  EXPECT_GT(cells.size(), 20U);  // the search moved the network, not only the hardware
  // The front: no point has higher-or-equal accuracy and lower-or-equal latency and energy, better in one.
  const auto front = test::read_csv(dir.path() / "t2/pareto.csv");
  ASSERT_GE(front.size(), 2U);
  for (const auto& a : front) {
    for (const auto& b : rows) {
      const bool no_worse = b.number("accuracy") >= a.number("accuracy") && b.number("latency_cycles") <= a.number("latency_cycles") &&
                            b.number("energy_pj") <= a.number("energy_pj");
      const bool better = b.number("accuracy") > a.number("accuracy") || b.number("latency_cycles") < a.number("latency_cycles") ||
                          b.number("energy_pj") < a.number("energy_pj");
      EXPECT_FALSE(no_worse && better) << "front point " << a["id"] << " is dominated by " << b["id"];
    }
  }
  // The most accurate cell seen is on the front (a minimised accuracy would have dropped it).
  double best = 0;
  for (const auto& row : rows) best = std::max(best, row.number("accuracy"));
  EXPECT_TRUE(std::any_of(front.begin(), front.end(), [&](const test::CsvRow& f) { return f.number("accuracy") == best; }));
  const json results = json::parse(test::read_file(dir.path() / "t2/best/results.json"));
  EXPECT_EQ(results["quality"]["plugin"], "table");
  EXPECT_EQ(results["quality"]["units"]["accuracy"], "%");

  // One thread: the same files.
  const auto one = run(kJoint, dir.path() / "t1", kSmall + " --threads 1");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  for (const char* f : {"evaluations.csv", "pareto.csv", "best/results.json"}) {
    EXPECT_EQ(test::read_file(dir.path() / "t1" / f), test::read_file(dir.path() / "t2" / f)) << f;
  }
}

TEST(CoSearch, AnAccuracyConstraintMakesLessAccurateCellsInfeasible) {
  test::ScratchDir dir;
  const auto r = run(kJoint, dir.path() / "c", kSmall + " --set 'space.constraints.accuracy={ min = 93 }'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::size_t below = 0;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "c/evaluations.csv")) {
    if (row.number("accuracy") < 93) {
      ++below;
      EXPECT_EQ(row["feasible"], "false");
      EXPECT_THAT(row["reason"], HasSubstr("accuracy = ")) << row["reason"];
      EXPECT_THAT(row["reason"], HasSubstr(" < 93")) << row["reason"];
    } else {
      EXPECT_EQ(row["feasible"], "true");
    }
  }
  EXPECT_GT(below, 0U);
  for (const test::CsvRow& row : test::read_csv(dir.path() / "c/pareto.csv")) EXPECT_GE(row.number("accuracy"), 93);
}

TEST(CoSearch, ARunOfOneCellReportsItsAccuracyByEdgesOrByArchString) {
  test::ScratchDir dir;
  // Edge 1<-0 of cell 6111 set to none: NAS-Bench-201's cell 1162 (93.41 %).
  auto r = run(kJoint, dir.path() / "edges", " --unset space --set 'workload.set.ops[0]=\"none\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("quality       table: accuracy 93.4066666667 %"));
  json j = json::parse(test::read_file(dir.path() / "edges/results.json"));
  EXPECT_EQ(j["accuracy"].get<double>(), 93.40666666666668);
  EXPECT_THAT(test::read_file(dir.path() / "edges/resolved.toml"), HasSubstr("\n[quality]\nplugin = \"table\"\n"));
  // The resolved experiment runs to the same accuracy.
  r = run(dir.path() / "edges/resolved.toml", dir.path() / "again", "");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "again/results.json"))["accuracy"], j["accuracy"]);

  // Keyed by the arch string of a workload that gives one: cell 3 (86.62 %) picked with --set.
  const std::string by_arch =
      " --unset space --set 'workload.file=\"" + (test::source_dir() / "workloads/nasbench201/nb201_best_6111.toml").string() +
      "\"' --set 'quality.keys=[\"workload.set.arch\"]' --set 'quality.columns=[\"arch\"]'";
  r = run(kJoint, dir.path() / "arch", by_arch);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "arch/results.json"))["accuracy"].get<double>(), 94.37333333333333);
  r = run(kJoint, dir.path() / "cheap",
          by_arch + " --set 'workload.set.arch=\"|avg_pool_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "cheap/results.json"))["accuracy"].get<double>(), 86.61666666666667);
}

TEST(CoSearch, CellsTheTableLacksAreInfeasibleInASearchAndAnErrorForTheExperimentsOwn) {
  test::ScratchDir dir;
  // A table of two cells: 6111 (the experiment's) and 1162.
  std::string two = "arch,edge_1_0,edge_2_0,edge_2_1,edge_3_0,edge_3_1,edge_3_2,acc\n";
  two += "a,nor_conv_3x3,nor_conv_3x3,nor_conv_3x3,skip_connect,nor_conv_3x3,nor_conv_1x1,94.37\n";
  two += "b,none,nor_conv_3x3,nor_conv_3x3,skip_connect,nor_conv_3x3,nor_conv_1x1,93.41\n";
  const fs::path csv = dir.write("two.csv", two);
  const std::string table = " --set 'quality.file=\"" + csv.string() + "\"' --set 'quality.metrics=[\"accuracy=acc\"]'";
  auto r = run(kJoint, dir.path() / "s", table + " --set search.plugin=random --set search.budget=8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::size_t missing = 0;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "s/evaluations.csv")) {
    if (row["feasible"] == "true") continue;
    ++missing;
    EXPECT_THAT(row["reason"], HasSubstr("no row of " + csv.string() + " has workload.set.ops[0] = "));
  }
  EXPECT_GE(missing, 6U);

  // The experiment's own cell missing: one located error before any work, exit 2, nothing written.
  r = run(kJoint, dir.path() / "own", table + " --unset space --set 'workload.set.ops[5]=\"none\"'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("nb201_edge_tpu_joint.toml:"));
  EXPECT_THAT(r.out, HasSubstr("error: keys: no row of " + csv.string() + " has workload.set.ops[0] = \"nor_conv_3x3\""));
  EXPECT_FALSE(fs::exists(dir.path() / "own"));
}

TEST(CoSearch, BadQualityAndCellInputIsOneLocatedError) {
  test::ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --set 'quality.metrics=[\"latency_cycles=cifar10_test_accuracy_percent\"]'",
       "the quality metric 'latency_cycles' has the name of a metric of the run itself"},
      {" --set 'quality.columns=[\"edge_1_0\", \"edge_2_0\", \"edge_2_1\", \"edge_3_0\", \"edge_3_1\", \"edge_3_3\"]'",
       "'edge_3_3' is not a column of"},
      {" --set 'quality.columns=[\"edge_1_0\"]'", "expected one column per key (6), got 1"},
      {" --set 'quality.minimise=[\"acc\"]'", "'acc' is not one of the metrics (accuracy)"},
      {" --set 'quality.file=\"nowhere.csv\"'", "quality.file: file not found"},
      {" --unset quality.plugin", "[quality]: name the quality plugin"},
      {" --unset quality", "'accuracy' is not a metric of a run"},
      {" --set 'space.objectives=[\"acuracy\", \"latency_cycles\"]'", "did you mean 'accuracy'?"},
      {" --unset space --set 'workload.set.ops[1]=\"conv_3x3\"'", "ops[1] = 'conv_3x3' is not a NAS-Bench-201 operation"},
      {" --unset space --set 'workload.set.ops=[\"none\"]'", "expected the ops of the 6 edges"},
      // A gene's value is built before the search: located at the value, not an infeasible point later.
      {" --set 'space.genes.edge_3_1.values=[\"none\", \"sep_conv_3x3\"]'",
       "--set space.genes.edge_3_1.values=[\"none\", \"sep_conv_3x3\"]:1:"},
      {" --unset space --set 'workload.set.arch=\"|none~0|+|none~0|none~1|+|none~0|none~1|none~2|\"'", "give arch or ops, not both"},
  };
  for (const auto& [extra, message] : cases) {
    const fs::path out = dir.path() / "out";
    const auto r = run(kJoint, out, extra);
    EXPECT_EQ(r.exit_code, 2) << extra << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << extra;
    EXPECT_THAT(r.out, HasSubstr(": error: ")) << extra;  // file:line:column: error: ...
    EXPECT_FALSE(fs::exists(out)) << extra;
  }
}

}  // namespace
}  // namespace monet
