// monet against Stream CN by CN: `monet compare-stream` on Stream's committed per-CN traces of its two ResNet-18
// reference runs (tests/data/stream/cn_trace_*.json.gz, cn_trace_README.md), with the reference experiments'
// `[compat] stream = true`. Also: the pooling quirk alone reproduces Stream's pooling runtimes (read in the trace)
// and without it monet keeps its own; [compat] rejects unknown keys with a located message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;
using test::q;

fs::path stream_data() { return test::source_dir() / "tests/data/stream"; }

/// Runs an experiment (with extra arguments) and compares it with a trace; returns compare-stream's JSON.
json compare(const std::string& experiment, const char* trace, const std::string& extra = "") {
  static test::ScratchDir dir;
  static int n = 0;
  const fs::path out = dir.path() / ("run" + std::to_string(++n));
  const auto r = test::monet("run " + q(test::source_dir() / experiment) + " --out " + q(out) + " --log-level warn " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const fs::path j = out / "compare.json";
  const auto c = test::monet("compare-stream " + q(stream_data() / trace) + " " + q(out) + " --json " + q(j));
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_THAT(c.out, HasSubstr("critical path (stream)"));
  return json::parse(test::read_file(j));
}

double ratio(const json& c, const char* total) {
  return c["totals"][total]["monet"].get<double>() / c["totals"][total]["stream"].get<double>();
}

const json& layer(const json& c, const std::string& op) {
  for (const json& l : c["layers"]) {
    if (l["operator"] == op) return l;
  }
  static const json none;
  ADD_FAILURE() << "no operator " << op;
  return none;
}

double within_1pct(const json& c) {
  return c["cns"]["runtime_within_1pct"].get<double>() / c["cns"]["matched"].get<double>();
}

// Every CN is matched (same operator, core and tile; in order where Stream pads a ReLU tile). The criteria
// are totals within 5 % of Stream's and >= 95 % of matched CNs within 1 % of Stream's runtime (the first checks
// of each run); the bands (±0.5 %) record today's values (docs/scheduling.md, "CN by CN").
TEST(StreamTrace, LayerByLayerMatchesStreamCnByCn) {
  const json c = compare("experiments/reference/stream_resnet18_lbl.toml", "cn_trace_lbl.json.gz");
  EXPECT_EQ(c["cns"]["stream"].get<int>(), 162);
  EXPECT_EQ(c["cns"]["matched"].get<int>(), 162);
  EXPECT_EQ(c["cns"]["matched_by_tile"].get<int>(), 150);  // the others: tiles Stream pads, matched in order
  EXPECT_NEAR(ratio(c, "energy_pj"), 1.0, 0.05);
  EXPECT_NEAR(ratio(c, "latency_cycles"), 1.0, 0.05);
  EXPECT_GE(within_1pct(c), 0.95);
  EXPECT_NEAR(ratio(c, "energy_pj"), 0.9993, 0.005);        // measured -0.1 %
  EXPECT_NEAR(ratio(c, "latency_cycles"), 1.0086, 0.005);   // measured +0.9 %
  EXPECT_EQ(c["cns"]["runtime_within_1pct"].get<int>(), 162);  // every CN
  // Stream's pooling quirk reproduced: MaxPool costs 64 x its work, as in Stream (read in the trace).
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_stream"].get<double>(), 1636604);
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_monet"].get<double>(), 1636604);
  // GlobalAveragePool: Stream 592,190 cycles (512 x its work, and a temporal mapping with a 294,910-cycle stall:
  // it streams under 1 bit/cycle, which ZigZag truncates to 0, so every mapping scores 0 in Stream's objective and
  // the first one enumerated wins). With Stream's mapping objective monet picks the same mapping, to the pJ.
  EXPECT_EQ(layer(c, "/avgpool/GlobalAveragePool")["runtime_stream"].get<double>(), 592190);
  EXPECT_EQ(layer(c, "/avgpool/GlobalAveragePool")["runtime_monet"].get<double>(), 592190);
  EXPECT_NEAR(layer(c, "/avgpool/GlobalAveragePool")["energy_monet_pj"].get<double>(),
              layer(c, "/avgpool/GlobalAveragePool")["energy_stream_pj"].get<double>(), 1.0);
  // Stream's mapping objective (ceil(DRAM bandwidth / port) x latency, first of equals in ZigZag's order) with
  // ZigZag's model picks Stream's slower layer2 mapping (61,255 cycles per CN; monet's own choice: 40,775).
  EXPECT_EQ(layer(c, "/layer2/layer2.0/conv2/Conv")["runtime_monet"].get<double>(), 245020);
  // Stream's SIMD loop names (the last axis is K, unrolled by the dataflow) and twice-the-activation output
  // precision: the additions to the cycle and the pJ.
  EXPECT_EQ(layer(c, "/layer4/layer4.0/Add")["runtime_monet"].get<double>(), 16574);
  EXPECT_NEAR(layer(c, "/layer4/layer4.0/Add")["energy_monet_pj"].get<double>(),
              layer(c, "/layer4/layer4.0/Add")["energy_stream_pj"].get<double>(), 1.0);
  // Padded tiles: 14 columns in 4 parts cost as four tiles of 4, as in Stream (-12 % energy without the quirk).
  EXPECT_NEAR(layer(c, "/layer3/layer3.0/relu/Relu")["energy_monet_pj"].get<double>() /
                  layer(c, "/layer3/layer3.0/relu/Relu")["energy_stream_pj"].get<double>(),
              1.0, 0.001);
  // Stream's critical path runs through every layer, MaxPool included; so does monet's.
  EXPECT_EQ(c["critical_path"]["stream"]["length_cycles"].get<double>(), 5563353.5);
  EXPECT_EQ(c["critical_path"]["monet"]["operators"][2]["operator"], "/maxpool/MaxPool");
}

TEST(StreamTrace, FusedMatchesStreamCnByCn) {
  const json c = compare("experiments/reference/stream_resnet18_fused.toml", "cn_trace_fused.json.gz");
  EXPECT_EQ(c["cns"]["stream"].get<int>(), 3866);
  EXPECT_EQ(c["cns"]["matched"].get<int>(), 3866);
  EXPECT_NEAR(ratio(c, "latency_cycles"), 1.0, 0.05);
  EXPECT_NEAR(ratio(c, "energy_pj"), 1.0, 0.05);
  EXPECT_GE(within_1pct(c), 0.95);
  EXPECT_NEAR(ratio(c, "latency_cycles"), 1.0251, 0.005);  // measured +2.5 %: the fused stacks' order and waits
  EXPECT_NEAR(ratio(c, "energy_pj"), 0.9974, 0.005);       // measured -0.3 %
  EXPECT_EQ(c["cns"]["runtime_within_1pct"].get<int>(), 3866);  // every CN
  // 56 MaxPool CNs of 29,118 cycles each, in Stream and in monet.
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_stream"].get<double>(), 56 * 29118);
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_monet"].get<double>(), 56 * 29118);
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_within_1pct"].get<int>(), 56);
}

// Without the pooling quirk monet costs pooling by its real work: MaxPool layer by layer 125,440 cycles (the value
// the issue states), fused 56 x 448; with Stream's other choices, the totals agree with Stream's own run with
// the pooling bug fixed (cn_trace_README.md: 3,462,368.5 cycles, 4.271e9 pJ layer by layer; 3,224,931.5 cycles,
// 2.762e9 pJ fused).
TEST(StreamTrace, PoolingWithoutTheQuirkIsMonetsOwn) {
  const json c = compare("experiments/reference/stream_resnet18_lbl.toml", "cn_trace_lbl.json.gz",
                         "--set compat.stream_pooling_channel_loop=false");
  EXPECT_EQ(layer(c, "/maxpool/MaxPool")["runtime_monet"].get<double>(), 125440);
  EXPECT_EQ(layer(c, "/avgpool/GlobalAveragePool")["runtime_monet"].get<double>(), 3518);
  EXPECT_NEAR(c["totals"]["latency_cycles"]["monet"].get<double>() / 3462368.5, 1.0141, 0.005);  // measured +1.4 %
  EXPECT_NEAR(c["totals"]["energy_pj"]["monet"].get<double>() / 4.271e9, 0.9993, 0.005);         // measured -0.1 %
}

TEST(StreamTrace, FusedPoolingWithoutTheQuirkIsMonetsOwn) {
  const json f = compare("experiments/reference/stream_resnet18_fused.toml", "cn_trace_fused.json.gz",
                         "--set compat.stream_pooling_channel_loop=false");
  EXPECT_EQ(layer(f, "/maxpool/MaxPool")["runtime_monet"].get<double>(), 56 * 448);
  EXPECT_NEAR(f["totals"]["latency_cycles"]["monet"].get<double>() / 3224931.5, 1.0421, 0.005);  // measured +4.2 %
  EXPECT_NEAR(f["totals"]["energy_pj"]["monet"].get<double>() / 2.762e9, 0.9973, 0.005);         // measured -0.3 %
}

// A quirk set by name wins over its profile, and a key of its own section wins over both; resolved.toml records
// the resulting values (so it reruns without [compat]).
TEST(StreamTrace, CompatQuirksOneByOne) {
  test::ScratchDir dir;
  const std::string lbl = q(test::source_dir() / "experiments/reference/stream_resnet18_lbl.toml");
  const auto a = test::monet("run " + lbl + " --out " + q(dir.path() / "a") +
                             " --set compat.stream=false --set compat.stream_layer_barrier=true --log-level warn");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const std::string ra = test::read_file(dir.path() / "a/resolved.toml");
  EXPECT_THAT(ra, HasSubstr("offchip_bandwidth = \"average\"\nlayer_barrier = true\ntransfers = \"exact\""));
  EXPECT_THAT(ra, HasSubstr("compat_stream_pooling_channel_loop = false"));
  EXPECT_THAT(ra, ::testing::Not(HasSubstr("offchip.ports")));
  const auto b = test::monet("run " + lbl + " --out " + q(dir.path() / "b") + " --set schedule.layer_barrier=false --log-level warn");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const std::string rb = test::read_file(dir.path() / "b/resolved.toml");
  EXPECT_THAT(rb, HasSubstr("offchip_bandwidth = \"peak\"\nlayer_barrier = false\ntransfers = \"whole_tile\""));
  EXPECT_THAT(rb, HasSubstr("compat_stream_pooling_channel_loop = true"));
  EXPECT_THAT(rb, HasSubstr("compat_stream_mapping_objective = true"));
  EXPECT_THAT(rb, HasSubstr("compat_stream_bandwidth_rounding = true"));
  EXPECT_THAT(rb, HasSubstr("sources = \"offchip\"\npadded_tiles = true"));
  EXPECT_THAT(rb, HasSubstr("compat_stream_zigzag_model = true"));
  EXPECT_THAT(rb, HasSubstr("compat_stream_elementwise_dims = true"));
  EXPECT_THAT(ra, HasSubstr("sources = \"nearest\"\npadded_tiles = false"));
  EXPECT_THAT(rb, HasSubstr("\"offchip.ports\" = 6"));  // one port per core: Stream's view of the DRAM
}

TEST(StreamTrace, CompatRejectsUnknownKeysWhereTheyAre) {
  test::ScratchDir dir;
  std::string text = test::read_file(test::source_dir() / "experiments/reference/stream_resnet18_lbl.toml");
  text = test::replace_first(text, "file = \"../../workloads", "file = \"" + test::source_dir().string() + "/workloads");
  text = test::replace_first(text, "file = \"../../architectures", "file = \"" + test::source_dir().string() + "/architectures");
  const std::string typo = test::replace_first(text, "[compat]\nstream = true\n", "[compat]\nstream = true\nstream_pooling_chanel_loop = true\n");
  const auto r = test::monet("validate " + q(dir.write("typo.toml", typo)));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("typo.toml:"));
  EXPECT_THAT(r.out, HasSubstr("'stream_pooling_chanel_loop' is not a compatibility profile or quirk (did you mean "
                               "'stream_pooling_channel_loop'"));
  const std::string not_bool = test::replace_first(text, "[compat]\nstream = true\n", "[compat]\nstream = \"yes\"\n");
  const auto b = test::monet("validate " + q(dir.write("not_bool.toml", not_bool)));
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_THAT(b.out, HasSubstr("not_bool.toml:"));
}

TEST(StreamTrace, CompareRejectsWhatIsNoTrace) {
  test::ScratchDir dir;
  const auto r = test::monet("compare-stream " + q(dir.write("t.json", "{\"cns\": []}")) + " " + q(dir.path()));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("t.json"));
  EXPECT_THAT(r.out, HasSubstr("not a Stream CN trace"));
}

}  // namespace
}  // namespace monet
