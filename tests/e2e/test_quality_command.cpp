// The `command` quality plugin (issue 36): a program run per design point gives its metrics. Small Python scripts
// written here play the user's program over a NAS-Bench-201 x edge-TPU experiment: its output becomes the point's
// metrics and an objective; a failure (non-zero exit, timeout, no JSON, no program) is an infeasible point with its
// message, or for the experiment's own point exit 2 with nothing written; one run per distinct point; --resume does
// not rerun journalled points; 1 and 2 threads agree; the shipped example gives NAS-Bench-201's accuracies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kJoint = test::source_dir() / "experiments/cosearch/nb201_edge_tpu_joint.toml";
const fs::path kExample = test::source_dir() / "experiments/cosearch/nb201_command_quality.toml";
const std::vector<std::string> kOps = {"none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"};

/// A Python script in the scratch folder that logs its stdin to calls.txt (one line per call), then runs `body` with
/// `point` (the parsed stdin), `op` (the first edge's op, from keys) and `x` (the mesh's x gene, 0 without genes).
fs::path script(const test::ScratchDir& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir.write(name, "#!/usr/bin/python3\nimport json, os, signal, subprocess, sys, time\n"
                                     "line = sys.stdin.read()\n"
                                     "with open('" + (dir.path() / "calls.txt").string() + "', 'a') as f: f.write(line)\n"
                                     "point = json.loads(line)\n"
                                     "op = point['keys']['workload.set.ops'][0]\n"
                                     "x = point['genes'].get('x', 0)\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

/// 90 + the op's index + x / 10: what the scripts print for a good point, so each row's accuracy is known.
const std::string kFormula =
    "print(json.dumps({'accuracy': 90 + ['none', 'skip_connect', 'nor_conv_1x1', 'nor_conv_3x3', 'avg_pool_3x3'].index(op)"
    " + x / 10, 'other': 'text'}))\n";

/// The joint experiment with the command plugin running `command` (TOML array text) as its [quality] (plus
/// `quality` lines), its space cut to the first edge x the mesh's x (5 x 3 points), searched by `search`.
fs::path experiment(const test::ScratchDir& dir, const std::string& name, const std::string& command, const std::string& quality = "",
                    const std::string& search = "plugin = \"grid\"") {
  std::string text = test::read_file(kJoint);
  text = text.substr(0, text.find("[quality]"));
  for (const char* folder : {"workloads", "architectures"}) {
    text = test::replace_first(text, std::string("\"../../") + folder, "\"" + (test::source_dir() / folder).string());
  }
  text += "[quality]\nplugin = \"command\"\ncommand = " + command + "\nmetrics = [\"accuracy\"]\nunits = [\"%\"]\n" +
          (quality.find("keys =") == std::string::npos ? "keys = [\"workload.set.ops\"]\n" : "") + quality +
          "\n[space]\nobjectives = [\"accuracy\", \"latency_cycles\"]\n"
          "[space.genes.edge_1_0]\npath = \"workload.set.ops[0]\"\n"
          "values = [\"none\", \"skip_connect\", \"nor_conv_1x1\", \"nor_conv_3x3\", \"avg_pool_3x3\"]\n"
          "[space.genes.x]\npath = \"architecture.core_arrays.pe.x\"\nvalues = [1, 2, 4]\n"
          "[search]\n" + search + "\n[output]\nfront_points = 0\n";
  return dir.write(name, text);
}

std::string argv(const fs::path& program) { return "[\"" + program.string() + "\"]"; }

/// "FILE:LINE:" of the experiment's `command = ` line: where a failure of the command is located.
std::string command_line(const fs::path& exp) {
  const std::string text = test::read_file(exp);
  const auto at = text.find("\ncommand = ");
  return exp.string() + ":" + std::to_string(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 2) + ":";
}

test::CommandResult run(const fs::path& exp, const fs::path& out, const std::string& extra = "") {
  return test::monet("run " + q(exp) + " --out " + q(out) + " --log-level warn" + extra);
}

/// The stdin lines the scripts logged, in call order.
std::vector<std::string> calls(const test::ScratchDir& dir) {
  std::vector<std::string> out;
  std::istringstream in(test::read_file(dir.path() / "calls.txt"));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// An evaluations.csv cell of a string gene is its TOML text: "\"none\"" -> none.
std::string unquote(const std::string& s) { return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s; }

/// The reason of each evaluations.csv row by its first edge's op (the rows of one op must agree).
std::map<std::string, std::string> reasons_by_op(const fs::path& out) {
  std::map<std::string, std::string> by_op;
  for (const test::CsvRow& row : test::read_csv(out / "evaluations.csv")) {
    const std::string op = unquote(row["edge_1_0"]);
    const std::string reason = row["feasible"] == "true" ? "feasible" : row["reason"];
    EXPECT_TRUE(!by_op.contains(op) || by_op[op] == reason) << op << ": " << by_op[op] << " vs " << reason;
    by_op[op] = reason;
  }
  return by_op;
}

/// The configured point (first edge nor_conv_3x3) fails: exit 2, one located error, nothing written.
void expect_configured_point_refused(const test::ScratchDir& dir, const fs::path& exp, const std::string& message) {
  const auto r = run(exp, dir.path() / "refused");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr(command_line(exp))) << r.out;
  EXPECT_THAT(r.out, HasSubstr(message)) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "refused"));
}

