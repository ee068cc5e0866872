// The `table` and `roofline` cost models and `monet cost` options, through the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_json.hpp"
#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

using test::q;

using test::cost_json;

/// Two fully connected layers (K = 64 and K = 96) and a ReLU, int8.
const char* kTwoGemms =
    "[workload]\nname = \"g\"\ndtype = \"int8\"\n[[inputs]]\nname = \"x\"\nshape = [1, 32]\n"
    "[[layers]]\nname = \"fc1\"\nop = \"linear\"\ninput = \"x\"\nout_features = 64\nbias = false\n"
    "[[layers]]\nname = \"relu\"\nop = \"relu\"\ninput = \"fc1\"\n"
    "[[layers]]\nname = \"fc2\"\nop = \"linear\"\ninput = \"relu\"\nout_features = 96\nbias = false\n";

/// A measured core: a copy of simd_16 whose costs come from a table.
std::string table_core(const fs::path& csv, const std::string& extra) {
  std::string text = test::read_file(test::source_dir() / "architectures/cores/simd_16.toml");
  text.replace(text.find("cost_model = \"roofline\""), 23, "cost_model = \"table\"");
  const auto kinds = text.find("op_kinds");  // a measured core runs whatever its table lists
  text.erase(kinds, text.find('\n', kinds) - kinds);
  return text + "\n[cost_model_params]\nfile = \"" + csv.string() + "\"\n" + extra;
}

TEST(TableModel, ExactRowsReproduceTheCharacterisedModel) {
  // tpu_like_table.csv was written by `monet cost --emit-table` from the loopnest model: the table core gives
  // the loopnest numbers back, layer by layer.
  const fs::path src = test::source_dir();
  const json model = cost_json(q(src / "workloads/onnx/resnet18.onnx") + " --core " +
                               q(src / "architectures/cores/tpu_like.toml") + " --precision int8_stream");
  const json table = cost_json(q(src / "workloads/onnx/resnet18.onnx") + " --core " +
                               q(src / "architectures/cores/tpu_like_table.toml") + " --precision int8_stream");
  ASSERT_EQ(model["layers"].size(), table["layers"].size());
  for (std::size_t i = 0; i < model["layers"].size(); ++i) {
    EXPECT_DOUBLE_EQ(table["layers"][i]["energy_pj"].get<double>(), model["layers"][i]["energy_pj"].get<double>());
    EXPECT_DOUBLE_EQ(table["layers"][i]["latency_cycles"].get<double>(), model["layers"][i]["latency_cycles"].get<double>());
    // The table carries the energy split too: MAC and memory parts as the model attributed them.
    EXPECT_DOUBLE_EQ(table["layers"][i]["mac_energy_pj"].get<double>(), model["layers"][i]["mac_energy_pj"].get<double>());
    EXPECT_GT(table["layers"][i]["mac_energy_pj"].get<double>(), 0);
  }
  EXPECT_EQ(table["cost_model"], "table");
}

