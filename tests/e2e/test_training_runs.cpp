// Training from the command line: an experiment file with [training] and [precision], and inspect --training.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

TEST(TrainingRuns, ResNet18CifarWithAdamFromAnExperiment) {
  test::ScratchDir dir;
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/resnet18_cifar_training.toml").string() +
                             "' --out '" + (dir.path() / "out").string() + "' --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("(seed 1, training)"));
  EXPECT_THAT(r.out, HasSubstr("11,173,962 parameters"));
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  const json& t = j["training"];
  EXPECT_EQ(t["macs_forward"].get<long>(), 2'221'690'880L);
  EXPECT_EQ(t["macs_backward_dw"].get<long>(), 2'221'690'880L);
  EXPECT_EQ(t["macs_backward_dx"].get<long>(), 2'221'690'880L - 4 * 1'769'472L);  // all but the stem
  EXPECT_EQ(t["optimizer_state_bytes"].get<long>(), 2L * 11'173'962 * 4);
  EXPECT_EQ(t["param_bytes"].get<long>(), 11'173'962L * 4);
  EXPECT_GT(t["saved_activation_bytes"].get<long>(), 0);
  EXPECT_FALSE(t["saved_by_layer"].empty());
  // The resolved configuration keeps the training and precision settings.
  const std::string resolved = test::read_file(dir.path() / "out/resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("[training.optimizer]\nplugin = \"adam\""));
  EXPECT_THAT(resolved, HasSubstr("[precision]\npreset = \"fp32\""));
  const auto again = test::monet("run '" + (dir.path() / "out/resolved.toml").string() + "' --out '" +
                                 (dir.path() / "again").string() + "' --log-level warn");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(j, json::parse(test::read_file(dir.path() / "again/results.json")));
}

TEST(TrainingRuns, EveryTrainingOperatorGetsALoopnestMapping) {
  // Forward, loss, dX, dW and Adam operators of ResNet-18, each searched by the loopnest model on tpu_like.
  test::ScratchDir dir;
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/resnet18_training_tpu_like.toml").string() +
                             "' --out '" + (dir.path() / "out").string() + "' --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  const double macs = j["training"]["macs_total"].get<double>();
  EXPECT_EQ(macs, 6'657'994'752.0);
  // Bounds that hold for any mapping: the MACs at 0.04 pJ each, and 1024 MACs per cycle.
  EXPECT_GE(j["energy_breakdown"]["mac_energy_pj"].get<double>(), macs * 0.04 * (1 - 1e-12));
  EXPECT_GT(j["energy_pj"].get<double>(), j["energy_breakdown"]["mac_energy_pj"].get<double>());
  EXPECT_GE(j["latency_cycles"].get<double>(), macs / 1024);
  std::size_t costed = 0;
  for (const test::CsvRow& cn : test::read_csv(dir.path() / "out/schedule.csv")) {
    if (cn["operator"].find("Conv/dW") != std::string::npos) {
      EXPECT_FALSE(cn["mapping"].empty()) << cn["name"];
      ++costed;
    }
  }
  EXPECT_EQ(costed, 20u);  // every convolution's weight gradient
}

TEST(TrainingRuns, NewModelsOnTheDualCoreAndTheLoopnestCore) {
  test::ScratchDir dir;
  const auto run = [&](const std::string& experiment, const std::string& extra, const std::string& out) {
    const auto r = test::monet("run '" + (test::source_dir() / "experiments" / experiment).string() + "' --out '" +
                               (dir.path() / out).string() + "' --log-level warn" + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(test::read_file(dir.path() / out / "results.json"));
  };
  // U-Net on the dual core: every layer but the stem gets a dX; transposed convolutions run on the systolic core.
  const json unet = run("unet_training_dual_core.toml", "", "unet");
  EXPECT_EQ(unet["training"]["macs_forward"].get<long>(), 3'019'374'592L);
  EXPECT_EQ(unet["training"]["macs_backward_dw"].get<long>(), 3'019'374'592L);
  EXPECT_EQ(unet["training"]["macs_backward_dx"].get<long>(), 3'019'374'592L - 3L * 32 * 128 * 128 * 9);
  // The loopnest model maps einsum contractions (LLaMA-style attention) and transposed convolutions (U-Net),
  // forward and backward; any mapping does at most 1024 MACs a cycle on tpu_like.
  const json llama = run("llama_style_training_tpu_like.toml", "", "llama");
  const json unet_tpu = run("llama_style_training_tpu_like.toml", " --set 'workload.file=\"../workloads/onnx/unet.onnx\"'",
                            "unet_tpu");
  for (const auto& [j, out, type, expected] : {std::tuple{&llama, "llama", "Einsum", 24u},
                                               std::tuple{&unet_tpu, "unet_tpu", "ConvTranspose", 12u}}) {
    std::size_t mapped = 0;
    for (const test::CsvRow& cn : test::read_csv(dir.path() / out / "schedule.csv")) {
      if (cn["operator"].find(type) == std::string::npos || cn["kind"] == "reduction") continue;
      EXPECT_FALSE(cn["mapping"].empty()) << cn["name"];
      ++mapped;
    }
    // 8 einsums and the dX of both their operands; 4 transposed convolutions with dX and dW (bias sums aside)
    EXPECT_EQ(mapped, expected) << type;
    EXPECT_GE((*j)["latency_cycles"].get<double>(), (*j)["training"]["macs_total"].get<double>() / 1024);
  }
}

TEST(TrainingRuns, InspectTrainingJson) {
  const auto r = test::monet("inspect '" + (test::source_dir() / "workloads/onnx/resnet18.onnx").string() +
                             "' --training --optimizer adam --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["forward_macs"].get<long>(), 1'814'073'344L);  // still the forward pass
  const json& t = j["training"];
  for (const char* key : {"macs_forward", "macs_backward_dx", "macs_backward_dw", "saved_activation_bytes",
                          "param_bytes", "grad_bytes", "optimizer_state_bytes"}) {
    EXPECT_TRUE(t.contains(key)) << key;
  }
  EXPECT_EQ(t["optimizer_state_bytes"].get<long>(), 93'516'096L);
  EXPECT_EQ(j["operators"][0]["phase"], "forward");
  const auto text = test::monet("inspect '" + (test::source_dir() / "workloads/onnx/resnet18.onnx").string() +
                                "' --training --precision mixed_bf16 --micro-batches 2");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("backward dW"));
  EXPECT_THAT(text.out, HasSubstr("master weights                    46,758,048 bytes"));
  const auto bad = test::monet("inspect '" + (test::source_dir() / "workloads/onnx/resnet18.onnx").string() +
                               "' --training --optimizer adamm");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("no optimizer plugin named 'adamm' (did you mean 'adam'"));
}

TEST(TrainingRuns, FusedForwardStackGetsAFusedBackwardStack) {
  // The stem and layer1 of ResNet-18-CIFAR fused on the quad core: their backward operators (dX, dW of the same
  // 17 operators) form a stack of their own, tiled and run depth first like the forward one.
  test::ScratchDir dir;
  const auto r = test::monet("run '" + (test::source_dir() / "experiments/resnet18_cifar_training_quad_core.toml").string() +
                             "' --out '" + (dir.path() / "out").string() + "' --log-level warn --set fusion.plugin=fused_stacks" +
                             " --set 'fusion.stacks=[\"/conv1/Conv../layer1/layer1.1/relu_1/Relu\"]'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  std::map<int, std::set<std::string>> ops;
  std::map<int, std::set<std::string>> phases;
  std::map<std::string, int> tiles;
  for (const test::CsvRow& cn : test::read_csv(dir.path() / "out/schedule.csv")) {
    const auto stack = static_cast<int>(cn.integer("stack"));
    ops[stack].insert(cn["operator"]);
    phases[stack].insert(cn["phase"]);
    ++tiles[cn["operator"]];
  }
  EXPECT_EQ(ops[0].size(), 17u);
  EXPECT_EQ(phases[0], std::set<std::string>{"forward"});
  int backward = -1;
  for (const auto& [stack, names] : ops) {
    if (names.count("/conv1/Conv/dW")) backward = stack;
  }
  ASSERT_GE(backward, 0);
  EXPECT_TRUE(ops[backward].count("/layer1/layer1.1/relu_1/Relu/d1"));
  EXPECT_FALSE(phases[backward].count("forward"));
  // Tiled by output rows (32) and split over the four cores: more than one CN per core for a fused convolution.
  EXPECT_GT(tiles["/layer1/layer1.0/conv1/Conv"], 4);
  EXPECT_EQ(tiles["/layer2/layer2.0/conv1/Conv"], 4);  // outside the stack: the inter-core split only
  EXPECT_GT(tiles["/layer1/layer1.0/conv1/Conv/dX"], 4);
  EXPECT_FALSE(j["over_capacity"].get<bool>());
}

}  // namespace
}  // namespace monet
