// Multi-core scheduling and layer fusion. Against Stream (KU Leuven): its ResNet-18 example accelerator and
// mapping import to the committed files, and the two reference runs of tests/data/stream/reference.json (layer by
// layer, and two fused stacks) run from experiments/reference/. Also: layer fusion moves less data off chip than
// layer by layer when activations do not fit (a 3-conv chain, and GPT-2 attention fused through its views), a
// training step's memory peak holds saved activations, and the trace and plots a run writes are valid.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <nlohmann/json.hpp>

#include "support/csv.hpp"
#include "support/energy_records.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

using test::q;
fs::path stream_data() { return test::source_dir() / "tests/data/stream"; }

json stream_run(const char* key) {
  return json::parse(test::read_file(stream_data() / "reference.json"))["runs"][key];
}

// Runs an experiment once per test binary and keeps its output folder.
const fs::path& run_once(const std::string& experiment) {
  static test::ScratchDir dir;
  static std::map<std::string, fs::path> done;
  auto it = done.find(experiment);
  if (it != done.end()) return it->second;
  const fs::path out = dir.path() / fs::path(experiment).stem();
  const auto r = test::monet("run " + q(test::source_dir() / experiment) + " --out " + q(out) + " --log-level warn");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return done.emplace(experiment, out).first->second;
}

json results(const std::string& experiment) { return json::parse(test::read_file(run_once(experiment) / "results.json")); }
std::vector<test::CsvRow> nodes(const std::string& experiment) { return test::read_csv(run_once(experiment) / "schedule.csv"); }
std::vector<test::CsvRow> transfers(const std::string& experiment) {
  return test::read_csv(run_once(experiment) / "transfers.csv");
}

std::map<std::string, int> cns_per_core(const std::vector<test::CsvRow>& cns) {
  std::map<std::string, int> n;
  for (const test::CsvRow& cn : cns) {
    if (cn["kind"] != "view") ++n[cn["core"]];  // Stream's Flatten is no CN either
  }
  return n;
}

std::map<std::string, int> stream_cns_per_core(const json& run) {
  std::map<std::string, int> n;
  for (const auto& [id, count] : run["cns_per_core"].items()) n["core" + id] = count.get<int>();
  return n;
}

