// `monet inspect`: table, JSON, batch override, frontend parameters, TOML emission, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

std::string model(const char* name) { return "'" + (test::source_dir() / "workloads/onnx" / name).string() + "'"; }

TEST(Inspect, TableWithTotals) {
  const auto r = test::monet("inspect " + model("resnet18.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("/conv1/Conv"));
  EXPECT_THAT(r.out, HasSubstr("118,013,952"));  // the stem's MACs
  EXPECT_THAT(r.out, HasSubstr("B=1 K=64 C=3 OY=112 OX=112 FY=7 FX=7"));
  EXPECT_THAT(r.out, HasSubstr("forward MACs      1,814,073,344"));
  EXPECT_THAT(r.out, HasSubstr("parameters        11,689,512 trainable, 0 frozen"));
}

TEST(Inspect, SymbolicDimensionsBoundFromTheCommandLineOrAnExperiment) {
  const std::string file = "'" + (test::source_dir() / "tests/data/bert_style_dynamic.onnx").string() + "'";
  const auto bound = test::monet("inspect " + file + " --json --set workload.dims.batch=1 --set dims.sequence=128");
  ASSERT_EQ(bound.exit_code, 0) << bound.out;
  EXPECT_EQ(json::parse(bound.out)["forward_macs"].get<long>(), 704'643'072L);  // as the fixed 1 x 128 export
  const auto missing = test::monet("inspect " + file + " --set workload.dims.batch=1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, (test::source_dir() / "tests/data/bert_style_dynamic.onnx").string() +
                             ": error: axis 1 of graph input 'tokens' is the symbolic dimension 'sequence'; bind it "
                             "with [workload] dims.sequence = N (--set workload.dims.sequence=N)\n");
  test::ScratchDir dir;
  const auto experiment = dir.write("e.toml", "[experiment]\nname = \"dyn\"\n[workload]\nfile = " + file +
                                                  "\ndims = { batch = 1, seq = 64 }\n[architecture]\nfile = '" +
                                                  (test::source_dir() / "architectures/dual_core.toml").string() + "'\n");
  const auto wrong = test::monet("run " + test::q(experiment) + " --out " + test::q(dir.path() / "out"));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.out, HasSubstr(experiment.string() + ":5:8: error: dims: 'seq' is not a symbolic dimension"));
}

TEST(Inspect, JsonWithBatchAndFrontendParameters) {
  const auto r = test::monet("inspect " + model("gpt2_monet_small.onnx") + " --json --batch 2 --set 'frozen=[\"head.*\"]'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["workload"], "gpt2_monet_small");
  EXPECT_EQ(j["params_trainable"].get<long>(), 6'692'608 - 2'052'000);
  EXPECT_EQ(j["params_frozen"].get<long>(), 2'052'000);
  EXPECT_EQ(j["params_buffers"].get<long>(), 65'536);
  EXPECT_EQ(j["forward_macs"].get<long>(), 2 * 3'309'305'856L);
  EXPECT_EQ(j["inputs"][0]["shape"], json::array({2, 256}));
  const json& ops = j["operators"];
  ASSERT_FALSE(ops.empty());
  for (const char* key : {"name", "kind", "type", "dims", "macs", "params", "output_shape", "output_bytes"}) {
    EXPECT_TRUE(ops[0].contains(key)) << key;
  }
}

TEST(Inspect, EmittedTomlInspectsToIdenticalNumbers) {
  test::ScratchDir dir;
  const auto toml = dir.path() / "mobilenet.toml";
  const auto a = test::monet("inspect " + model("mobilenet_v2.onnx") + " --json --emit-toml '" + toml.string() + "'");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const auto b = test::monet("inspect '" + toml.string() + "' --json");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  json ja = json::parse(a.out);
  json jb = json::parse(b.out);
  ja.erase("file");
  jb.erase("file");
  EXPECT_EQ(ja, jb);
}

TEST(Inspect, Errors) {
  test::ScratchDir dir;
  const auto bad = test::monet("inspect " + model("resnet18.onnx") + " --set unknown_op=passthrough");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("unknown key 'workload.unknown_op' (did you mean 'unknown_ops'?)"));
  const auto missing = test::monet("inspect '" + (dir.path() / "nope.onnx").string() + "'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.out, HasSubstr("nope.onnx: error: file not found"));
  const auto ext = test::monet("inspect '" + dir.write("model.pb", "x").string() + "'");
  EXPECT_EQ(ext.exit_code, 2);
  EXPECT_THAT(ext.out, HasSubstr("no workload frontend reads '.pb' files; frontends: "));
}

TEST(Inspect, OnnxModelRunsFromAnExperiment) {
  test::ScratchDir dir;
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/resnet18_inference.toml").string() +
                             "' --out '" + (dir.path() / "out").string() + "' --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  EXPECT_EQ(j["workload"]["macs"].get<long>(), 1'814'073'344L);
  EXPECT_EQ(j["computation_node_count"].get<std::size_t>(), 69u);
  EXPECT_EQ(test::read_csv(dir.path() / "out/schedule.csv").size(), 69u);
  EXPECT_GT(j["latency_cycles"].get<long>(), 1'814'073'344L / 64);  // at least the conv work on 64 PEs
}

}  // namespace
}  // namespace monet
