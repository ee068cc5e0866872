// Plugin discovery, load failures with precise reasons, and object lifetime versus library lifetime.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/plugin/abi_layout.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kBroken = fs::path(MONET_TEST_PLUGIN_DIR) / "broken";
const fs::path kExtra = fs::path(MONET_TEST_PLUGIN_DIR) / "extra";

TEST(Registry, FindsTheBuiltInPluginsNextToTheKernel) {
  const Registry& r = Registry::global();
  EXPECT_NE(r.find(PluginKind::frontend, "toml"), nullptr);
  EXPECT_NE(r.find(PluginKind::cost_model, "roofline"), nullptr);
  EXPECT_NE(r.find(PluginKind::fusion, "layer_by_layer"), nullptr);
  EXPECT_NE(r.find(PluginKind::search, "fixed"), nullptr);
  EXPECT_EQ(r.find(PluginKind::search, "roofline"), nullptr);  // names are per kind
  const PluginHandle* roofline = r.find(PluginKind::cost_model, "roofline");
  ASSERT_EQ(roofline->info.params.size(), 1u);
  EXPECT_EQ(roofline->info.params[0].name, "utilization");
  EXPECT_FALSE(roofline->info.params[0].doc.empty());
  EXPECT_EQ(roofline->library.filename(), "monet_cost_model_roofline.so");
}

// A workload file goes to the frontend that reads it: by its extension, or, for a TOML workload that names a
// generator, to the frontend plugin of that name; a generator that is no frontend is an error at its key.
TEST(Registry, WorkloadFilesGoToTheFrontendThatReadsThem) {
  const Registry& r = Registry::global();
  test::ScratchDir dir;
  const auto frontend = [&](const std::string& name, const std::string& text) {
    return r.frontend_for(dir.write(name, text))->info.name;
  };
  EXPECT_EQ(r.frontend_for(test::source_dir() / "workloads/onnx/resnet18.onnx")->info.name, "onnx");
  EXPECT_EQ(frontend("layers.toml", "[[inputs]]\nname = \"x\"\nshape = [1, 4]\n"), "toml");
  EXPECT_EQ(frontend("gpt.toml", "[workload]\ngenerator = \"gpt\"\n"), "gpt");
  EXPECT_EQ(frontend("dlrm.toml", "[workload]\nname = \"d\"\ngenerator = \"dlrm\"\n"), "dlrm");
  EXPECT_EQ(frontend("nb.toml", "[workload]\ngenerator = \"nasbench201\"\n"), "nasbench201");
  EXPECT_EQ(frontend("broken.toml", "[workload\n"), "toml");  // which reports the syntax error at its place
  EXPECT_EQ(r.frontend_for(dir.write("w.xyz", "")), nullptr);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"[workload]\ngenerator = \"gtp\"\n", "unknown.toml:2:13: error: workload.generator: no frontend plugin named 'gtp'"},
           {"[workload]\ngenerator = 4\n", "unknown.toml:2:13: error: workload.generator: expected the name of a frontend plugin"}}) {
    try {
      (void)r.frontend_for(dir.write("unknown.toml", text));
      ADD_FAILURE() << text;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  }
}

TEST(Registry, MissingEntryPointIsExplained) {
  try {
    Registry::load_library(kBroken / "monet_test_missing_entry.so");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              (kBroken / "monet_test_missing_entry.so").string() +
                  ": error: not a monet plugin: the library has no symbol 'monet_plugin_entry' (expected a library "
                  "built with MONET_EXPORT_PLUGINS against plugin API " + std::to_string(kPluginApiVersion) + ")");
  }
}

TEST(Registry, WrongApiVersionIsExplained) {
  try {
    Registry::load_library(kBroken / "monet_test_wrong_api.so");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("monet_test_wrong_api.so: error: plugin API version mismatch: the library was built "
                                    "against plugin API 999 (monet 9.9.9), this monet"));
    EXPECT_THAT(e.what(), HasSubstr("provides plugin API " + std::to_string(kPluginApiVersion) + "; rebuild the plugin"));
  }
}