TEST(StreamParity, ImportedAcceleratorAndMappingAreTheCommittedFiles) {
  test::ScratchDir dir;
  // Stream's example models no link energy: the committed file takes cited ones (docs/architectures.md).
  const auto r = test::monet("import stream-accelerator " + q(stream_data() / "hardware/tpu_like_quad_core.yaml") + " -o " +
                             q(dir.path() / "tpu_like_quad_core.toml") + " --link-energy 0.2 --bus-energy 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path arch = test::source_dir() / "architectures";
  EXPECT_EQ(test::read_file(dir.path() / "tpu_like_quad_core.toml"), test::read_file(arch / "tpu_like_quad_core.toml"));
  for (const char* core : {"tpu_like", "pooling", "simd"}) {
    const fs::path rel = fs::path("cores/tpu_like_quad_core") / (std::string(core) + ".toml");
    EXPECT_EQ(test::read_file(dir.path() / rel), test::read_file(arch / rel)) << core;
    // Each core is named for what it is: Stream's simd.yaml carries pooling.yaml's name.
    EXPECT_THAT(test::read_file(dir.path() / rel), HasSubstr("\nname = \"" + std::string(core) + "\"\n")) << core;
  }
  // The DRAM's single 64-bit port is a resource all cores share (Stream lets each core stream at 64 bits/cycle).
  EXPECT_THAT(test::read_file(arch / "tpu_like_quad_core.toml"), HasSubstr("bandwidth_bits_per_cycle = 64.0\n#"));
  EXPECT_THAT(test::read_file(arch / "tpu_like_quad_core.toml"), HasSubstr("\nports = 1\n"));

  const auto m = test::monet("import stream-mapping " + q(stream_data() / "mapping/tpu_like_quad_core_fixed_k4.yaml") + " -o " +
                             q(dir.path() / "map.toml") + " --fusion fused_stacks");
  ASSERT_EQ(m.exit_code, 0) << m.out;
  const std::string mapping = test::read_file(dir.path() / "map.toml");
  const std::string experiment = test::read_file(test::source_dir() / "experiments/reference/stream_resnet18_fused.toml");
  for (const char* line : {"default = [\"core0\", \"core1\", \"core2\", \"core3\"]", "\"Conv\" = [\"core0\", \"core1\", \"core2\", \"core3\"]",
                           "\"MaxPool\" = [\"core4\"]", "\"Add\" = [\"core5\"]", "plugin = \"fused_stacks\""}) {
    EXPECT_THAT(mapping, HasSubstr(line));
    EXPECT_THAT(experiment, HasSubstr(line)) << "the experiment should use the imported mapping";
  }
  EXPECT_THAT(mapping, HasSubstr("\"Conv=K:4\""));
  EXPECT_THAT(mapping, HasSubstr("\"Conv=OY:all\""));
}

// With `[compat] stream = true` (every Stream quirk monet reproduces, docs/scheduling.md) both reference runs are
// close to Stream's totals; test_stream_trace.cpp compares them CN by CN with Stream's trace. The bands here record
// today's totals so that a change in the scheduler shows up.
TEST(StreamParity, LayerByLayerResNet18) {
  const json j = results("experiments/reference/stream_resnet18_lbl.toml");
  const json s = stream_run("a_layer_by_layer_fixed_k4");
  const double e = j["energy_pj"].get<double>(), se = s["energy_pJ"].get<double>();
  EXPECT_NEAR(e / se, 0.9993, 0.005) << e << " pJ vs Stream " << se;  // measured -0.1%
  EXPECT_EQ(cns_per_core(nodes("experiments/reference/stream_resnet18_lbl.toml")), stream_cns_per_core(s));
  // Every operand streams from DRAM, as in Stream: nothing stays resident on chip, but the tiles in flight
  // occupy every working core's memories (issue #17: a streaming core is not empty), within its capacity.
  for (const json& core : j["architecture"]["cores"]) {
    const double peak = core["peak_memory_bytes"].get<double>();
    EXPECT_GT(peak, 0.0) << core["name"];
    EXPECT_LE(peak, core["capacity_bytes"].get<double>()) << core["name"];
    EXPECT_EQ(core["peak_composition"]["streaming_bytes"].get<double>(), peak) << core["name"];
  }
  EXPECT_TRUE(j["feasible"].get<bool>());
  const double latency = j["latency_cycles"].get<double>();
  EXPECT_NEAR(latency / s["latency_cycles"].get<double>(), 1.0086, 0.005) << latency;  // measured +0.9%
}

TEST(StreamParity, FusedStacksResNet18) {
  const json j = results("experiments/reference/stream_resnet18_fused.toml");
  const json s = stream_run("b_layer_fused_fixed_k4");
  const double e = j["energy_pj"].get<double>(), se = s["energy_pJ"].get<double>();
  EXPECT_NEAR(e / se, 0.9974, 0.005) << e << " pJ vs Stream " << se;  // measured -0.3%
  EXPECT_EQ(cns_per_core(nodes("experiments/reference/stream_resnet18_fused.toml")), stream_cns_per_core(s));
  // Fusion keeps the stacks' activations on chip: less off-chip energy than layer by layer, as in Stream (3.78e9
  // -> 2.22e9 pJ off chip), and some on-chip memory in use, well below the 2 MB SRAMs.
  const json lbl = results("experiments/reference/stream_resnet18_lbl.toml");
  const double off = j["energy_breakdown"]["offchip_energy_pj"].get<double>();
  const double off_lbl = lbl["energy_breakdown"]["offchip_energy_pj"].get<double>();
  EXPECT_LT(off, 0.7 * off_lbl);
  for (const json& core : j["architecture"]["cores"]) {
    if (core["name"] == "dram") continue;
    EXPECT_GT(core["peak_memory_bytes"].get<double>(), 0.0) << core["name"];
    EXPECT_LE(core["peak_memory_bytes"].get<double>(), core["capacity_bytes"].get<double>()) << core["name"];
  }
  EXPECT_FALSE(j["over_capacity"].get<bool>());
  // Core-to-core traffic: with Stream's whole-tile transfers (a Relu split by columns receives its producers'
  // whole rows) and each core fetching the network input itself, the transfers are Stream's: 9,240 of them,
  // 97,140,736 bits, memory energy +0.3% (exact regions move 34% fewer bytes).
  double core_to_core = 0;
  for (const test::CsvRow& t : transfers("experiments/reference/stream_resnet18_fused.toml")) {
    if (t["from"] != "dram" && t["to"] != "dram") core_to_core += t.number("energy_pj");
  }
  const double stream_c2c = s["energy_breakdown_pJ"]["total_core_to_core_memory_energy"].get<double>();
  EXPECT_NEAR(core_to_core / stream_c2c, 1.0, 0.005) << core_to_core << " pJ vs Stream " << stream_c2c;  // +0.3%
  const double latency = j["latency_cycles"].get<double>();
  EXPECT_NEAR(latency / s["latency_cycles"].get<double>(), 1.0251, 0.005) << latency;  // measured +2.5%
}

// The Chrome trace holds one complete event per computation node, and both SVG plots render — also for the
// layer-by-layer run whose cores hold nothing (Stream's own memory plot fails on it).
TEST(StreamParity, TraceAndPlotsAreValid) {
  for (const char* e : {"experiments/reference/stream_resnet18_lbl.toml", "experiments/reference/stream_resnet18_fused.toml"}) {
    const fs::path out = run_once(e);
    const auto gunzip = test::run_command("gzip -dc " + q(out / "trace.json.gz"));  // what Perfetto reads
    ASSERT_EQ(gunzip.exit_code, 0) << gunzip.out;
    const json trace = json::parse(gunzip.out);
    std::size_t complete = 0;
    for (const json& ev : trace["traceEvents"]) {
      if (ev["ph"] == "X" && ev["pid"] == 1) {
        ++complete;
        EXPECT_GE(ev["dur"].get<double>(), 0.0);
      }
    }
    std::size_t on_cores = 0;
    for (const test::CsvRow& cn : nodes(e)) on_cores += cn["kind"] != "view";  // views take no time
    EXPECT_EQ(complete, on_cores) << e;
    for (const char* svg : {"memory.svg", "schedule.svg"}) {
      const auto r = test::run_command("rsvg-convert -o " + q(out / (std::string(svg) + ".png")) + " " + q(out / svg));
      EXPECT_EQ(r.exit_code, 0) << e << " " << svg << ": " << r.out;
      EXPECT_GT(fs::file_size(out / (std::string(svg) + ".png")), 1000u) << svg;
    }
  }
}

// Every transfer record names its data and flows the way the data does, and its read, link and write energies
// add up, by where they happen, to results.json's breakdown: on runs that stream every operand (Stream's layer by
// layer), fuse, and spill (a training step on the quad core).
TEST(Transfers, RecordsFollowOneRuleAndSumToTheSummary) {
  for (const char* e : {"experiments/reference/stream_resnet18_lbl.toml", "experiments/reference/stream_resnet18_fused.toml",
                        "experiments/resnet18_cifar_training_quad_core.toml"}) {
    SCOPED_TRACE(e);
    test::expect_records_sum_to_summary(run_once(e));
  }
  // Layer by layer every operand streams: the first convolution (CN 0 on core0) reads its input and weights
  // dram -> core0 and writes its output back core0 -> dram, one record each.
  std::vector<std::string> first_conv;
  for (const test::CsvRow& t : transfers("experiments/reference/stream_resnet18_lbl.toml")) {
    if (t["cause"] == "stream" && t["for_cn"] == "0") first_conv.push_back(t["tensor"] + " " + t["from"] + " -> " + t["to"]);
  }
  EXPECT_EQ(first_conv, (std::vector<std::string>{"input.1 dram -> core0", "onnx::Conv_193 dram -> core0",
                                                  "/conv1/Conv_output_0 core0 -> dram"}));
  EXPECT_GT(results("experiments/resnet18_cifar_training_quad_core.toml")["energy_breakdown"]["spill_energy_pj"].get<double>(), 0);
}

// What a plot says, read back from its SVG: texts with their position and size, legend entries with their colour.
struct SvgText {
  double x = 0, y = 0, size = 0;
  std::string anchor, text;
};
std::vector<SvgText> svg_texts(const std::string& svg) {
  std::vector<SvgText> out;
  static const std::regex text(R"(<text x='([-0-9.e]+)' y='([-0-9.e]+)' font-size='([0-9.]+)'([^>]*)>([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[4];
    const auto anchor = attrs.find("text-anchor='");
    out.push_back(SvgText{std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]),
                          anchor == std::string::npos ? "start" : attrs.substr(anchor + 13, attrs.find('\'', anchor + 13) - anchor - 13),
                          (*it)[5]});
  }
  return out;
}
double svg_width(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("<svg [^>]*width='([0-9.]+)'")));
  return std::stod(m[1]);
}

