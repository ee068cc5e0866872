// Issue #17: every memory has a capacity that is checked, a streaming core is not empty, a DRAM level inside a
// core is the off-chip memory (each access counted once), links cost energy; --set/--unset reach the
// accelerator file and replaced plugins leave their parameters behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace monet {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::q;
using ::testing::HasSubstr;

json results_of(const fs::path& out) { return json::parse(test::read_file(out / "results.json")); }

TEST(Capacity, OffChipMemoryOverCapacityIsAnErrorUnlessAllowed) {
  // A GPT-2 124M training step with Adam needs ~2 GB of DRAM (weights, gradients, two Adam states, saved
  // activations at T = 1024); dual_core has 1 GiB.
  test::ScratchDir dir;
  const fs::path src = test::source_dir();
  const auto exp = dir.write("e.toml", "[workload]\nfile = " + q(src / "workloads/onnx/gpt2_small.onnx") +
                                           "\n[training]\nmode = \"training\"\n[training.optimizer]\nplugin = \"adam\"\n"
                                           "[architecture]\nfile = " + q(src / "architectures/dual_core.toml") + "\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("off-chip memory 'dram' holds 1.969 GB at its peak but has 1.074 GB"));
  EXPECT_THAT(r.out, HasSubstr("allow_over_capacity"));
  EXPECT_FALSE(fs::exists(dir.path() / "out"));  // nothing written

  const auto allowed = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") +
                                   " --set schedule.allow_over_capacity=true --log-level warn");
  ASSERT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_THAT(allowed.out, HasSubstr("INFEASIBLE"));
  const json j = results_of(dir.path() / "out");
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_TRUE(j["offchip_over_capacity"].get<bool>());
  EXPECT_EQ(j["offchip_capacity_bytes"].get<std::int64_t>(), 1073741824);
  EXPECT_GT(j["peak_offchip_bytes"].get<std::int64_t>(), j["offchip_capacity_bytes"].get<std::int64_t>());
  // Relative excess: (1.969 - 1.074) / 1.074.
  EXPECT_NEAR(j["capacity_violation"].get<double>(), 0.834, 0.001);
}

TEST(Capacity, StreamingCoresHoldTheTilesInFlight) {
  // Layer by layer with the roofline model, every operand of ResNet-18 streams through both cores of dual_core:
  // their memories hold the tiles in flight, never more than they have.
  test::ScratchDir dir;
  const auto r = test::monet("run " + q(test::source_dir() / "experiments/resnet18_inference.toml") + " --out " +
                             q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json results = results_of(dir.path() / "out");  // named: a temporary would die before the loop body
  for (const json& core : results["architecture"]["cores"]) {
    const auto peak = core["peak_memory_bytes"].get<std::int64_t>();
    EXPECT_GT(peak, 0) << core["name"];
    EXPECT_LE(peak, core["capacity_bytes"].get<std::int64_t>()) << core["name"];
    EXPECT_GT(core["peak_composition"]["streaming_bytes"].get<std::int64_t>(), 0) << core["name"];
  }
}

// A core whose top memory is DRAM (ZigZag's convention), running two ReLUs of 256 fp32 elements (8,192 bits
// each operand). Roofline counts each operand once per level: DRAM reads 8,192 bits of input (1 pJ/bit) and
// writes 8,192 bits of output (2 pJ/bit) per layer: 2 x (8,192 + 16,384) = 49,152 pJ off chip. Nothing is
// transferred into the core: both operands stream over the 0.5 pJ/bit bus, 16,384 bits per layer: 16,384 pJ.
// The register file costs nothing. Each layer: rf port 4 x 8,192 bits / 64 = 512 cycles > 256 / 4 PEs.
const char* kDramCore = R"([core]
name = "dc"
cost_model = "roofline"
op_kinds = ["elementwise"]
[array]
dims = ["D1"]
sizes = [4]
unit_energy_pj = 0
[[memories]]
name = "rf"
size_bits = 1_000_000
read_energy_pj = 0
write_energy_pj = 0
operands = ["I1", "I2", "O"]
served_dims = ["D1"]
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["tl", "fh"], I2 = ["tl", "fh"], O = ["fl", "th"] }
[[memories]]
name = "dram"
size_bits = 1_000_000_000
read_energy_pj = 64
write_energy_pj = 128
operands = ["I1", "I2", "O"]
served_dims = ["D1"]
offchip = true
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["tl"], I2 = ["tl"], O = ["fl"] }
)";

