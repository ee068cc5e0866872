// The CLI contract: exit codes (0 ok, 2 bad input, 1 internal), messages with file:line:col, nothing
// half-written on failure, plugin listing and description, validation of every file kind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/plugin/abi.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::q;

std::string experiment(const std::string& extra) {
  const auto src = test::source_dir();
  return "[workload]\nfile = \"" + (src / "workloads/tiny_cnn.toml").string() + "\"\n[architecture]\nfile = \"" +
         (src / "architectures/dual_core.toml").string() + "\"\n" + extra;
}

TEST(Cli, VersionAndHelp) {
  const auto v = test::monet("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, HasSubstr("monet 0.1.0 (git "));
  EXPECT_THAT(v.out, HasSubstr("plugin API " + std::to_string(kPluginApiVersion) + ", ABI tag 0x"));
  EXPECT_EQ(test::monet("--help").exit_code, 0);
  EXPECT_EQ(test::monet("frobnicate").exit_code, 2);
  EXPECT_EQ(test::monet("run").exit_code, 2);  // missing experiment
  EXPECT_EQ(test::monet("run x.toml --threads -3").exit_code, 2);
  // What --threads 0 means is in the help of both commands that take it.
  for (const char* command : {"run", "cost"}) {
    const auto h = test::monet(std::string(command) + " --help");
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_THAT(h.out, HasSubstr("worker threads: 1 to 4096 (at most that many), or 0 (the default) for one per hardware thread"))
        << command;
  }
}

TEST(Cli, BadExperimentExitsWithTwoAndLeavesNoOutput) {
  test::ScratchDir dir;
  const auto exp = dir.write("bad.toml", experiment("[cost_model.roofline]\nutilization = 3\n[output]\ndir = \"" +
                                                    (dir.path() / "out").string() + "\"\n"));
  const auto r = test::monet("run " + q(exp));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, exp.string() + ":6:15: error: cost_model.roofline.utilization: expected a value in (0, 1], got 3\n");
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  // Nothing else in the folder: no temporary output either.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(Cli, BadWorkloadReportsTheWorkloadFile) {
  test::ScratchDir dir;
  const auto w = dir.write("w.toml", "[[inputs]]\nname = \"x\"\nshape = [1, 4, 8, 8]\n\n[[layers]]\nname = \"c\"\nop = \"conv\"\n"
                                     "input = \"y\"\nout_channels = 4\n");
  const auto src = test::source_dir();
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"w.toml\"\n[architecture]\nfile = \"" +
                                           (src / "architectures/dual_core.toml").string() + "\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "o"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(w.string() + ":8:9: error: layers[0].input: 'y' is not an input or an earlier layer"));
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
}

TEST(Cli, BadTilingRulePointsAtTheRuleInTheFileAndInSet) {
  // Plugin parameters that parse (a list of strings) but mean nothing are located like any other bad value.
  test::ScratchDir dir;
  const auto exp = dir.write("bad.toml",
                                 experiment("[fusion]\nplugin = \"fused_stacks\"\nintra = [\"conv=OY:0\"]\n"));
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "o"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(exp.string() + ":7:9: error: fusion.intra: 'conv=OY:0': '0' is neither a count"));
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
  const auto good = dir.write("good.toml", experiment("[fusion]\nplugin = \"layer_by_layer\"\n"));
  const auto s = test::monet("run " + q(good) + " --out " + q(dir.path() / "o") +
                             " --set 'fusion.inter=[\"conv=K\"]'");
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_THAT(s.out, HasSubstr("--set fusion.inter=[\"conv=K\"]:1:9: error: fusion.inter: 'conv=K': 'K' has no ':'"));
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
}