// Plots stay readable and small at any scale: the quad-core training step (4,470 CNs and transfers) is drawn per
// pixel column, quickstart rectangle by rectangle; axes are SI-formatted, titles do not overlap, legends fit and
// every category has its own colour.
TEST(Plots, ReadableAtAnyScale) {
  test::ScratchDir dir;
  const auto quick = test::monet("run " + q(test::source_dir() / "experiments/tiny_cnn_dual_core.toml") + " --out " + q(dir.path() / "q") +
                             " --log-level warn");
  ASSERT_EQ(quick.exit_code, 0) << quick.out;
  const fs::path big = run_once("experiments/resnet18_cifar_training_quad_core.toml");
  const std::size_t drawn = nodes("experiments/resnet18_cifar_training_quad_core.toml").size() +
                            transfers("experiments/resnet18_cifar_training_quad_core.toml").size();
  ASSERT_GT(drawn, 4000u);
  for (const fs::path& out : {dir.path() / "q", big}) {
    SCOPED_TRACE(out.string());
    for (const char* plot : {"schedule.svg", "memory.svg"}) {
      SCOPED_TRACE(plot);
      const std::string svg = test::read_file(out / plot);
      const double width = svg_width(svg);
      const auto texts = svg_texts(svg);
      ASSERT_FALSE(texts.empty());
      static const std::regex tick(R"([0-9]+(\.[0-9]+)?( ?[kMGT]?B|[kMGT]?))");
      for (const SvgText& t : texts) {
        EXPECT_EQ(t.text.find("e+"), std::string::npos) << t.text;
        // Axis ticks: SI-formatted, at most 3 significant digits (2 MB, 500 kB, 1.5M; not 2097.15 kB).
        if (t.size == 10 && t.anchor != "start") {
          EXPECT_TRUE(std::regex_match(t.text, tick)) << t.text;
          std::size_t digits = 0;
          for (char c : t.text) digits += std::isdigit(static_cast<unsigned char>(c)) != 0;
          EXPECT_LE(digits, 3u) << t.text;
        }
        // Nothing leaves the picture (a legend used to run off its right edge).
        const double w = 0.6 * t.size * static_cast<double>(t.text.size());
        const double right = t.anchor == "start" ? t.x + w : t.anchor == "middle" ? t.x + w / 2 : t.x;
        EXPECT_LE(right, width + 1) << t.text;
      }
      // Titles (12 px and more) do not overlap one another.
      for (std::size_t i = 0; i < texts.size(); ++i) {
        for (std::size_t k = i + 1; k < texts.size(); ++k) {
          if (texts[i].size < 12 || texts[k].size < 12) continue;
          EXPECT_GE(std::abs(texts[i].y - texts[k].y), std::max(texts[i].size, texts[k].size)) << texts[i].text << " / " << texts[k].text;
        }
      }
    }
    // Legend: one colour per category.
    const std::string schedule = test::read_file(out / "schedule.svg");
    static const std::regex entry(R"(width='10' height='10' fill='(#[0-9a-f]{6})'/><text [^>]*>([^<]*)</text>)");
    std::map<std::string, std::string> category_of;
    for (auto it = std::sregex_iterator(schedule.begin(), schedule.end(), entry); it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(category_of.emplace((*it)[1], (*it)[2]).second) << (*it)[2] << " shares " << (*it)[1] << " with " << category_of[(*it)[1]];
    }
    EXPECT_GE(category_of.size(), 4u);
  }
  // The big run's Gantt chart has far fewer rectangles than CNs and transfers, and says how it is drawn.
  const std::string schedule = test::read_file(big / "schedule.svg");
  std::size_t rects = 0;
  for (std::size_t at = schedule.find("<rect"); at != std::string::npos; at = schedule.find("<rect", at + 1)) ++rects;
  EXPECT_LT(rects, drawn / 2);
  EXPECT_THAT(schedule, HasSubstr("drawn per pixel column"));
  EXPECT_THAT(test::read_file(dir.path() / "q/schedule.svg"), ::testing::Not(HasSubstr("drawn per pixel column")));
}