const char* kDramAccelerator = R"([accelerator]
name = "one"
[[cores]]
name = "c"
file = "dc.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 1
write_energy_pj_per_bit = 2
bandwidth_bits_per_cycle = 64
[[links]]
name = "bus"
kind = "bus"
endpoints = ["c", "dram"]
bandwidth_bits_per_cycle = 64
energy_pj_per_bit = 0.5
)";

const char* kTwoRelus = R"([workload]
name = "two_relus"
[[inputs]]
name = "x"
shape = [1, 256]
[[layers]]
name = "r1"
op = "relu"
input = "x"
[[layers]]
name = "r2"
op = "relu"
input = "r1"
)";

TEST(Capacity, ADramLevelInsideACoreIsTheOffChipMemoryChargedOnce) {
  test::ScratchDir dir;
  dir.write("dc.toml", kDramCore);
  dir.write("acc.toml", kDramAccelerator);
  dir.write("w.toml", kTwoRelus);
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"w.toml\"\n[architecture]\nfile = \"acc.toml\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = results_of(dir.path() / "out");
  EXPECT_DOUBLE_EQ(j["energy_breakdown"]["offchip_energy_pj"].get<double>(), 49152.0);
  EXPECT_DOUBLE_EQ(j["energy_breakdown"]["link_energy_pj"].get<double>(), 16384.0);
  EXPECT_DOUBLE_EQ(j["energy_breakdown"]["onchip_memory_energy_pj"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["energy_pj"].get<double>(), 65536.0);
  EXPECT_EQ(j["latency_cycles"].get<std::int64_t>(), 1024);
  EXPECT_EQ(j["offchip_read_bytes"].get<std::int64_t>(), 2048);
  EXPECT_EQ(j["offchip_write_bytes"].get<std::int64_t>(), 2048);
  // The core holds the tiles in flight (input and output, 1 kB each) in its register file, not the DRAM.
  EXPECT_EQ(j["architecture"]["cores"][0]["capacity_bytes"].get<std::int64_t>(), 125000);
  EXPECT_EQ(j["architecture"]["cores"][0]["peak_memory_bytes"].get<std::int64_t>(), 2048);

  // One memory, one set of numbers: a DRAM level that disagrees with [offchip] is an error at the level.
  dir.write("dc.toml", std::string(kDramCore).replace(std::string(kDramCore).find("read_energy_pj = 64"), 19,
                                                      "read_energy_pj = 65"));
  const auto bad = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out2") + " --log-level warn");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("dc.toml:21:1: error: memory 'dram' of core 'dc' is the off-chip memory"));
}

TEST(Capacity, LinksOfMonetsMultiCoreArchitecturesCostEnergy) {
  // Every link of the shipped accelerators has a cited per-bit energy; only the Stream reference experiments
  // set them to 0 (Stream's choice), through [architecture.set].
  for (const char* arch : {"dual_core.toml", "tpu_like_quad_core.toml", "tpu_like_single.toml"}) {
    const std::string text = test::read_file(test::source_dir() / "architectures" / arch);
    EXPECT_THAT(text, ::testing::Not(HasSubstr("energy_pj_per_bit = 0.0 "))) << arch;
    EXPECT_THAT(text, ::testing::Not(HasSubstr("energy_pj_per_bit = 0\n"))) << arch;
  }
  test::ScratchDir dir;
  const auto r = test::monet("run " + q(test::source_dir() / "experiments/gpt2_tiny_fused_quad_core.toml") + " --out " +
                             q(dir.path() / "gpt2") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(results_of(dir.path() / "gpt2")["energy_breakdown"]["link_energy_pj"].get<double>(), 0.0);
  const auto s = test::monet("run " + q(test::source_dir() / "experiments/reference/stream_resnet18_lbl.toml") +
                             " --out " + q(dir.path() / "lbl") + " --log-level warn");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_EQ(results_of(dir.path() / "lbl")["energy_breakdown"]["link_energy_pj"].get<double>(), 0.0);
  EXPECT_THAT(test::read_file(dir.path() / "lbl/resolved.toml"), HasSubstr("\"links.*.energy_pj_per_bit\" = 0.0"));
}

TEST(Overrides, SetAndUnsetReachTheAcceleratorFile) {
  test::ScratchDir dir;
  const fs::path quick = test::source_dir() / "experiments/tiny_cnn_dual_core.toml";
  // A smaller DRAM than the run needs: the override reached the accelerator file.
  const auto small = test::monet("run " + q(quick) + " --out " + q(dir.path() / "a") +
                                 " --set architecture.offchip.size_bits=1000 --log-level warn");
  EXPECT_EQ(small.exit_code, 2) << small.out;
  EXPECT_THAT(small.out, HasSubstr("off-chip memory 'dram' holds 5.674 kB at its peak but has 125 B"));
  // Link energies by name and for all links; the result and resolved.toml show them.
  const auto zero = test::monet("run " + q(quick) + " --out " + q(dir.path() / "b") +
                                " --set 'architecture.links.*.energy_pj_per_bit=0' --log-level warn");
  ASSERT_EQ(zero.exit_code, 0) << zero.out;
  EXPECT_EQ(results_of(dir.path() / "b")["energy_breakdown"]["link_energy_pj"].get<double>(), 0.0);
  EXPECT_THAT(test::read_file(dir.path() / "b/resolved.toml"),
              HasSubstr("[architecture.set]\n\"links.*.energy_pj_per_bit\" = 0\n"));
  const auto again = test::monet("run " + q(dir.path() / "b/resolved.toml") + " --out " + q(dir.path() / "c") +
                                 " --log-level warn");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(test::read_file(dir.path() / "b/results.json").size(), test::read_file(dir.path() / "c/results.json").size());
  // A core file through its instance: a smaller SRAM on core1 only.
  const auto core = test::monet("run " + q(quick) + " --out " + q(dir.path() / "d") +
                                " --set architecture.cores.core1.memories.sram_64KB.size_bits=8192 --log-level warn");
  ASSERT_EQ(core.exit_code, 0) << core.out;
  EXPECT_EQ(results_of(dir.path() / "d")["architecture"]["cores"][1]["capacity_bytes"].get<std::int64_t>(), 1024);
  // Unknown entries and keys are located at the override, with the names there are.
  const auto bad = test::monet("run " + q(quick) + " --set architecture.links.buss.energy_pj_per_bit=0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("--set architecture.links.buss.energy_pj_per_bit=0: error: no [[links]] entry named "
                                 "'buss' (did you mean 'bus'?)"));
  const auto bad_value = test::monet("run " + q(quick) + " --set architecture.offchip.size_bits=-5");
  EXPECT_EQ(bad_value.exit_code, 2);
  EXPECT_THAT(bad_value.out, HasSubstr("--set architecture.offchip.size_bits=-5:1:9: error:"));
  // --unset removes a key of the experiment; a missing key is an error.
  const auto unset = test::monet("run " + q(quick) + " --out " + q(dir.path() / "e") +
                                 " --unset allocation.kind.conv --log-level warn");
  EXPECT_EQ(unset.exit_code, 0) << unset.out;
  const auto missing = test::monet("run " + q(quick) + " --unset allocation.kind.pooling");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.out, HasSubstr("--unset allocation.kind.pooling: error: the experiment does not set 'allocation.kind.pooling'"));
}

TEST(Overrides, AReplacedPluginLeavesItsParametersBehind) {
  // gpt2_tiny_fused_quad_core sets fused_stacks' auto_stacks and tiling rules; layer_by_layer has no such keys.
  test::ScratchDir dir;
  const fs::path exp = test::source_dir() / "experiments/gpt2_tiny_fused_quad_core.toml";
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "a") + " --set fusion.plugin=layer_by_layer");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("of the replaced plugin do(es) not apply to 'layer_by_layer'"));
  EXPECT_THAT(test::read_file(dir.path() / "a/resolved.toml"), HasSubstr("[fusion]\nplugin = \"layer_by_layer\""));
  // A key given on the command line for the new plugin is still checked.
  const auto typo = test::monet("run " + q(exp) + " --set fusion.plugin=layer_by_layer --set fusion.auto_stack=true");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.out, HasSubstr("auto_stack"));
}

}  // namespace
}  // namespace monet