TEST(TableModel, EnergyIsSplitIntoMacAndMemory) {
  test::ScratchDir dir;
  const auto w = dir.write("w.toml", kTwoGemms);
  auto layers = [&](const std::string& csv_text) {
    const auto csv = dir.write("m.csv", csv_text);
    const auto core = dir.write("c.toml", table_core(csv, "interpolate = \"linear\"\ndimension = \"K\"\n"));
    const auto r = test::monet("--log-level error cost " + q(w) + " --core " + q(core) + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out)["layers"];
  };
  // Totals only: the MAC part is what simd_16's array spends (0.25 pJ per operation), the rest is memory.
  const json total = layers("kind,type,D,K,C,cycles,energy_pj\ngemm,Gemm,1,64,32,100,1000\ngemm,Gemm,1,64,64,200,2000\n"
                            "gemm,Gemm,1,128,64,400,4000\nelementwise,,,,,7,70\n");
  EXPECT_DOUBLE_EQ(total[0]["mac_energy_pj"].get<double>(), 32 * 64 * 0.25);  // fc1: 2,048 MACs
  EXPECT_DOUBLE_EQ(total[0]["memory_energy_pj"].get<double>(), 1000 - 512);
  EXPECT_DOUBLE_EQ(total[1]["mac_energy_pj"].get<double>(), 64 * 0.25);  // relu: 64 operations
  EXPECT_DOUBLE_EQ(total[2]["mac_energy_pj"].get<double>(), 64 * 96 * 0.25);  // fc2 (interpolated): 6,144 MACs
  // Measured parts win; interpolated between rows that both have them, else the rule applies.
  const json parts = layers("kind,type,D,K,C,cycles,energy_pj,mac_energy_pj,offchip_energy_pj\n"
                            "gemm,Gemm,1,64,32,100,1000,300,\ngemm,Gemm,1,64,64,200,2000,600,100\n"
                            "gemm,Gemm,1,128,64,400,4000,1000,200\nelementwise,,,,,7,70,,\n");
  EXPECT_DOUBLE_EQ(parts[0]["mac_energy_pj"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(parts[0]["memory_energy_pj"].get<double>(), 700);
  EXPECT_DOUBLE_EQ(parts[1]["mac_energy_pj"].get<double>(), 16);
  EXPECT_DOUBLE_EQ(parts[2]["mac_energy_pj"].get<double>(), 800);  // halfway from 600 to 1000
  // Parts larger than the total are a located error.
  const auto csv = dir.write("bad.csv", "kind,K,cycles,energy_pj,mac_energy_pj\ngemm,64,10,100,150\n");
  const auto core = dir.write("c.toml", table_core(csv, ""));
  const auto r = test::monet("cost " + q(w) + " --core " + q(core));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(csv.string() + ":2:1: error: mac_energy_pj + offchip_energy_pj (150) exceed energy_pj (100)"));
}

TEST(TableModel, NearestLinearFallbackAndMisses) {
  test::ScratchDir dir;
  const auto w = dir.write("w.toml", kTwoGemms);
  // Rows for K = 64 and K = 128 (the fc layers have D=1, C=32 or 64).
  const auto csv = dir.write("m.csv",
                             "# measured\nkind,type,D,K,C,cycles,energy_pj\ngemm,Gemm,1,64,32,100,1000\n"
                             "gemm,Gemm,1,64,64,200,2000\ngemm,Gemm,1,128,64,400,4000\nelementwise,,,,,7,70\n");
  auto run = [&](const std::string& extra) {
    const auto core = dir.write("c.toml", table_core(csv, extra));
    return test::monet("--log-level error cost " + q(w) + " --core " + q(core) + " --json");
  };
  // fc1 (K 64, C 32) and relu are exact rows; fc2 (K 96, C 64) lies between the K = 64 and K = 128 rows.
  auto r = run("interpolate = \"linear\"\ndimension = \"K\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layers"][0]["latency_cycles"].get<double>(), 100);
  EXPECT_EQ(j["layers"][1]["energy_pj"].get<double>(), 70);
  EXPECT_EQ(j["layers"][2]["latency_cycles"].get<double>(), 300);  // halfway from 200 to 400
  EXPECT_EQ(j["layers"][2]["energy_pj"].get<double>(), 3000);
  r = run("interpolate = \"nearest\"\ndimension = \"K\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["layers"][2]["latency_cycles"].get<double>(), 200);  // tie 64/128: the smaller
  // No interpolation and no fallback: a clear error naming the table and the operator.
  r = run("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(csv.string() + ": error: no row for operator 'fc2' (gemm Gemm, C=64 D=1 K=96) and no fallback model"));
  r = run("fallback = \"roofline\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto text = test::monet("cost " + q(w) + " --core " + q(dir.path() / "c.toml"));
  EXPECT_THAT(text.out, HasSubstr("not in m.csv: roofline (roofline: 6144 ops on 16 PEs"));
}

TEST(TableModel, BadTablesAndParametersAreUserErrors) {
  test::ScratchDir dir;
  const auto w = dir.write("w.toml", kTwoGemms);
  auto run = [&](const std::string& csv_text, const std::string& extra) {
    const auto csv = dir.write("m.csv", csv_text);
    const auto core = dir.write("c.toml", table_core(csv, extra));
    return std::make_pair(test::monet("cost " + q(w) + " --core " + q(core)), csv);
  };
  auto [r1, csv1] = run("kind,K,cycles,energy_pj\ngemm,64,10,abc\n", "");
  EXPECT_EQ(r1.exit_code, 2);
  EXPECT_THAT(r1.out, HasSubstr(csv1.string() + ":2:12: error: energy_pj: expected a non-negative number, got 'abc'"));
  auto [r2, csv2] = run("kind,K,cycles\ngemm,64,10\n", "");
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_THAT(r2.out, HasSubstr(csv2.string() + ":1:1: error: the header needs a 'energy_pj' column"));
  auto [r3, csv3] = run("kind,K,cycles,energy_pj\ngemmm,64,10,1\n", "");
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_THAT(r3.out, HasSubstr(":2:1: error: unknown operator kind 'gemmm' (did you mean 'gemm'?)"));
  auto [r4, csv4] = run("kind,K,cycles,energy_pj\ngemm,64,10,1\n", "interpolate = \"linear\"\n");
  EXPECT_EQ(r4.exit_code, 2);
  EXPECT_THAT(r4.out, HasSubstr("interpolate = \"linear\" needs `dimension`"));
  auto [r5, csv5] = run("kind,K,cycles,energy_pj\ngemm,64,10,1\n", "fallback = \"roofline2\"\n");
  EXPECT_EQ(r5.exit_code, 2);
  EXPECT_THAT(r5.out, HasSubstr("no cost_model plugin named 'roofline2' (did you mean 'roofline'?)"));
  auto [r6, csv6] = run("kind,K,cycles,energy_pj\ngemm,64,10,1\n", "colour = 3\n");
  EXPECT_EQ(r6.exit_code, 2);
  EXPECT_THAT(r6.out, HasSubstr("c.toml:"));
  EXPECT_THAT(r6.out, HasSubstr("unknown key 'cost_model_params.colour'"));
  const auto missing = dir.write("c2.toml", table_core(dir.path() / "nope.csv", ""));
  const auto r7 = test::monet("cost " + q(w) + " --core " + q(missing));
  EXPECT_EQ(r7.exit_code, 2);
  EXPECT_THAT(r7.out, HasSubstr("c2.toml:"));
  EXPECT_THAT(r7.out, HasSubstr("file not found"));
}

TEST(TableModel, AMeasuredCoreInAnExperiment) {
  // The core file carries its table ([cost_model_params]); the experiment needs nothing else.
  test::ScratchDir dir;
  const fs::path src = test::source_dir();
  const auto acc = dir.write("acc.toml", "[accelerator]\nname = \"m\"\nfrequency_hz = 1e9\n[[cores]]\nname = \"t\"\nfile = \"" +
                                             (src / "architectures/cores/tpu_like_table.toml").string() +
                                             "\"\n[offchip]\nname = \"dram\"\nsize_bits = 10_000_000_000\nread_energy_pj_per_bit = 10.9375\n"
                                             "write_energy_pj_per_bit = 11.71875\nbandwidth_bits_per_cycle = 64\n[[links]]\nname = \"bus\"\n"
                                             "kind = \"bus\"\nendpoints = [\"t\", \"dram\"]\nbandwidth_bits_per_cycle = 64\n"
                                             "energy_pj_per_bit = 0\n");
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"" + (src / "workloads/onnx/resnet18.onnx").string() +
                                           "\"\n[precision]\npreset = \"int8_stream\"\n[architecture]\nfile = \"acc.toml\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  EXPECT_EQ(j["architecture"]["cores"][0]["cost_model"], "table");
  EXPECT_THAT(test::read_csv(dir.path() / "out/schedule.csv")[0]["mapping"], HasSubstr("table row"));
  const std::string resolved = test::read_file(dir.path() / "out/resolved.toml");
  EXPECT_THAT(resolved, ::testing::Not(HasSubstr("[cost_model.table")));  // the core file keeps its table
  // The summary attributes the table's energy to the array and the memories as for the other models: its MAC
  // energy is the layers' (whole layers on one core: the same queries as `monet cost`).
  const json study = cost_json(q(src / "workloads/onnx/resnet18.onnx") + " --core " +
                               q(src / "architectures/cores/tpu_like_table.toml") + " --precision int8_stream");
  double mac = 0;
  for (const json& l : study["layers"]) mac += l["mac_energy_pj"].get<double>();
  EXPECT_GT(mac, 0);
  EXPECT_NEAR(j["energy_breakdown"]["mac_energy_pj"].get<double>(), mac, 1e-9 * mac);
}

TEST(TableModel, ChosenByAnExperiment) {
  // [cost_model] plugin = "table" with its CSV (`file` is the table's parameter, not a kernel key) on a core whose
  // own model is loopnest.
  test::ScratchDir dir;
  const fs::path src = test::source_dir();
  const auto exp = dir.write("e.toml", "[workload]\nfile = " + q(src / "workloads/onnx/resnet18.onnx") +
                                           "\n[precision]\npreset = \"int8_stream\"\n[architecture]\nfile = " +
                                           q(src / "architectures/tpu_like_single.toml") +
                                           "\n[cost_model]\nplugin = \"table\"\nfile = " +
                                           q(src / "architectures/cores/tpu_like_table.csv") + "\nfallback = \"roofline\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(test::read_file(dir.path() / "out/results.json"));
  EXPECT_EQ(j["architecture"]["cores"][0]["cost_model"], "table");
  EXPECT_THAT(test::read_csv(dir.path() / "out/schedule.csv")[0]["mapping"], HasSubstr("table row"));
  // resolved.toml keeps the table, relative to the output folder, and reproduces the run.
  const std::string resolved = test::read_file(dir.path() / "out/resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("plugin = \"table\"\nfile = "));
  const auto again = test::monet("run " + q(dir.path() / "out/resolved.toml") + " --out " + q(dir.path() / "again") +
                                 " --log-level warn");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "again/results.json"))["energy_pj"], j["energy_pj"]);

  // Without its CSV the table model cannot run: a located error, not an internal one.
  const auto no_file = dir.write("n.toml", "[workload]\nfile = " + q(src / "workloads/tiny_cnn.toml") +
                                               "\n[architecture]\nfile = " + q(src / "architectures/tpu_like_single.toml") +
                                               "\n[cost_model]\nplugin = \"table\"\n");
  const auto r2 = test::monet("validate " + q(no_file));
  EXPECT_EQ(r2.exit_code, 2) << r2.out;
  EXPECT_THAT(r2.out, HasSubstr("n.toml:"));
  EXPECT_THAT(r2.out, HasSubstr("parameter 'file' is required"));
}