// Three 3x3 convolutions on 32x32x16 int8 activations (16 KiB each) on a core with 24 KiB of SRAM: layer by
// layer, each activation must go off chip and come back; fused, a few rows of each live on chip at a time.
struct ChainRun {
  json results;
  std::string summary;
};

ChainRun run_chain(const test::ScratchDir& dir, const std::string& fusion, const std::string& sets = "",
                   const std::string& tag = "") {
  std::string core = test::read_file(test::source_dir() / "architectures/cores/systolic_8x8.toml");
  core.replace(core.find("2_097_152"), 9, "196_608");
  dir.write("small_core.toml", core);
  dir.write("arch.toml",
            "[accelerator]\nname = \"one_small_core\"\n[[cores]]\nname = \"core0\"\nfile = \"small_core.toml\"\n"
            "[offchip]\nname = \"dram\"\nsize_bits = 1_000_000_000\nread_energy_pj_per_bit = 10\nwrite_energy_pj_per_bit = 10\n"
            "bandwidth_bits_per_cycle = 64\n[[links]]\nname = \"bus\"\nkind = \"bus\"\nendpoints = [\"core0\", \"dram\"]\n"
            "bandwidth_bits_per_cycle = 64\nenergy_pj_per_bit = 1.0\n");
  std::string layers;
  for (int i = 1; i <= 3; ++i) {
    layers += "[[layers]]\nname = \"conv" + std::to_string(i) + "\"\nop = \"conv\"\ninput = \"" +
              (i == 1 ? std::string("image") : "conv" + std::to_string(i - 1)) +
              "\"\nout_channels = 16\nkernel = 3\npadding = 1\nbias = false\n";
  }
  dir.write("chain.toml", "[workload]\nname = \"chain\"\ndtype = \"int8\"\n[[inputs]]\nname = \"image\"\nshape = [1, 16, 32, 32]\n" + layers);
  const auto exp = dir.write("exp_" + fusion + ".toml",
                             "[experiment]\nname = \"chain_" + fusion + "\"\n[workload]\nfile = \"chain.toml\"\n"
                             "[architecture]\nfile = \"arch.toml\"\n[fusion]\nplugin = \"" + fusion + "\"\n" +
                                 (fusion == "fused_stacks" ? "stacks = [\"conv1..conv3\"]\n" : ""));
  const fs::path out = dir.path() / ("out_" + fusion + tag);
  const auto r = test::monet("run " + q(exp) + " --out " + q(out) + " --log-level warn " + sets);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return {json::parse(test::read_file(out / "results.json")), r.out};
}