TEST(Cli, RequestsThatCannotBeDoneAreRejectedNotIgnored) {
  // Splitting a reduction dimension over cores (each core would hold partial sums) and naming stacks while asking
  // for automatic ones: located errors, exit code 2, nothing run.
  test::ScratchDir dir;
  for (const char* fusion : {"layer_by_layer", "fused_stacks"}) {
    const auto exp = dir.write("c.toml", experiment("[fusion]\nplugin = \"" + std::string(fusion) +
                                                    "\"\ninter = [\"conv=C:2\"]\n"));
    const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "o"));
    EXPECT_EQ(r.exit_code, 2) << fusion;
    EXPECT_THAT(r.out, HasSubstr(exp.string() + ":7:9: error: fusion.inter: 'conv=C:2' splits operator 'conv1' (Conv) "
                                 "along C, a reduction dimension of it")) << fusion;
    EXPECT_FALSE(fs::exists(dir.path() / "o"));
  }
  // The output dimension is fine.
  const auto ok = dir.write("k.toml", experiment("[fusion]\nplugin = \"layer_by_layer\"\ninter = [\"conv=K:2\"]\n"));
  EXPECT_EQ(test::monet("validate " + q(ok)).exit_code, 0);
  const auto both = dir.write("s.toml", experiment("[fusion]\nplugin = \"fused_stacks\"\nstacks = [\"conv1..relu1\"]\n"
                                                   "auto_stacks = true\n"));
  const auto r = test::monet("run " + q(both) + " --out " + q(dir.path() / "o"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(both.string() + ":8:15: error: auto_stacks: auto_stacks = true forms stacks only when "
                               "`stacks` is empty, and `stacks` lists 1 stack(s)"));
}

TEST(Cli, ABareStringGivenWithSetIsLocatedInTheSetArgument) {
  // "foo" is not TOML; --set takes it as a string, and a bad value still points at the --set argument.
  test::ScratchDir dir;
  const auto exp = dir.write("e.toml", experiment(""));
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "o") + " --set schedule.transfers=foo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--set schedule.transfers=foo:1:9: error: schedule.transfers: 'foo' is not one of"));
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
}

TEST(Cli, ExistingOutputIsKeptWhenTheRunFails) {
  test::ScratchDir dir;
  const auto out = dir.path() / "out";
  const auto good = dir.write("good.toml", experiment(""));
  ASSERT_EQ(test::monet("run " + q(good) + " --out " + q(out)).exit_code, 0);
  const std::string before = test::read_file(out / "results.json");
  const auto bad = dir.write("bad.toml", experiment("[search]\nplugin = \"nope\"\n"));
  EXPECT_EQ(test::monet("run " + q(bad) + " --out " + q(out)).exit_code, 2);
  EXPECT_EQ(test::read_file(out / "results.json"), before);
  // overwrite = false refuses to replace results.
  const auto keep = dir.write("keep.toml", experiment("[output]\noverwrite = false\n"));
  const auto r = test::monet("run " + q(keep) + " --out " + q(out));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("output folder exists and [output] overwrite = false"));
}

TEST(Cli, OutputFolderErrorsComeBeforeAnyWork) {
  // A training step that takes seconds to simulate: a folder it may not write is refused before the workload is
  // even read ("reading workload" is the first log line of the work).
  test::ScratchDir dir;
  const std::string exp = q(test::source_dir() / "experiments/resnet18_cifar_training_quad_core.toml");
  fs::create_directories(dir.path() / "exists");
  const auto keep = test::monet("run " + exp + " --out " + q(dir.path() / "exists") + " --set output.overwrite=false");
  EXPECT_EQ(keep.exit_code, 2);
  EXPECT_THAT(keep.out, HasSubstr((dir.path() / "exists").string() + ": error: output folder exists and [output] overwrite = false"));
  EXPECT_THAT(keep.out, ::testing::Not(HasSubstr("reading workload")));
  const auto file = dir.write("a_file", "x");
  const auto on_file = test::monet("run " + exp + " --out " + q(file));
  EXPECT_EQ(on_file.exit_code, 2);
  EXPECT_THAT(on_file.out, HasSubstr(file.string() + ": error: output path exists and is not a folder"));
  EXPECT_THAT(on_file.out, ::testing::Not(HasSubstr("reading workload")));
  const auto below_file = test::monet("run " + exp + " --out " + q(file / "out"));
  EXPECT_EQ(below_file.exit_code, 2);
  EXPECT_THAT(below_file.out, HasSubstr(file.string() + ": error: is not a folder: cannot create the output folder"));
  EXPECT_THAT(below_file.out, ::testing::Not(HasSubstr("reading workload")));
  EXPECT_EQ(test::read_file(file), "x");
}

