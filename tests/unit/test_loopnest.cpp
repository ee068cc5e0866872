// The loopnest model against ZigZag 3.8.5 (tests/data/zigzag: ZigZag's own per-layer results, copied from the
// reference set). With ZigZag's chosen mapping fed in, the model must give ZigZag's energy and latency per
// layer; the search must then reach the network totals within the tolerances.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "model.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json load_case(const std::string& name) {
  return json::parse(test::read_file(test::source_dir() / "tests/data/zigzag/cases" / (name + ".json")));
}

GraphPtr load_workload(const fs::path& file) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.frontend_for(file);
  return r.create<WorkloadFrontend>(*h, default_params(h->info.params, "t"))->load(file);
}

struct LayerResult {
  double energy = 0, ref_energy = 0, latency = 0, ref_latency = 0;
  std::string report;
};

/// Evaluates ZigZag's chosen mapping of one reference layer with monet's model.
LayerResult with_reference_mapping(const json& ref, const Graph& g, const Core& core, const loopnest::Options& opt) {
  const Operator* op = g.find_operator(ref["name"].get<std::string>());
  EXPECT_NE(op, nullptr) << ref["name"];
  const auto ranges = op->full_ranges();
  const loopnest::Layer L = loopnest::make_layer(g, *op, ranges, opt);
  const loopnest::Hierarchy h = loopnest::make_hierarchy(core);
  loopnest::UserSpatial user(core.array.dims.size());
  for (auto& [array_dim, unroll] : ref["spatial_mapping_user"].items()) {
    std::size_t a = 0;
    while (core.array.dims[a].name != array_dim) ++a;
    for (auto& [dim, f] : unroll.items()) user[a].emplace_back(L.dim(dim), f.get<double>());
  }
  const loopnest::Spatial sp = loopnest::convert_spatial(L, h, user);
  loopnest::Temporal tm;
  for (const auto& lo : L.ops) {
    const json& levels = ref["temporal_mapping_per_level"][std::string(1, lo.name)];
    std::vector<loopnest::Nest> nests;
    for (const json& level : levels) {
      loopnest::Nest n;
      for (const json& loop : level) n.push_back(loopnest::Loop{L.dim(loop[0].get<std::string>()), loop[1].get<double>()});
      nests.push_back(n);
    }
    tm.push_back(nests);
  }
  const loopnest::Evaluation ev = loopnest::evaluate(L, h, sp, tm, opt);
  LayerResult r;
  r.energy = ev.energy;
  r.ref_energy = ref["energy"]["total"].get<double>();
  r.latency = ev.latency;
  r.ref_latency = ref["latency"]["total"].get<double>();
  std::ostringstream s;
  s << ref["name"].get<std::string>() << ": energy " << ev.energy << " vs " << r.ref_energy << ", latency " << ev.latency
    << " vs " << r.ref_latency << " (stall " << ev.stall << " vs " << ref["latency"]["stall_slack_comb"] << ", onload "
    << ev.onloading << " vs " << ref["latency"]["data_onloading_cycle"] << ", offload " << ev.offloading << " vs "
    << ref["latency"]["data_offloading_cycle"] << ")\n";
  for (std::size_t o = 0; o < L.ops.size(); ++o) {
    const std::string n(1, L.ops[o].name);
    s << "    " << n << " mem energy:";
    for (double e : ev.memory_energy[o]) s << " " << e;
    s << "  ref:";
    for (const json& e : ref["energy"]["mem_per_operand_per_level"][n]) s << " " << e.get<double>();
    s << "\n    " << n << " words:";
    for (const auto& w : ev.word_accesses[o]) s << " [" << w[0] << " " << w[1] << " " << w[2] << " " << w[3] << "]";
    s << "  ref:";
    for (const json& w : ref["memory_word_access"][n]) {
      s << " [" << w["rd_out_to_low"] << " " << w["wr_in_by_high"] << " " << w["wr_in_by_low"] << " " << w["rd_out_to_high"] << "]";
    }
    s << "\n";
  }
  r.report = s.str();
  return r;
}

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(1.0, std::fabs(b)); }

TEST(Loopnest, GemmWorkedExampleExactly) {
  const json ref = load_case("gemm_l1__gemm_l1__gemm_layer_yaml__lpf_limit_3");
  const GraphPtr g = load_workload(test::source_dir() / "workloads/reference/gemm_layer.toml");
  const CorePtr core = load_core(test::source_dir() / "architectures/cores/gemm_l1.toml");
  loopnest::Options opt;
  opt.set_compat(true);
  const LayerResult r = with_reference_mapping(ref["layers"][0], *g, *core, opt);
  EXPECT_NEAR(r.energy, 511349.76, 1e-6) << r.report;
  EXPECT_EQ(r.latency, 8191) << r.report;
}

