// Determinism and provenance (docs/reliability.md#determinism-and-provenance): the same experiment gives byte-identical
// output files at 1, 2 and 4 threads, in two runs, and when run again from the resolved.toml it wrote — a single run
// and a small search. Fields that must differ are excluded by name, and only those:
//   search.json   "busy_s" (each rank's busy wall time, ranks[])
//   monet cost    "seconds" (wall time of the study)
//   resolved.toml "source", "overrides", "unsets" ([provenance]: which file was run, with which --set) and "dir"
//                 ([output]: the --out folder)
// Every other file of the output folder (results.json, schedule.csv, transfers.csv, trace.json.gz, the SVGs,
// report.html, evaluations.csv, pareto.csv, journal.jsonl, best/...) is compared byte for byte. The provenance they
// record (monet's version and commit, the seed, plugin versions) is checked too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "monet/util/version.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using test::q;
using ::testing::HasSubstr;

/// Every file below `dir`, by relative path, with its bytes.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (f.is_regular_file()) out[fs::relative(f.path(), dir).generic_string()] = test::read_file(f.path());
  }
  return out;
}

/// JSON text with the keys named in `drop` removed at any depth (and the count of removals, so that a renamed field
/// fails the test instead of silently being compared).
std::pair<std::string, int> without_keys(const std::string& text, const std::set<std::string>& drop) {
  int removed = 0;
  std::function<void(json&)> strip = [&](json& j) {
    if (j.is_object()) {
      for (const std::string& k : drop) removed += static_cast<int>(j.erase(k));
      for (auto& [k, v] : j.items()) strip(v);
    } else if (j.is_array()) {
      for (json& v : j) strip(v);
    }
  };
  json j = json::parse(text);
  strip(j);
  return {j.dump(1), removed};
}

/// resolved.toml without the lines that name the run rather than the experiment.
std::string resolved_without_run(const std::string& text) {
  std::string kept;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    bool drop = false;
    for (const char* key : {"source = ", "overrides = ", "unsets = ", "dir = "}) drop = drop || line.rfind(key, 0) == 0;
    if (!drop) kept += line + "\n";
  }
  return kept;
}

/// Compares two output folders: the same files, byte-identical except the named fields.
void expect_same_output(const fs::path& a, const fs::path& b, const std::string& what) {
  const auto fa = files_of(a), fb = files_of(b);
  std::set<std::string> na, nb;
  for (const auto& [name, bytes] : fa) na.insert(name);
  for (const auto& [name, bytes] : fb) nb.insert(name);
  ASSERT_EQ(na, nb) << what;
  for (const auto& [name, bytes] : fa) {
    const std::string& other = fb.at(name);
    const std::string file = fs::path(name).filename().string();
    if (file == "resolved.toml") {
      EXPECT_EQ(resolved_without_run(bytes), resolved_without_run(other)) << what << ": " << name;
    } else if (file == "search.json") {
      const auto [x, nx] = without_keys(bytes, {"busy_s"});
      const auto [y, ny] = without_keys(other, {"busy_s"});
      EXPECT_EQ(x, y) << what << ": " << name;
      EXPECT_GT(nx, 0) << name << " has no busy_s any more: update the exclusions";
    } else {
      EXPECT_TRUE(bytes == other) << what << ": " << name << " differs";
    }
  }
}

/// The git commit the CLI reports (`monet --version`: "monet 0.1.0 (git COMMIT, plugin API ...").
std::string cli_commit() {
  const std::string v = test::monet("--version").out;
  const auto at = v.find("(git ") + 5;
  return v.substr(at, v.find(',', at) - at);
}

void expect_provenance(const json& p, std::uint64_t seed, const std::map<std::string, std::string>& plugins) {
  EXPECT_EQ(p.at("monet_version"), kVersion);
  EXPECT_EQ(p.at("git_commit"), cli_commit());
  EXPECT_NE(p.at("git_commit"), "");
  if (seed != ~0ULL) {
    EXPECT_EQ(p.at("seed"), seed);
  }
  for (const auto& [key, version] : plugins) EXPECT_EQ(p.at("plugins").value(key, std::string("missing")), version) << key;
  EXPECT_EQ(p.at("plugins").size(), plugins.size()) << p.dump();
}