TEST(Cli, ValidateRecognisesEveryFileKind) {
  const auto src = test::source_dir();
  const std::vector<std::pair<fs::path, std::string>> files{
      {src / "experiments/tiny_cnn_dual_core.toml", "valid experiment 'tiny_cnn_dual_core'"},
      {src / "architectures/dual_core.toml", "valid accelerator 'dual_core' with 2 cores"},
      {src / "architectures/cores/systolic_8x8.toml", "valid core 'systolic_8x8' (64 PEs, 1 memory levels)"},
      {src / "workloads/tiny_cnn.toml", "valid workload 'tiny_cnn' with 4 operators"}};
  for (const auto& [file, what] : files) {
    const auto r = test::monet("validate " + q(file));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr(what));
  }
  test::ScratchDir dir;
  const auto junk = dir.write("junk.toml", "x = 1\n");
  const auto r = test::monet("validate " + q(junk));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("cannot tell what this file describes"));
  const auto syntax = dir.write("syntax.toml", "[core\n");
  EXPECT_EQ(test::monet("validate " + q(syntax)).exit_code, 2);
  EXPECT_EQ(test::monet("validate " + q(dir.path() / "missing.toml")).exit_code, 2);
}

TEST(Cli, PluginsListsTheFourPluginsWithParameters) {
  const auto r = test::monet("plugins");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* name : {"toml 2.0.0", "roofline 1.0.0", "layer_by_layer 1.1.0", "fixed 1.0.0"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
  EXPECT_THAT(r.out, HasSubstr("utilization (number, fraction of PEs; default 1.0)"));
  const auto d = test::monet("plugins --describe roofline");
  ASSERT_EQ(d.exit_code, 0);
  EXPECT_THAT(d.out, HasSubstr("roofline (cost_model plugin, version 1.0.0)"));
  EXPECT_THAT(d.out, HasSubstr("fraction of the operational array doing useful work every cycle"));
  const auto missing = test::monet("plugins --describe roofln");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.out, HasSubstr("did you mean 'roofline'?"));
}

TEST(Cli, PluginPathAddsPluginsAndReportsBrokenOnes) {
  const std::string env = std::string("MONET_PLUGIN_PATH='") + MONET_TEST_PLUGIN_DIR + "/extra:" + MONET_TEST_PLUGIN_DIR +
                          "/broken' ";
  const auto list = test::run_command(env + "'" + MONET_CLI + "' plugins");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("first_operator_sweep 0.0.1"));
  EXPECT_THAT(list.out, HasSubstr("monet_test_missing_entry.so: not a monet plugin: the library has no symbol "
                                  "'monet_plugin_entry'"));
  EXPECT_THAT(list.out, HasSubstr("monet_test_wrong_api.so: plugin API version mismatch"));
  // A plugin from MONET_PLUGIN_PATH takes part in a run; broken libraries are warned about, not fatal.
  test::ScratchDir dir;
  const auto exp = dir.write("e.toml", experiment("[search]\nplugin = \"first_operator_sweep\"\nrepeat = 2\n"));
  const auto run = test::run_command(env + "'" + MONET_CLI + "' run " + q(exp) + " --out " + q(dir.path() / "o"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("[warning] plugin library"));
  EXPECT_THAT(run.out, HasSubstr("first_operator_sweep: 2 evaluation(s)"));
  // Without the path, the plugin is unknown: exit 2 with the list of available ones.
  const auto without = test::monet("run " + q(exp));
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_THAT(without.out, HasSubstr("no search plugin named 'first_operator_sweep'; available: anneal, fixed, grid, nsga2, random"));
}

}  // namespace
}  // namespace monet