TEST(Fusion, FusedStackMovesLessDataOffChipThanLayerByLayer) {
  test::ScratchDir dir;
  const ChainRun lbl = run_chain(dir, "layer_by_layer");
  const ChainRun fused = run_chain(dir, "fused_stacks");
  const auto offchip = [](const json& j) { return j["offchip_read_bytes"].get<double>() + j["offchip_write_bytes"].get<double>(); };
  // Fused: each row tile of conv1 fetches its three input rows (the image's halo rows come twice, as in Stream,
  // where every tile's input is its own tensor: 94 rows of 512 B), the weights once (3 x 2,304 B) and writes the
  // output once; conv2's and conv3's halo rows are produced on chip and kept until their last reader.
  EXPECT_EQ(offchip(fused.results), 94 * 512 + 3 * 2304 + 16384);
  EXPECT_EQ(fused.results["spilled_bytes"].get<double>(), 0.0);
  // Layer by layer the 16 KiB input and output of a layer do not fit in 24 KiB next to each other: every layer
  // streams its operands, so both intermediate activations go out and come back.
  EXPECT_EQ(offchip(lbl.results), 3 * 16384 + 3 * 2304 + 3 * 16384);
  EXPECT_LT(fused.results["energy_pj"].get<double>(), lbl.results["energy_pj"].get<double>());
  for (const json* j : {&lbl.results, &fused.results}) {
    EXPECT_FALSE((*j)["over_capacity"].get<bool>());
    EXPECT_LE((*j)["architecture"]["cores"][0]["peak_memory_bytes"].get<double>(), 196608 / 8);
  }
}

