// Conformance of every plugin found (bundled ones and the test plugin on tests/plugins/extra): it describes
// itself and every parameter, its defaults pass its own declaration, the kernel rejects unknown keys and wrongly
// typed values for it with located errors, and its work is deterministic and thread-safe (the same result from
// parallel calls) for the kinds that can be exercised without a whole experiment (cost models, frontends,
// estimators). Leaks show up in the sanitizer build, which runs this test too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "monet/config/params_toml.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/ir/workload_toml.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const Registry& all_plugins() {
  static const Registry r = [] {
    std::vector<fs::path> path{fs::path(MONET_TEST_PLUGIN_DIR) / "extra"};
    for (const fs::path& p : Registry::default_search_path()) path.push_back(p);
    return Registry(path);
  }();
  return r;
}

/// A TOML value of the wrong type for a parameter.
std::string wrong_value(ParamType t) {
  switch (t) {
    case ParamType::boolean: return "\"yes\"";
    case ParamType::integer: return "\"1\"";
    case ParamType::number: return "\"x\"";
    case ParamType::string:
    case ParamType::path: return "1";
    case ParamType::string_list:
    case ParamType::integer_list:
    case ParamType::number_list: return "{ a = 1 }";
    case ParamType::integer_table: return "1";
  }
  return "1";
}

TEST(PluginConformance, EveryPluginDescribesItselfAndEveryParameter) {
  const Registry& r = all_plugins();
  ASSERT_GE(r.plugins().size(), 20u);
  EXPECT_TRUE(r.failures().empty());
  EXPECT_NE(r.find(PluginKind::search, "first_operator_sweep"), nullptr);  // the out-of-tree test plugin
  for (const PluginHandle& h : r.plugins()) {
    const PluginInfo& i = h.info;
    SCOPED_TRACE(to_string(i.kind) + " " + i.name);
    EXPECT_FALSE(i.version.empty());
    EXPECT_FALSE(i.summary.empty());
    std::set<std::string> names;
    for (const ParamSpec& p : i.params) {
      EXPECT_TRUE(names.insert(p.name).second) << "parameter '" << p.name << "' declared twice";
      EXPECT_FALSE(p.doc.empty()) << "parameter '" << p.name << "' has no doc";
      EXPECT_EQ(p.name.find_first_of(" .=\"'"), std::string::npos) << p.name;
    }
    // The defaults satisfy the plugin's own declaration (bounds, choices, types).
    const bool has_required = std::any_of(i.params.begin(), i.params.end(), [](const ParamSpec& p) { return p.required(); });
    if (!has_required) {
      EXPECT_NO_THROW((void)default_params(i.params, i.name));
    }
  }
}

TEST(PluginConformance, UnknownKeysAndWrongTypesAreLocatedErrors) {
  for (const PluginHandle& h : all_plugins().plugins()) {
    const PluginInfo& i = h.info;
    SCOPED_TRACE(to_string(i.kind) + " " + i.name);
    {
      const TomlDocument doc = TomlDocument::parse_string("\n\nnot_a_parameter_of_any_plugin = 1\n", "p.toml");
      TableReader t(doc.root(), doc.file(), "");
      try {
        (void)read_set_params(t, i.params);
        t.finish();
        ADD_FAILURE() << "an unknown key was accepted";
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("p.toml:3:1: error: unknown key 'not_a_parameter_of_any_plugin'"));
      }
    }
    for (const ParamSpec& p : i.params) {
      const TomlDocument doc = TomlDocument::parse_string("\n" + p.name + " = " + wrong_value(p.type) + "\n", "p.toml");
      TableReader t(doc.root(), doc.file(), "");
      try {
        (void)read_set_params(t, i.params);
        ADD_FAILURE() << "parameter '" << p.name << "' accepted " << wrong_value(p.type);
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("p.toml:2:"));
        EXPECT_THAT(e.what(), HasSubstr(p.name));
      }
    }
  }
}

/// Runs `f` sequentially once, then on 4 threads at once, and checks every result equals the first.
template <class F>
void expect_same_from_parallel_calls(F f, const std::string& what) {
  using Result = std::decay_t<decltype(f())>;
  const Result reference = f();
  std::vector<Result> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t) threads.emplace_back([&, t] { results[t] = f(); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, reference) << what;
}

std::string cost_text(const Cost& c) {
  return std::to_string(c.cycles) + " " + std::to_string(c.energy_pj) + " " + std::to_string(c.memory_energy_pj) + " " +
         c.mapping + " " + c.bound;
}

TEST(PluginConformance, CostModelsFrontendsAndEstimatorsAreDeterministicUnderParallelCalls) {
  const Registry& r = all_plugins();
  const fs::path src = test::source_dir();
  const PluginHandle& toml = r.require(PluginKind::frontend, "toml", {});
  const GraphPtr g = r.create<WorkloadFrontend>(toml, default_params(toml.info.params, "toml"))->load(src / "workloads/tiny_cnn.toml");
  const CorePtr core = load_core(src / "architectures/cores/systolic_8x8.toml");
  int models = 0;
  for (const PluginHandle& h : r.plugins()) {
    const bool has_required = std::any_of(h.info.params.begin(), h.info.params.end(), [](const ParamSpec& p) { return p.required(); });
    if (has_required) continue;  // e.g. table's file: exercised by its own tests
    SCOPED_TRACE(h.info.name);
    const ParamValues params = default_params(h.info.params, h.info.name);
    if (h.info.kind == PluginKind::cost_model) {
      ++models;
      const auto model = r.create<CostModel>(h, params);
      model->check_core(*core);
      for (const Operator& op : g->operators()) {
        if (!core->runs(op.kind)) continue;
        const std::vector<Range> tile = op.full_ranges();
        expect_same_from_parallel_calls([&] { return cost_text(model->evaluate(CostQuery{*g, op, tile, *core})); },
                                        h.info.name + " on " + op.name);
      }
    } else if (h.info.kind == PluginKind::frontend && h.info.name == "toml") {
      const auto frontend = r.create<WorkloadFrontend>(h, params);
      // The graph's own TOML rendering covers every operator, tensor and attribute.
      expect_same_from_parallel_calls([&] { return workload_toml(*frontend->load(src / "workloads/tiny_cnn.toml")); },
                                      "toml frontend");
    } else if (h.info.kind == PluginKind::estimator) {
      const auto estimator = r.create<Estimator>(h, params);
      const auto [lo, hi] = estimator->technology_range_nm();
      MemoryEstimateQuery q;
      q.technology_nm = (lo + hi) / 2;
      q.size_bits = 1 << 20;
      q.read_word_bits = 64;
      q.write_word_bits = 64;
      expect_same_from_parallel_calls([&] {
        const MemoryEstimate m = estimator->memory(q);
        return std::to_string(m.read_energy_pj) + " " + std::to_string(m.write_energy_pj) + " " + std::to_string(m.area_mm2);
      }, h.info.name);
    }
  }
  EXPECT_GE(models, 2);  // roofline, loopnest
}

}  // namespace
}  // namespace monet