TEST(TableModel, AnExperimentOverridesSingleKeysOfTheCoresParameters) {
  // tpu_like_table.toml's [cost_model_params] name its CSV and fall back to roofline; the experiment changes the
  // fallback only: the CSV still comes from the core file.
  test::ScratchDir dir;
  const fs::path src = test::source_dir();
  std::string acc = test::read_file(src / "architectures/tpu_like_single.toml");
  acc.replace(acc.find("cores/tpu_like.toml"), 19, (src / "architectures/cores/tpu_like_table.toml").string());
  dir.write("acc.toml", acc);
  const std::string base = "[workload]\nfile = " + q(src / "workloads/tiny_cnn.toml") +
                           "\n[precision]\npreset = \"int8_stream\"\n[architecture]\nfile = \"acc.toml\"\n";
  const auto own = dir.write("own.toml", base);
  const auto changed = dir.write("changed.toml", base + "[cost_model.table]\nfallback = \"loopnest\"\n");
  const auto r1 = test::monet("run " + q(own) + " --out " + q(dir.path() / "own") + " --log-level warn");
  const auto r2 = test::monet("run " + q(changed) + " --out " + q(dir.path() / "changed") + " --log-level warn");
  ASSERT_EQ(r1.exit_code, 0) << r1.out;
  ASSERT_EQ(r2.exit_code, 0) << r2.out;
  // tiny_cnn's layers are not in the table (made from ResNet-18): the fallback costs them.
  EXPECT_THAT(test::read_csv(dir.path() / "own/schedule.csv")[0]["mapping"], HasSubstr("not in tpu_like_table.csv: roofline"));
  EXPECT_THAT(test::read_csv(dir.path() / "changed/schedule.csv")[0]["mapping"], HasSubstr("not in tpu_like_table.csv: loopnest"));
  // resolved.toml records the one key the experiment set; the rest is read again from the core file.
  const std::string resolved = test::read_file(dir.path() / "changed/resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("[cost_model.table]\nfallback = \"loopnest\"\n"));
  EXPECT_THAT(resolved, ::testing::Not(HasSubstr("tpu_like_table.csv")));
}

