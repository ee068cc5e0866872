// Distributed searches (issue #12, docs/distributed.md): under `mpirun -np 1, 2, 3` a search writes the same
// evaluations.csv, pareto.csv, journal and best point as one process without mpirun; a point that throws on a
// rank ends the run with one message naming the rank and the point and a resumable checkpoint, which another
// rank count resumes to the uninterrupted front. Built without MPI, monet refuses to run as N copies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;
using ::testing::Not;

/// The search tests' small allocation problem (six convolutions on four cores) with two DRAM genes: 6 variants of
/// the accelerator, a third of the points infeasible (with a reason): what crosses between ranks is not all alike.
fs::path small_problem(const test::ScratchDir& dir) {
  const std::string extra = R"(
[space.genes.dram_bandwidth]
path = "architecture.offchip.bandwidth_bits_per_cycle"
values = [32, 64, 128]

[space.genes.dram_size]
path = "architecture.offchip.size_bits"
values = [10_000_000_000, 100_000]
)";
  const fs::path exp = dir.write("data/search/hw.toml", test::read_file(test::source_dir() / "tests/data/search/small_allocation.toml") + extra);
  fs::copy_file(test::source_dir() / "tests/data/search/six_convs.toml", dir.path() / "data/search/six_convs.toml");
  return exp;
}

/// NSGA-II 16 x 8 (144 evaluations in 9 batches, duplicates served from the archive).
const std::string kBudget = " --set search.plugin=nsga2 --set search.population=16 --set search.generations=8 --set 'architecture.file=\"" +
                            (test::source_dir() / "architectures/tpu_like_quad_core.toml").string() + "\"'";

const char* const kSameFiles[] = {"evaluations.csv", "pareto.csv", "journal.jsonl", "best/results.json", "best/schedule.csv"};

#ifdef MONET_MPIEXEC

/// mpirun for this machine and CI: as root (CI runs as root), more ranks than cores, shared memory between the
/// ranks without the single-copy mechanism containers forbid; no leak report from Open MPI's allocations in the
/// sanitizer build.
std::string mpirun(int ranks) {
  return "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 "
         "'" MONET_MPIEXEC "' -np " + std::to_string(ranks) + " '" + std::string(MONET_CLI) + "' ";
}

test::CommandResult run(const std::string& launcher, const fs::path& exp, const fs::path& out, const std::string& extra = "") {
  const std::string cli = launcher.empty() ? "'" + std::string(MONET_CLI) + "' " : launcher;
  return test::run_command(cli + "run " + q(exp) + " --out " + q(out) + " --log-level warn" + kBudget + extra);
}

TEST(Distributed, OneTwoAndThreeRanksWriteWhatOneProcessWrites) {
  test::ScratchDir dir;
  const fs::path exp = small_problem(dir);
  const auto single = run("", exp, dir.path() / "single", " --threads 2");
  ASSERT_EQ(single.exit_code, 0) << single.out;
  const std::size_t evaluated = test::read_csv(dir.path() / "single/evaluations.csv").size();
  // np 3 with 2 threads per rank, np 2 and 1 with one: chunks of different sizes on different ranks.
  for (const auto& [ranks, threads] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{3, 2}}) {
    const fs::path out = dir.path() / ("np" + std::to_string(ranks));
    const auto r = run(mpirun(ranks), exp, out, " --threads " + std::to_string(threads));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* f : kSameFiles) EXPECT_EQ(test::read_file(out / f), test::read_file(dir.path() / "single" / f)) << ranks << " ranks: " << f;
    // The load of every rank: the points add up to those evaluated, each rank's busy time is within the run's.
    const json s = json::parse(test::read_file(out / "search.json"));
    ASSERT_EQ(s["ranks"].size(), static_cast<std::size_t>(ranks));
    std::size_t points = 0;
    for (const json& l : s["ranks"]) {
      points += l["points"].get<std::size_t>();
      EXPECT_GE(l["busy_s"].get<double>(), 0.0);
    }
    EXPECT_EQ(points, evaluated) << ranks << " ranks";
    if (ranks > 1) {
      EXPECT_THAT(r.out, HasSubstr("ranks         " + std::to_string(ranks) + " ranks: rank 0 "));
    }
  }
}