TEST(QualityCommand, ItsPrintedMetricsAreThePointsAndAnObjective) {
  test::ScratchDir dir;
  const fs::path exp = experiment(dir, "exp.toml", argv(script(dir, "acc.py", kFormula)),
                                  "keys = [\"workload.set.ops\", \"workload.set.batch\"]\n");
  const auto r = run(exp, dir.path() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = test::read_csv(dir.path() / "out/evaluations.csv");
  ASSERT_EQ(rows.size(), 15u);
  for (const test::CsvRow& row : rows) {
    const auto op = std::find(kOps.begin(), kOps.end(), unquote(row["edge_1_0"])) - kOps.begin();
    EXPECT_DOUBLE_EQ(row.number("accuracy"), 90 + static_cast<double>(op) + row.number("x") / 10) << row["edge_1_0"] << " " << row["x"];
    EXPECT_EQ(row["feasible"], "true");
  }
  // An objective, maximised: the front holds the most accurate point (avg_pool_3x3 at x = 4).
  double best = 0;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "out/pareto.csv")) best = std::max(best, row.number("accuracy"));
  EXPECT_DOUBLE_EQ(best, 94.4);
  // The protocol: genes as JSON values (a string unquoted, a number), the keys' values (the six edges as an array).
  const json first = json::parse(calls(dir).front());  // the configured point, assessed before the search
  EXPECT_EQ(first["genes"], json::parse(R"({"edge_1_0": "nor_conv_3x3", "x": 2})"));
  EXPECT_EQ(first["keys"], json::parse(R"({"workload.set.batch": 1, "workload.set.ops": ["nor_conv_3x3", "nor_conv_3x3",
                                          "nor_conv_3x3", "skip_connect", "nor_conv_3x3", "nor_conv_1x1"]})"));
}