TEST(CostCache, OperatorsMappedByNameDoNotShareCosts) {
  // Two identical convolutions; the core maps "b" on an 8x8 corner of its array ([mapping."b"]). The cost cache
  // keys on the loop nest, so it must also tell the mapping entries apart: b is slower than a.
  test::ScratchDir dir;
  const fs::path src = test::source_dir();
  dir.write("core.toml", test::read_file(src / "architectures/cores/tpu_like.toml") +
                             "\n[mapping.\"b\"]\nspatial_mapping = { D1 = { K = 8 }, D2 = { C = 8 } }\n");
  std::string acc = test::read_file(src / "architectures/tpu_like_single.toml");
  acc.replace(acc.find("cores/tpu_like.toml"), 19, "core.toml");
  dir.write("acc.toml", acc);
  dir.write("w.toml", "[workload]\nname = \"w\"\ndtype = \"int8\"\n[[inputs]]\nname = \"x\"\nshape = [1, 32, 8, 8]\n"
                      "[[layers]]\nname = \"a\"\nop = \"conv\"\ninput = \"x\"\nout_channels = 32\nkernel = 3\npadding = 1\n"
                      "bias = false\n[[layers]]\nname = \"b\"\nop = \"conv\"\ninput = \"a\"\nout_channels = 32\nkernel = 3\n"
                      "padding = 1\nbias = false\n");
  const auto exp = dir.write("e.toml", "[workload]\nfile = \"w.toml\"\n[architecture]\nfile = \"acc.toml\"\n");
  const auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "out") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto cns = test::read_csv(dir.path() / "out/schedule.csv");
  ASSERT_EQ(cns.size(), 2u);
  EXPECT_THAT(cns[0]["mapping"], HasSubstr("D1: K 32, D2: C 32"));
  EXPECT_THAT(cns[1]["mapping"], HasSubstr("D1: K 8, D2: C 8"));
  // b: 73,728 MACs on 64 PEs take at least 1,152 cycles; a (the whole array, bound by its DRAM) is faster.
  EXPECT_GE(cns[1].number("latency_cycles"), 1152.0);
  EXPECT_LT(cns[0].number("latency_cycles"), cns[1].number("latency_cycles")) << "b " << cns[1]["latency_cycles"];
}