TEST(Distributed, AFailingPointEndsTheRunWithAResumableCheckpoint) {
  test::ScratchDir dir;
  const fs::path exp = small_problem(dir);
  const auto full = run("", exp, dir.path() / "full");
  ASSERT_EQ(full.exit_code, 0) << full.out;

  // Rank 1 fails on the first point of the third batch or later it is given (batches of 16: distinct points
  // 32-47 are the third). Every rank is given a chunk of each batch before rank 0 starts on its own, so rank 1
  // fails in the third batch; which of its points depends on the run. The run must stop at the failing batch with
  // every earlier batch kept.
  const fs::path part = dir.path() / "part";
  const auto failed = run("MONET_TEST_FAIL_POINT=32 MONET_TEST_FAIL_RANK=1 " + mpirun(2), exp, part);
  EXPECT_EQ(failed.exit_code, 1) << failed.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(failed.out, m, std::regex(R"(error: rank 1 failed on point (\d+) \(batch (\d+); core:c1 = core[0-3], )")))
      << failed.out;
  const int point = std::stoi(m[1].str());
  const int batch = std::stoi(m[2].str());
  EXPECT_GE(point, 32) << failed.out;
  EXPECT_EQ(batch, point / 16) << failed.out;
  EXPECT_THAT(failed.out, HasSubstr("MONET_TEST_FAIL_POINT: a failure injected for the test\n"));
  EXPECT_THAT(failed.out, HasSubstr("`--resume` continues it"));
  const json state = json::parse(test::read_file(part / "search.json"));
  EXPECT_TRUE(state["stopped"].get<bool>());
  EXPECT_THAT(state["failure"].get<std::string>(), HasSubstr("rank 1 failed on point "));
  EXPECT_EQ(state["batches"].get<int>(), batch);
  EXPECT_EQ(test::read_csv(part / "evaluations.csv").size(), static_cast<std::size_t>(16 * batch));

  // Resumed on three ranks: the front and every file of the uninterrupted single-process run.
  const auto resumed = run(mpirun(3), exp, part, " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  for (const char* f : kSameFiles) EXPECT_EQ(test::read_file(part / f), test::read_file(dir.path() / "full" / f)) << f;
}

// Bad input seen by every rank is still one located error, printed once, with exit code 2: the ranks agree
// before the work starts, so nobody calls MPI_Abort; nothing is written.
TEST(Distributed, BadInputUnderMpirunIsOneMessageAndExitCodeTwo) {
  test::ScratchDir dir;
  const fs::path exp = small_problem(dir);
  const auto r = run(mpirun(2), exp, dir.path() / "out", " --set search.population=zero");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const std::string where = "--set search.population=zero:1:";
  ASSERT_THAT(r.out, HasSubstr(where));
  EXPECT_EQ(r.out.find(where), r.out.rfind(where)) << r.out;  // once, not once per rank
  EXPECT_THAT(r.out, Not(HasSubstr("MPI_ABORT"))) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

#else

TEST(Distributed, BuiltWithoutMpiMonetRefusesToRunAsSeveralCopies) {
  // What an MPI launcher tells its processes, without one: this monet would run N copies writing one folder.
  test::ScratchDir dir;
  const auto r = test::run_command("OMPI_COMM_WORLD_SIZE=2 '" + std::string(MONET_CLI) + "' run " + q(small_problem(dir)) +
                                   " --out " + q(dir.path() / "out") + kBudget);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("started by an MPI launcher with 2 ranks, but this monet was built without MPI"));
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

#endif

}  // namespace
}  // namespace monet