class ReferenceMappings : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(ReferenceMappings, EveryLayerWithZigZagsMapping) {
  const auto [case_name, workload] = GetParam();
  const json ref = load_case(case_name);
  const GraphPtr g = load_workload(test::source_dir() / workload);
  const std::string hw = fs::path(ref["accelerator"].get<std::string>()).stem().string();
  const CorePtr core = load_core(test::source_dir() / "architectures/cores" / (hw + ".toml"));
  loopnest::Options opt;
  opt.set_compat(true);
  for (const json& layer : ref["layers"]) {
    const LayerResult r = with_reference_mapping(layer, *g, *core, opt);
    EXPECT_TRUE(close(r.energy, r.ref_energy, 1e-6)) << r.report;
    EXPECT_TRUE(close(r.latency, r.ref_latency, 1e-6)) << r.report;
  }
}

/// Network totals of a reference case with ZigZag's own mappings, under the given options.
std::pair<double, double> totals_with_reference_mappings(const char* case_name, const char* workload,
                                                         const loopnest::Options& opt) {
  const json ref = load_case(case_name);
  const GraphPtr g = load_workload(test::source_dir() / workload);
  const std::string hw = fs::path(ref["accelerator"].get<std::string>()).stem().string();
  const CorePtr core = load_core(test::source_dir() / "architectures/cores" / (hw + ".toml"));
  double e = 0, l = 0;
  for (const json& layer : ref["layers"]) {
    const LayerResult r = with_reference_mapping(layer, *g, *core, opt);
    e += r.energy;
    l += r.latency;
  }
  return {e, l};
}

// The default mode departs from ZigZag where ZigZag has a bug (docs/cost-models.md, "Deviations"). Measured
// on ZigZag's own mappings: the clamped on-loading (issue #125) is the one that moves latency; the design
// notes measured +4.3 % (tpu_like/ONNX) and +6.2 % (gemm_l1_l3) with their own script.
TEST(Loopnest, DeviationsFromZigZagMeasured) {
  struct Case {
    const char* name;
    const char* workload;
    double clamp_latency_pct;  // the notes' measurement; < 0: none published
  };
  const Case cases[] = {{"tpu_like__tpu_like__resnet18_onnx", "workloads/reference/resnet18_zigzag.onnx", 4.3},
                        {"tpu_like__tpu_like__resnet18_yaml", "workloads/reference/resnet18_layers.toml", -1},
                        {"gemm_l1_l3__gemm_l1_l3__gemm_layer_yaml", "workloads/reference/gemm_layer.toml", 6.2}};
  for (const Case& c : cases) {
    loopnest::Options zz;
    zz.set_compat(true);
    const auto base = totals_with_reference_mappings(c.name, c.workload, zz);
    auto effect = [&](auto flip) {
      loopnest::Options o = zz;
      flip(o);
      const auto t = totals_with_reference_mappings(c.name, c.workload, o);
      return std::make_pair(100 * (t.first / base.first - 1), 100 * (t.second / base.second - 1));
    };
    const auto clamp = effect([](loopnest::Options& o) { o.negative_onloading = false; });
    const auto half = effect([](loopnest::Options& o) { o.half_shared_assigned = false; });
    const auto trunc = effect([](loopnest::Options& o) { o.truncated_extents = false; });
    std::printf("%s: clamped on-loading %+.2f %% latency; accumulated half-shared %+.2f %%; fractional extents "
                "%+.3f %% energy %+.3f %% latency\n",
                c.name, clamp.second, half.second, trunc.first, trunc.second);
    EXPECT_EQ(clamp.first, 0.0) << "on-loading does not change energy";
    EXPECT_GE(clamp.second, 0.0);
    if (c.clamp_latency_pct > 0) {
      EXPECT_NEAR(clamp.second, c.clamp_latency_pct, 0.15) << c.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    ZigZag, ReferenceMappings,
    ::testing::Values(std::make_pair("tpu_like__tpu_like__resnet18_onnx", "workloads/reference/resnet18_zigzag.onnx"),
                      std::make_pair("tpu_like__tpu_like__resnet18_yaml", "workloads/reference/resnet18_layers.toml"),
                      std::make_pair("gemm_l1_l3__gemm_l1_l3__gemm_layer_yaml", "workloads/reference/gemm_layer.toml")));

}  // namespace
}  // namespace monet