TEST(Registry, WrongAbiTagIsExplained) {
  try {
    Registry::load_library(kBroken / "monet_test_wrong_abi.so");
    FAIL();
  } catch (const UserError& e) {
    const std::string theirs = abi_tag_hex(kPluginAbiTag ^ 1U);
    EXPECT_EQ(std::string(e.what()),
              (kBroken / "monet_test_wrong_abi.so").string() +
                  ": error: plugin ABI mismatch: the library was built against plugin API " + std::to_string(kPluginApiVersion) + " with ABI tag " + theirs +
                  " (monet 0.0.9), this monet " + kVersion + " has plugin API " + std::to_string(kPluginApiVersion) + " with ABI tag " +
                  abi_tag_hex(kPluginAbiTag) + " (the shared types differ in layout); rebuild the plugin against this monet");
  }
}

TEST(Registry, FileThatIsNotALibraryIsExplained) {
  try {
    Registry::load_library(kBroken / "monet_test_garbage.so");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("monet_test_garbage.so: error: cannot load plugin library: "));
    EXPECT_THAT(e.what(), HasSubstr("invalid ELF header"));
  }
}

TEST(Registry, BrokenLibrariesAreRecordedAndReportedWhenAPluginIsMissing) {
  const Registry r({kBroken, kExtra});
  ASSERT_EQ(r.failures().size(), 4u);
  EXPECT_EQ(r.failures()[0].library.filename(), "monet_test_garbage.so");  // sorted by file name
  EXPECT_NE(r.find(PluginKind::search, "first_operator_sweep"), nullptr);
  try {
    (void)r.require(PluginKind::search, "first_operator_swep", SourceLocation{"exp.toml", 3, 10});
    FAIL();
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("exp.toml:3:10: error: no search plugin named 'first_operator_swep' (did you mean "
                               "'first_operator_sweep'?); available: first_operator_sweep"));
    EXPECT_THAT(msg, HasSubstr("; note: " + (kBroken / "monet_test_wrong_api.so").string() + " could not be used: plugin API version mismatch"));
  }
}

TEST(Registry, EarlierSearchPathEntriesWin) {
  // The same library listed twice is loaded once; a plugin found first is kept.
  const Registry r({kExtra, kExtra / "monet_test_extra.so"});
  EXPECT_EQ(r.names(PluginKind::search), std::vector<std::string>{"first_operator_sweep"});
  EXPECT_TRUE(r.failures().empty());
}

TEST(Registry, MonetPluginPathIsSearchedFirst) {
  ::setenv("MONET_PLUGIN_PATH", (kExtra.string() + "::" + kBroken.string()).c_str(), 1);
  const auto path = Registry::default_search_path();
  ::unsetenv("MONET_PLUGIN_PATH");
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0], kExtra);
  EXPECT_EQ(path[1], kBroken);
  EXPECT_EQ(path[2].filename(), "plugins");
}

TEST(Registry, ObjectsKeepTheirLibraryLoaded) {
  std::shared_ptr<SearchAlgorithm> search;
  {
    const Registry r({kExtra});
    const PluginHandle* h = r.find(PluginKind::search, "first_operator_sweep");
    ASSERT_NE(h, nullptr);
    search = r.create<SearchAlgorithm>(*h, default_params(h->info.params, "test"));
  }  // the registry and its handles are gone; the object still holds the library
  struct Context final : SearchContext {
    DesignSpace s = [] {
      DesignSpace d;
      d.genes.push_back(Gene{.key = "alloc:a", .name = "a", .group = GeneGroup::allocation, .labels = {"core0", "core1"}});
      d.genes.push_back(Gene{.key = "alloc:b", .name = "b", .group = GeneGroup::allocation, .labels = {"core1"}});
      d.objectives = {{"latency_cycles", "cycles"}};
      return d;
    }();
    [[nodiscard]] const DesignSpace& space() const override { return s; }
    [[nodiscard]] std::uint64_t seed() const override { return 0; }
    [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) override {
      std::vector<Evaluation> out;
      for (const auto& p : points) {
        Evaluation e;
        e.point = p;
        e.objectives = {1.0};
        out.push_back(e);
      }
      return out;
    }
    void plan(std::size_t) override {}
  } ctx;
  const auto result = search->run(ctx);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[1].point.genes, (std::vector<std::int32_t>{1, 0}));
}

TEST(Registry, CreateChecksTheInterface) {
  const Registry r({kExtra});
  const PluginHandle* h = r.find(PluginKind::search, "first_operator_sweep");
  EXPECT_THROW(r.create<CostModel>(*h, default_params(h->info.params, "test")), UserError);
}

}  // namespace
}  // namespace monet
