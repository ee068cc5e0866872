// `monet run --cost-cache DIR` (issue #10): a second run costs nothing again and gives the same results; a
// corrupted file is ignored with a warning and replaced; concurrent runs sharing the folder keep each other's
// entries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;

const fs::path kSmall = test::source_dir() / "tests/data/search/small_allocation.toml";

/// The only cost file of a cache folder.
fs::path cache_file(const fs::path& dir) {
  fs::path found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".jsonl") {
      EXPECT_TRUE(found.empty()) << "two cost files in " << dir;
      found = e.path();
    }
  }
  return found;
}

std::size_t lines(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

std::string run(const fs::path& out, const fs::path& cache, const std::string& extra = "") {
  return "run " + q(kSmall) + " --out " + q(out) + " --cost-cache " + q(cache) +
         " --set search.plugin=random --set search.budget=40" + extra;
}

json costs_of(const fs::path& out) { return json::parse(test::read_file(out / "search.json"))["cost_cache"]; }

TEST(CostCacheFile, ASecondRunCostsNothingAndGivesTheSameResults) {
  test::ScratchDir dir;
  const fs::path cache = dir.path() / "cache";
  const auto first = test::monet(run(dir.path() / "a", cache));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_GT(costs_of(dir.path() / "a")["misses"].get<int>(), 0);
  const fs::path file = cache_file(cache);
  ASSERT_FALSE(file.empty());
  const std::size_t stored = lines(file);
  EXPECT_GT(stored, 1u);

  const auto second = test::monet(run(dir.path() / "b", cache));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_EQ(costs_of(dir.path() / "b")["misses"].get<int>(), 0);
  EXPECT_EQ(test::read_file(dir.path() / "a/evaluations.csv"), test::read_file(dir.path() / "b/evaluations.csv"));
  EXPECT_EQ(test::read_file(dir.path() / "a/best/results.json").size(), test::read_file(dir.path() / "b/best/results.json").size());
  EXPECT_EQ(lines(file), stored);  // nothing new to store

  // A corrupted entry: the file is not trusted at all (warning), the run costs everything again and rewrites it.
  {
    std::ofstream out(file, std::ios::app);
    out << "{\"key\": [1, 2], \"cost\": {\"cycles\": \"many\"}}\n";
  }
  const auto third = test::monet(run(dir.path() / "c", cache));
  ASSERT_EQ(third.exit_code, 0) << third.out;
  EXPECT_THAT(third.out, HasSubstr(file.string() + ":" + std::to_string(stored + 1) + ": corrupted cost cache entry"));
  EXPECT_EQ(test::read_file(dir.path() / "a/evaluations.csv"), test::read_file(dir.path() / "c/evaluations.csv"));
  EXPECT_EQ(lines(file), stored);
  const auto fourth = test::monet(run(dir.path() / "d", cache));
  EXPECT_THAT(fourth.out, ::testing::Not(HasSubstr("corrupted")));
}

TEST(CostCacheFile, ConcurrentRunsKeepEachOthersEntries) {
  // Two runs over different parts of the space at the same time, then one over both: it costs nothing.
  test::ScratchDir dir;
  const fs::path cache = dir.path() / "cache";
  const std::string cli = std::string("'") + MONET_CLI + "' ";
  const auto both = test::run_command(cli + run(dir.path() / "a", cache, " --set experiment.seed=1") + " & " + cli +
                                      run(dir.path() / "b", cache, " --set experiment.seed=2") + " & wait");
  ASSERT_TRUE(fs::exists(dir.path() / "a/search.json")) << both.out;
  ASSERT_TRUE(fs::exists(dir.path() / "b/search.json")) << both.out;
  const auto again_a = test::monet(run(dir.path() / "a2", cache, " --set experiment.seed=1"));
  const auto again_b = test::monet(run(dir.path() / "b2", cache, " --set experiment.seed=2"));
  ASSERT_EQ(again_a.exit_code, 0) << again_a.out;
  ASSERT_EQ(again_b.exit_code, 0) << again_b.out;
  EXPECT_EQ(costs_of(dir.path() / "a2")["misses"].get<int>(), 0);
  EXPECT_EQ(costs_of(dir.path() / "b2")["misses"].get<int>(), 0);
  EXPECT_FALSE(fs::exists(cache_file(cache).string() + ".tmp"));
}

TEST(CostCacheFile, AnUnwritableFolderIsAWarningNotALostRun) {
  test::ScratchDir dir;
  dir.write("file", "x");
  const auto r = test::monet(run(dir.path() / "a", dir.path() / "file"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--cost-cache: cannot create the folder"));
  EXPECT_TRUE(fs::exists(dir.path() / "a/evaluations.csv"));
}

}  // namespace
}  // namespace monet