/// Runs `experiment ARGS` at 1, 2, 4 threads, at 4 again, and its resolved.toml; all five outputs must agree.
void check_deterministic(const fs::path& experiment, const std::string& args, const test::ScratchDir& dir) {
  auto run = [&](const fs::path& file, const std::string& name, int threads, const std::string& extra) {
    const auto r = test::monet("run " + q(file) + " --out " + q(dir.path() / name) + " --log-level warn --threads " +
                               std::to_string(threads) + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out;
  };
  run(experiment, "t1", 1, args);
  run(experiment, "t2", 2, args);
  run(experiment, "t4", 4, args);
  run(experiment, "t4-again", 4, args);
  run(dir.path() / "t1/resolved.toml", "resolved", 2, "");
  for (const char* other : {"t2", "t4", "t4-again", "resolved"}) expect_same_output(dir.path() / "t1", dir.path() / other, other);
}

TEST(Determinism, ARunIsByteIdenticalAtAnyThreadCountAcrossRunsAndFromResolvedToml) {
  // A training step (Adam) of the tiny CNN on the TPU-like quad core with automatic fused stacks: loopnest
  // mapping searches run in parallel. (GPT-2 the same way took 5 s for the five runs: over a test's budget.)
  test::ScratchDir dir;
  const std::string quad = (test::source_dir() / "architectures/tpu_like_quad_core.toml").string();
  check_deterministic(test::source_dir() / "experiments/tiny_cnn_dual_core.toml",
                      " --set 'architecture.file=\"" + quad + "\"' --set training.mode=training --set "
                      "training.optimizer.plugin=adam --set fusion.plugin=fused_stacks --set fusion.auto_stacks=true", dir);
  const json r = json::parse(test::read_file(dir.path() / "t1/results.json"));
  EXPECT_EQ(r.at("seed"), 1);
  EXPECT_EQ(r.at("workload").at("mode"), "training");
  expect_provenance(r.at("provenance"), 1,
                    {{"frontend:toml", "2.0.0"}, {"backward:autodiff", "1.0.0"}, {"optimizer:adam", "2.0.0"},
                     {"cost_model:loopnest", "1.0.0"}, {"fusion:fused_stacks", "1.1.0"}, {"search:fixed", "1.0.0"}});
}

TEST(Determinism, ASearchIsByteIdenticalAtAnyThreadCountAcrossRunsAndFromResolvedToml) {
  // NSGA-II, 8 x (4 + 1) points of the small allocation problem, seed 7.
  test::ScratchDir dir;
  check_deterministic(test::source_dir() / "tests/data/search/small_allocation.toml",
                      " --set search.plugin=nsga2 --set search.population=8 --set search.generations=4", dir);
  EXPECT_GT(test::read_file(dir.path() / "t1/evaluations.csv").size(), 0u);
  const json s = json::parse(test::read_file(dir.path() / "t1/search.json"));
  EXPECT_EQ(s.at("seed"), 7);
  const std::map<std::string, std::string> used{{"frontend:toml", "2.0.0"}, {"cost_model:loopnest", "1.0.0"},
                                                {"fusion:layer_by_layer", "1.1.0"}, {"search:nsga2", "1.0.0"}};
  expect_provenance(s.at("provenance"), 7, used);
  // Genes may choose any plugin found: all of them are listed with their versions.
  const json& found = s.at("provenance").at("plugins_found");
  EXPECT_EQ(found.value("search:grid", ""), "1.0.0");
  EXPECT_EQ(found.value("optimizer:adam", ""), "2.0.0");
  for (const auto& [key, version] : used) EXPECT_EQ(found.value(key, ""), version) << key;
  // The best point's own results.json has the same provenance as a single run of it.
  expect_provenance(json::parse(test::read_file(dir.path() / "t1/best/results.json")).at("provenance"), 7, used);
}

TEST(Determinism, CostStudiesAgreeAtAnyThreadCountAndRecordTheirProvenance) {
  // The operators of a small CNN on a loopnest core, costed in parallel (the mapping searches).
  const std::string args = "--log-level error cost " + q(test::source_dir() / "workloads/tiny_cnn.toml") + " --core " +
                           q(test::source_dir() / "architectures/cores/tpu_like.toml") + " --json --threads ";
  const auto one = test::monet(args + "1"), two = test::monet(args + "2"), again = test::monet(args + "2");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const auto [a, na] = without_keys(one.out, {"seconds"});
  EXPECT_EQ(na, 1);
  EXPECT_EQ(a, without_keys(two.out, {"seconds"}).first);
  EXPECT_EQ(a, without_keys(again.out, {"seconds"}).first);
  const json j = json::parse(one.out);
  // The study makes no random choice: no seed is recorded (~0 skips the check).
  expect_provenance(j.at("provenance"), ~0ULL, {{"frontend:toml", "2.0.0"}, {"cost_model:loopnest", "1.0.0"}});
  EXPECT_FALSE(j.at("provenance").contains("seed"));
}

}  // namespace
}  // namespace monet
