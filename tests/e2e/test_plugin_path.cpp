// [plugins] path (docs/plugins.md): an experiment names the folders its plugins come from, relative to itself; the
// run, validate and the written resolved.toml find them without MONET_PLUGIN_PATH. Bad values are in
// tests/malformed/ (exp_plugins_path_*.case).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using test::q;
using ::testing::HasSubstr;

TEST(PluginPath, AnExperimentLoadsATestPluginFromItsOwnFolderList) {
  test::ScratchDir dir;
  // The test plugin's folder under a relative name beside the experiment.
  fs::create_directory_symlink(fs::path(MONET_TEST_PLUGIN_DIR) / "extra", dir.path() / "my_plugins");
  const auto src = test::source_dir();
  const fs::path exp = dir.write("study/e.toml", "[workload]\nfile = \"" + (src / "workloads/tiny_cnn.toml").string() +
                                                     "\"\n[architecture]\nfile = \"" +
                                                     (src / "architectures/dual_core.toml").string() +
                                                     "\"\n[plugins]\npath = [\"../my_plugins\"]\n"
                                                     "[search]\nplugin = \"first_operator_sweep\"\nrepeat = 2\n");
  const auto run = test::monet("run " + q(exp) + " --out " + q(dir.path() / "o"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("first_operator_sweep: 2 evaluation(s)"));
  const std::string resolved = test::read_file(dir.path() / "o/resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("[plugins]\npath = [\"../my_plugins\"]\n"));  // relative to the output folder
  EXPECT_THAT(resolved, HasSubstr("\"search:first_operator_sweep\" = \"0.0.1\""));
  // resolved.toml runs again on its own, the plugin found through its [plugins] path.
  const auto again = test::monet("run " + q(dir.path() / "o/resolved.toml") + " --out " + q(dir.path() / "again"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(test::read_file(dir.path() / "again/results.json"), test::read_file(dir.path() / "o/results.json"));
  EXPECT_EQ(test::monet("validate " + q(exp)).exit_code, 0);
  // Without the section the plugin is unknown; a --set gives the folder back (relative to the experiment too).
  const auto without = test::monet("run " + q(exp) + " --unset plugins.path --out " + q(dir.path() / "x"));
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_THAT(without.out, HasSubstr("no search plugin named 'first_operator_sweep'"));
  const auto set = test::monet("run " + q(exp) + " --unset plugins.path --set 'plugins.path=[\"../my_plugins\"]' --out " +
                               q(dir.path() / "s"));
  EXPECT_EQ(set.exit_code, 0) << set.out;
}

}  // namespace
}  // namespace monet