// stack_tiles gives a stack its own tile count: 8 slots of 4 output rows instead of one row per slot. conv1's
// tiles then fetch 5, 6 x 6 and 5 image rows (a halo row at each inner edge) instead of 94 rows in all, and the
// core holds 4 rows of each layer instead of 1. (With 4 slots of 8 rows the 24 KiB core overflows and spills.)
TEST(Fusion, StackTilesSetAStacksTileCount) {
  test::ScratchDir dir;
  const ChainRun eight = run_chain(dir, "fused_stacks", "--set 'fusion.stack_tiles=[8]'", "_8");
  const ChainRun rows = run_chain(dir, "fused_stacks");
  EXPECT_EQ(eight.results["offchip_read_bytes"].get<double>(), 46 * 512 + 3 * 2304);
  EXPECT_EQ(eight.results["spilled_bytes"].get<double>(), 0.0);
  const auto peak = [](const json& j) { return j["architecture"]["cores"][0]["peak_memory_bytes"].get<double>(); };
  EXPECT_GT(peak(eight.results), peak(rows.results));
  const auto bad = test::monet("run " + q(dir.path() / "exp_fused_stacks.toml") + " --out " + q(dir.path() / "bad") +
                               " --set 'fusion.stack_tiles=[4, 2]'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("--set fusion.stack_tiles"));
  EXPECT_THAT(bad.out, HasSubstr("expected one tile count per stack of `stacks` (1), got 2"));
  EXPECT_FALSE(fs::exists(dir.path() / "bad"));
}

// GPT-2's attention fused through Split, Reshape and Transpose views: the stack holds the score and value
// products and the softmax, tiled by token, and the run reads less from off-chip memory than without stacks.
TEST(Fusion, AttentionFusesThroughViews) {
  const json fused = results("experiments/gpt2_tiny_fused_quad_core.toml");
  test::ScratchDir dir;
  const auto r = test::monet("run " + q(test::source_dir() / "experiments/gpt2_tiny_fused_quad_core.toml") + " --out " +
                             q(dir.path() / "out") + " --log-level warn --set fusion.auto_stacks=false");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json unfused = json::parse(test::read_file(dir.path() / "out/results.json"));
  std::map<std::string, int> stack_of, tiles;
  for (const test::CsvRow& cn : nodes("experiments/gpt2_tiny_fused_quad_core.toml")) {
    stack_of[cn["operator"]] = static_cast<int>(cn.integer("stack"));
    ++tiles[cn["operator"]];
  }
  const int attention = stack_of.at("/blocks.0/MatMul");
  for (const char* op : {"/blocks.0/Transpose_1", "/blocks.0/Softmax", "/blocks.0/MatMul_1", "/blocks.0/Reshape_4"}) {
    EXPECT_EQ(stack_of.at(op), attention) << op;
  }
  EXPECT_GE(tiles.at("/blocks.0/Softmax"), 64);  // by token (and head), not whole
  EXPECT_EQ(stack_of.count("/blocks.0/qkv/MatMul") ? tiles.at("/blocks.0/qkv/MatMul") : 0, 1);  // 7 MB of fp32 weights: alone
  EXPECT_LT(fused["offchip_read_bytes"].get<double>(), 0.95 * unfused["offchip_read_bytes"].get<double>());
  EXPECT_LT(fused["energy_pj"].get<double>(), unfused["energy_pj"].get<double>());
  EXPECT_LT(fused["latency_cycles"].get<double>(), unfused["latency_cycles"].get<double>());
}

// A training step on the quad core: activations saved for the backward pass are part of every compute core's
// memory peak, next to the weights.
TEST(TrainingRuns, QuadCorePeakHoldsSavedActivations) {
  const json j = results("experiments/resnet18_cifar_training_quad_core.toml");
  int with_activations = 0;
  for (const json& core : j["architecture"]["cores"]) {
    if (!core.contains("peak_composition")) continue;
    const json& c = core["peak_composition"];
    double sum = 0;
    for (const char* k : {"activations_bytes", "recomputed_activations_bytes", "weights_bytes", "gradients_bytes",
                          "optimizer_states_bytes", "streaming_bytes", "other_bytes"}) {
      sum += c[k].get<double>();
    }
    EXPECT_NEAR(sum, core["peak_memory_bytes"].get<double>(), 1.0) << core["name"];
    with_activations += c["activations_bytes"].get<double>() > 0;
  }
  EXPECT_GE(with_activations, 4);
  EXPECT_GT(j["training"]["saved_activation_bytes"].get<double>(), 0.0);
}

}  // namespace
}  // namespace monet