TEST(RooflineModel, EveryLevelOfTheHierarchyCounts) {
  // tiny_cnn on tpu_like: weights cross dram -> sram? no: I2 lives in rf_128B and dram, so every weight bit is
  // read from dram once and written into the registers once; the bound is the busiest port.
  const fs::path src = test::source_dir();
  const json j = cost_json(q(src / "workloads/tiny_cnn.toml") + " --core " + q(src / "architectures/cores/tpu_like.toml") +
                           " --model roofline");
  const json& conv = j["layers"][0];
  // conv1: 18,432 MACs on 1024 PEs = 18 cycles; compulsory traffic: the input (256 x 8 bits), the weights
  // (288 x 8) and the 16-bit partial sums / 8-bit outputs (512) cross dram's single 64-bit port — at least
  // (2048 + 2304 + 4096) / 64 = 132 cycles, more than the arithmetic.
  EXPECT_GE(conv["latency_cycles"].get<double>(), (2048.0 + 2304.0 + 4096.0) / 64.0);
  EXPECT_EQ(conv["ideal_cycles"].get<double>(), 18);
  // Energy: at least the dram reads of input and weights (700 pJ per 64-bit word).
  EXPECT_GE(conv["memory_energy_pj"].get<double>(), (2048.0 + 2304.0) / 64.0 * 700.0);
}

// A lower memory larger than the one above it (a GPU SM's register file and shared memory): loopnest keeps no more
// of an operand at a level than the operand's next level can hold, alone and with the operands it shares that level
// with. ZigZag's allocator fills the lower memory first and then finds no mapping; compat = zigzag keeps that.
TEST(CostCommand, InclusiveAllocation) {
  test::ScratchDir dir;
  const fs::path core = test::source_dir() / "tests/data/loopnest/inverted_core.toml";
  for (const std::string shape : {"64, 64] out 64", "256, 256] out 256"}) {
    const std::string rows = shape.substr(0, shape.find(','));
    const std::string cols = shape.substr(shape.find(',') + 2, shape.find(']') - shape.find(',') - 2);
    const std::string out = shape.substr(shape.find("out ") + 4);
    const fs::path w = dir.write("g" + rows + ".toml", "[workload]\nname = \"g\"\ndtype = \"bf16\"\n[[inputs]]\nname = \"a\"\n"
                                 "shape = [" + rows + ", " + cols + "]\n[[layers]]\nname = \"gemm\"\nop = \"linear\"\n"
                                 "input = \"a\"\nout_features = " + out + "\nbias = false\npartial_sum_bits = 32\n");
    SCOPED_TRACE(shape);
    const auto r = test::monet("cost " + q(w) + " --core " + q(core) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const json j = json::parse(r.out);
    const json& gemm = j["layers"][0];
    const double macs = gemm["macs"].get<double>();
    EXPECT_EQ(macs, std::stod(rows) * std::stod(cols) * std::stod(out));
    EXPECT_GE(gemm["latency_cycles"].get<double>(), macs / 256);  // the 16 x 16 array's bound
    const auto zz = test::monet("cost " + q(w) + " --core " + q(core) + " --compat zigzag");
    EXPECT_EQ(zz.exit_code, 2) << zz.out;
    EXPECT_THAT(zz.out, HasSubstr("no mapping of operator 'gemm' fits core 'inverted'"));
  }
}

TEST(CostCommand, CompatNeedsAModelWithACompatibilityMode) {
  const fs::path src = test::source_dir();
  const auto r = test::monet("cost " + q(src / "workloads/tiny_cnn.toml") + " --core " +
                             q(src / "architectures/cores/tpu_like.toml") + " --model roofline --compat zigzag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--compat: error: cost model 'roofline' has no compatibility mode"));
}

}  // namespace
}  // namespace monet