TEST(QualityCommand, ANonZeroExitIsAnInfeasiblePointWithItsStderr) {
  test::ScratchDir dir;
  const std::string fail_on =
      "if op == sys.argv[1]:\n    print('loading the checkpoint', file=sys.stderr)\n"
      "    print('RuntimeError: CUDA out of memory', file=sys.stderr)\n    sys.exit(3)\n" + kFormula;
  const fs::path program = script(dir, "fail.py", fail_on);
  const fs::path exp = experiment(dir, "exp.toml", "[\"" + program.string() + "\", \"avg_pool_3x3\"]");
  const auto r = run(exp, dir.path() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto reasons = reasons_by_op(dir.path() / "out");
  EXPECT_EQ(reasons.at("nor_conv_3x3"), "feasible");
  EXPECT_THAT(reasons.at("avg_pool_3x3"), HasSubstr(command_line(exp)));
  EXPECT_THAT(reasons.at("avg_pool_3x3"), HasSubstr(": error: command: the quality command '" + program.string() +
                                                    " avg_pool_3x3' exited with status 3; the last lines of its stderr: "
                                                    "loading the checkpoint | RuntimeError: CUDA out of memory"));
  expect_configured_point_refused(dir, experiment(dir, "bad.toml", "[\"" + program.string() + "\", \"nor_conv_3x3\"]"),
                                  "exited with status 3");
}

TEST(QualityCommand, ACommandPastItsTimeoutIsKilledWithItsChildren) {
  test::ScratchDir dir;
  // The slow points start a child (as a shell or a data loader would) and sleep: the whole group must go.
  const std::string slow = "if op == sys.argv[1]:\n    child = subprocess.Popen(['sleep', '30'])\n"
                           "    with open('" + (dir.path() / "children.txt").string() + "', 'a') as f: f.write(f'{child.pid}\\n')\n"
                           "    time.sleep(30)\n" + kFormula;
  const fs::path program = script(dir, "slow.py", slow);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run(experiment(dir, "exp.toml", "[\"" + program.string() + "\", \"none\"]", "timeout_s = 0.5\n"), dir.path() / "out",
                     " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 3 slow points at 0.5 s each on 2 threads, 12 others: this test (with its second run) took 1.8 s, far from 30 s.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 15.0);
  const auto reasons = reasons_by_op(dir.path() / "out");
  EXPECT_EQ(reasons.at("skip_connect"), "feasible");
  EXPECT_THAT(reasons.at("none"), HasSubstr("' did not finish within timeout_s = 0.5 s and was killed (its process group); "
                                            "it wrote nothing on stderr"));
  std::istringstream children(test::read_file(dir.path() / "children.txt"));
  int n = 0;
  for (std::string pid; std::getline(children, pid); ++n) {
    // Gone, or a zombie its new parent has not reaped yet: not sleeping any more.
    const std::string stat = test::read_file("/proc/" + pid + "/stat");
    EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos) << pid << ": " << stat;
  }
  EXPECT_EQ(n, 3);
  expect_configured_point_refused(dir, experiment(dir, "bad.toml", "[\"" + program.string() + "\", \"nor_conv_3x3\"]", "timeout_s = 0.5\n"),
                                  "did not finish within timeout_s = 0.5 s");
}

TEST(QualityCommand, OutputThatIsNotTheMetricsIsAnInfeasiblePoint) {
  test::ScratchDir dir;
  const std::string body =
      "if op == 'none': sys.exit(0)\n"
      "if op == 'skip_connect': print('epoch 1: loss 2.3'); sys.exit(0)\n"
      "if op == 'nor_conv_1x1': print(json.dumps({'acc': 91})); sys.exit(0)\n"
      "if op == 'avg_pool_3x3': print(json.dumps({'accuracy': 'high'})); sys.exit(0)\n"
      "if op == sys.argv[1]: print(json.dumps([93])); sys.exit(0)\n" + kFormula;
  const fs::path program = script(dir, "out.py", body);
  const auto r = run(experiment(dir, "exp.toml", "[\"" + program.string() + "\", \"-\"]"), dir.path() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto reasons = reasons_by_op(dir.path() / "out");
  EXPECT_EQ(reasons.at("nor_conv_3x3"), "feasible");
  EXPECT_THAT(reasons.at("none"), HasSubstr("' printed no JSON on stdout (expected one JSON object with a number for each of: "
                                            "accuracy); it wrote nothing on stderr"));
  EXPECT_THAT(reasons.at("skip_connect"), HasSubstr("' printed no JSON on stdout but 'epoch 1: loss 2.3' (expected one JSON "
                                                    "object with a number for each of: accuracy; messages go to stderr)"));
  EXPECT_THAT(reasons.at("nor_conv_1x1"), HasSubstr("' printed no \"accuracy\" (its JSON has: acc)"));
  EXPECT_THAT(reasons.at("avg_pool_3x3"), HasSubstr("' printed \"accuracy\" as a string, expected a number"));
  // The configured point's command prints no JSON (nothing), or JSON that is not an object: the experiment's error.
  expect_configured_point_refused(dir, experiment(dir, "array.toml", "[\"" + program.string() + "\", \"nor_conv_3x3\"]"),
                                  "printed an array on stdout, not a JSON object");
  const fs::path none = dir.write("none.py", "#!/usr/bin/python3\n");
  fs::permissions(none, fs::perms::owner_all);
  expect_configured_point_refused(dir, experiment(dir, "silent.toml", argv(none)), "printed no JSON on stdout");
}

TEST(QualityCommand, AProgramThatCannotStartIsALocatedError) {
  test::ScratchDir dir;
  // Not in PATH: found when the configured point runs it.
  expect_configured_point_refused(dir, experiment(dir, "path.toml", "[\"no-such-program-of-monet\"]"),
                                  "error: command: cannot start the quality command 'no-such-program-of-monet': No such file or directory");
  // A relative program is the experiment folder's: checked when the plugin is made.
  const fs::path missing = experiment(dir, "missing.toml", "[\"tools/acc.py\"]");
  expect_configured_point_refused(dir, missing, "error: command: no program " + (dir.path() / "tools/acc.py").string());
  const fs::path program = script(dir, "tools/acc.py", kFormula);
  fs::permissions(program, fs::perms::owner_read | fs::perms::owner_write);
  expect_configured_point_refused(dir, missing, program.string() + " is not executable");
  fs::permissions(program, fs::perms::owner_all);
  const auto r = run(missing, dir.path() / "out");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(QualityCommand, EachDistinctPointRunsOnceAndAFailureIsKept) {
  test::ScratchDir dir;
  const fs::path program = script(dir, "acc.py", "if op == 'avg_pool_3x3': sys.exit(5)\n" + kFormula);
  // With its genes, each of the 15 points is its own input, once (the configured point is assessed before the
  // search and again by it, best/ once more: one run). On 2 threads.
  const auto all = run(experiment(dir, "genes.toml", argv(program)), dir.path() / "genes", " --threads 2");
  ASSERT_EQ(all.exit_code, 0) << all.out;
  std::vector<std::string> logged = calls(dir);
  EXPECT_EQ(logged.size(), 15u);
  EXPECT_EQ(std::set<std::string>(logged.begin(), logged.end()).size(), 15u);
  // Without genes the input is the cell's edges: 5 runs for 15 points; the 3 points of the failing cell share its
  // failure.
  fs::remove(dir.path() / "calls.txt");
  const auto cells = run(experiment(dir, "cells.toml", argv(program), "genes = false\n"), dir.path() / "cells", " --threads 2");
  ASSERT_EQ(cells.exit_code, 0) << cells.out;
  logged = calls(dir);
  EXPECT_EQ(logged.size(), 5u);
  EXPECT_EQ(std::set<std::string>(logged.begin(), logged.end()).size(), 5u);
  int failed = 0;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "cells/evaluations.csv")) {
    if (unquote(row["edge_1_0"]) != "avg_pool_3x3") continue;
    EXPECT_THAT(row["reason"], HasSubstr("exited with status 5"));
    ++failed;
  }
  EXPECT_EQ(failed, 3);
}

TEST(QualityCommand, AResumedSearchDoesNotRerunJournalledPoints) {
  test::ScratchDir dir;
  // The script interrupts monet (as Ctrl-C would) at its third call when stop.txt exists: the search stops after
  // its first batch of 4.
  const fs::path stop = dir.path() / "stop.txt";
  const std::string body = "if os.path.exists('" + stop.string() + "'):\n"
                           "    with open('" + (dir.path() / "calls.txt").string() + "') as f: n = len(f.readlines())\n"
                           "    if n >= 3:\n        os.remove('" + stop.string() + "')\n        os.kill(os.getppid(), signal.SIGINT)\n" +
                           kFormula;
  const fs::path exp = experiment(dir, "exp.toml", argv(script(dir, "acc.py", body)), "", "plugin = \"random\"\nbudget = 12\nbatch = 4");
  const auto full = run(exp, dir.path() / "full", " --threads 1");
  ASSERT_EQ(full.exit_code, 0) << full.out;
  fs::remove(dir.path() / "calls.txt");

  (void)dir.write("stop.txt", "");
  const auto stopped = run(exp, dir.path() / "part", " --threads 1");
  ASSERT_EQ(stopped.exit_code, 130) << stopped.out;
  const std::vector<std::string> before = calls(dir);
  ASSERT_EQ(test::read_csv(dir.path() / "part/evaluations.csv").size(), 4u);
  ASSERT_EQ(before.size(), 4u);  // the configured point (assessed first, then evaluated from memory) and 3 others
  const std::set<std::string> journalled(before.begin(), before.end());

  const auto resumed = run(exp, dir.path() / "part", " --threads 1 --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::vector<std::string> all = calls(dir);
  const std::vector<std::string> after(all.begin() + static_cast<std::ptrdiff_t>(before.size()), all.end());
  // The new process runs only the 8 points the journal does not hold: the configured point's check and best/'s and
  // front/'s points are recalled from the journal (Evaluation::quality), not run again.
  ASSERT_EQ(after.size(), 8u);
  for (const std::string& line : after) EXPECT_FALSE(journalled.contains(line)) << "replayed point run again: " << line;
  for (const char* f : {"evaluations.csv", "pareto.csv", "journal.jsonl"}) {
    EXPECT_EQ(test::read_file(dir.path() / "part" / f), test::read_file(dir.path() / "full" / f)) << f;
  }
}

TEST(QualityCommand, OneAndTwoThreadsWriteTheSameEvaluations) {
  test::ScratchDir dir;
  const fs::path program = script(dir, "acc.py", "if op == 'none': print('no', file=sys.stderr); sys.exit(1)\n"
                                                 "if op == 'skip_connect': print('not json')\n" + kFormula);
  const fs::path exp = experiment(dir, "exp.toml", argv(program), "", "plugin = \"random\"\nbudget = 12\nbatch = 6");
  const auto one = run(exp, dir.path() / "t1", " --threads 1");
  const auto two = run(exp, dir.path() / "t2", " --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  ASSERT_EQ(two.exit_code, 0) << two.out;
  for (const char* f : {"evaluations.csv", "pareto.csv", "best/results.json"}) {
    EXPECT_EQ(test::read_file(dir.path() / "t1" / f), test::read_file(dir.path() / "t2" / f)) << f;
  }
  EXPECT_THAT(test::read_file(dir.path() / "t1/evaluations.csv"), HasSubstr("exited with status 1"));
}

TEST(QualityCommand, TheExampleGivesNasBench201sAccuracies) {
  test::ScratchDir dir;
  const auto r = run(kExample, dir.path() / "out", " --set search.budget=6");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::vector<std::string>, double> table;
  for (const test::CsvRow& row : test::read_csv(test::source_dir() / "workloads/nasbench201/accuracy_cifar10.csv")) {
    table[{row["edge_1_0"], row["edge_2_0"], row["edge_2_1"], row["edge_3_0"], row["edge_3_1"], row["edge_3_2"]}] =
        row.number("cifar10_test_accuracy_percent");
  }
  const auto rows = test::read_csv(dir.path() / "out/evaluations.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (const test::CsvRow& row : rows) {
    const std::vector<std::string> cell{unquote(row["edge_1_0"]), unquote(row["edge_2_0"]), unquote(row["edge_2_1"]),
                                        unquote(row["edge_3_0"]), unquote(row["edge_3_1"]), unquote(row["edge_3_2"])};
    ASSERT_TRUE(table.contains(cell));
    EXPECT_DOUBLE_EQ(row.number("accuracy"), table.at(cell));
    EXPECT_EQ(row["feasible"], "true");
  }
  // The configured cell is NAS-Bench-201's best on CIFAR-10 (index 6111).
  EXPECT_DOUBLE_EQ(rows.front().number("accuracy"), 94.37333333333333);
}

}  // namespace
}  // namespace monet
