// The NAS-Bench-201 generator (docs/workloads.md#nas-bench-201): the benchmark's network for every cell of
// workloads/nasbench201/accuracy_cifar10.csv against the README's MAC formula and the parameters of its layers, and
// sampled cells against PyTorch 1.13 (scripts/reference/pytorch_nasbench201.py -> tests/data/pytorch_nasbench201.json:
// NAS-Bench-201's TinyNetwork in training mode): parameters, forward and backward MACs and saved activation bytes,
// exact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"
#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

const std::string kBest = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|"
                          "nor_conv_1x1~2|";  // index 6111

class NasBench201 : public ::testing::Test {
 protected:
  GraphPtr load(const std::string& arch, std::int64_t batch = 1, const std::string& extra = "") {
    const Registry& r = Registry::global();
    const PluginHandle* f = r.find(PluginKind::frontend, "nasbench201");
    const auto file = dir_.write("nb.toml", "[workload]\ngenerator = \"nasbench201\"\narch = \"" + arch +
                                                "\"\nbatch = " + std::to_string(batch) + "\n" + extra);
    return r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))->load(file);
  }
  static GraphPtr training(const Graph& forward) {
    const Registry& r = Registry::global();
    TrainingSettings settings;
    settings.loss = "cross_entropy";
    const PluginHandle* b = r.find(PluginKind::backward, "autodiff");
    return r.create<BackwardGenerator>(*b, default_params(b->info.params, "test"))->generate(forward, settings);
  }
  std::string fail(const std::string& arch, const std::string& extra = "") {
    try {
      load(arch, 1, extra);
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  }
  test::ScratchDir dir_;
};

/// The README's counts: MACs = 7,783,040 + 15 (2,359,296 n3 + 262,144 n1) per image; parameters = 73,306 (stem,
/// reductions, head: the all-skip cell's, measured) + 5 Σ_C (n3 (9C² + 2C) + n1 (C² + 2C)) over C = 16, 32, 64.
TEST_F(NasBench201, EveryCellOfTheBenchmarkHasTheFormulasMacsAndParameters) {
  const auto rows = test::read_csv(test::source_dir() / "workloads/nasbench201/accuracy_cifar10.csv");
  ASSERT_EQ(rows.size(), 15625u);
  int checked = 0;
  for (std::size_t i = 0; i < rows.size(); i += 7) {  // 2,233 cells, every op count among them
    const std::string arch = rows[i]["arch"];
    auto count = [&](const std::string& op) {
      std::int64_t n = 0;
      for (std::size_t at = arch.find(op); at != std::string::npos; at = arch.find(op, at + 1)) ++n;
      return n;
    };
    const std::int64_t n3 = count("nor_conv_3x3"), n1 = count("nor_conv_1x1");
    const GraphPtr g = load(arch);
    EXPECT_EQ(g->total_macs(), 7783040 + 15 * (2359296 * n3 + 262144 * n1)) << rows[i]["index"] << " " << arch;
    std::int64_t params = 73306;
    for (std::int64_t C : {16, 32, 64}) params += 5 * (n3 * (9 * C * C + 2 * C) + n1 * (C * C + 2 * C));
    EXPECT_EQ(g->parameter_count(), params) << rows[i]["index"] << " " << arch;
    ++checked;
  }
  EXPECT_EQ(checked, 2233);
}

TEST_F(NasBench201, SampledCellsMatchPyTorch) {
  std::ifstream in(test::source_dir() / "tests/data/pytorch_nasbench201.json");
  const auto cells = nlohmann::json::parse(in)["cells"];
  ASSERT_EQ(cells.size(), 7u);  // 6111, 1835 (all skip), 3, 9497, 15605 (none edges), 1462 (all conv 3x3), 0
  for (const auto& [index, ref] : cells.items()) {
    const GraphPtr g = load(ref["arch"].get<std::string>(), ref["batch"].get<std::int64_t>());
    EXPECT_EQ(g->parameter_count(), ref["params_trainable"].get<std::int64_t>()) << index;
    EXPECT_EQ(g->total_macs(), ref["forward_macs"].get<std::int64_t>()) << index;
    const GraphPtr step = training(*g);
    EXPECT_EQ(training_memory(*step).saved_activation_bytes, ref["saved_activation_bytes"].get<std::int64_t>())
        << index;
    std::int64_t dx = 0, dw = 0;
    for (const Operator& op : step->operators()) {
      dx += op.phase == Phase::backward_dx ? op.macs() : 0;
      dw += op.phase == Phase::backward_dw ? op.macs() : 0;
    }
    EXPECT_EQ(dx, ref["backward_dx_macs"].get<std::int64_t>()) << index;  // the stem's input needs no gradient
    EXPECT_EQ(dw, ref["backward_dw_macs"].get<std::int64_t>()) << index;
  }
}

// Index 15605: node 1 (a conv 3x3) reaches the output only through `none` edges. Its edge still runs, and its
// Zeros (x.mul(0.) on 1 -> 2 and 1 -> 3) keep it in the step as in the benchmark's code; the other none edges are
// left out.
TEST_F(NasBench201, ANodeThatReachesNothingKeepsItsEdgesThroughItsZeros) {
  const GraphPtr g = load("|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|none~1|nor_conv_1x1~2|");
  int zeros = 0;
  for (const Operator& op : g->operators()) {
    if (op.type != "Mul") continue;
    ++zeros;
    EXPECT_THAT(op.name, ::testing::AnyOf(::testing::EndsWith(".layers.2"), ::testing::EndsWith(".layers.4")));
  }
  EXPECT_EQ(zeros, 30);
  EXPECT_EQ(g->outputs().size(), 1u);
  // A node whose only incoming edge is `none` (9497: 0 -> 1) is that Zero's output, read by its edges.
  const GraphPtr z = load("|none~0|+|nor_conv_3x3~0|nor_conv_1x1~1|+|avg_pool_3x3~0|skip_connect~1|nor_conv_3x3~2|");
  const Tensor* zero = z->find_tensor("cells.0.layers.0");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(z->op(zero->producer).type, "Mul");
  EXPECT_EQ(z->op(z->find_tensor("cells.0.layers.2.op.0")->producer).operands.at(1).tensor, zero->id);
}

// The operators carry the PyTorch module paths: the blocks are the stem's two layers, the 17 cells (cells.5 and
// cells.11 the reduction blocks), lastact's two, global_pooling, the view and the classifier.
TEST_F(NasBench201, ModulesAreTinyNetworksAndEveryCellIsABlock) {
  const GraphPtr g = load(kBest);
  const ModuleTree tree = module_tree(*g);
  std::vector<std::string> blocks;
  for (const ModuleItem& item : tree.blocks()) blocks.push_back(tree.label(*g, item));
  ASSERT_EQ(blocks.size(), 24u);
  EXPECT_EQ(blocks[0], "stem.0");
  EXPECT_EQ(blocks[2], "cells.0");
  EXPECT_EQ(blocks[18], "cells.16");
  EXPECT_EQ(blocks[23], "classifier");
  ASSERT_GE(tree.find("cells.5.downsample.1"), 0);
  ASSERT_GE(tree.find("cells.3.layers.5.op.1"), 0);
  int in_cells = 0;
  for (const ModuleItem& item : tree.blocks()) in_cells += module_glob_match("cells.*", tree.label(*g, item)) ? 1 : 0;
  EXPECT_EQ(in_cells, 17);
}

// The frontend's parameters (an experiment's [workload] arch and batch, a search gene) replace the file's keys.
TEST_F(NasBench201, ParametersOverrideTheFile) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "nasbench201");
  ParamValues p = default_params(f->info.params, "test");
  const std::string cheap = "|avg_pool_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|";
  p.set("arch", cheap);
  p.set("batch", std::int64_t{3});
  const auto file = dir_.write("best.toml", "[workload]\ngenerator = \"nasbench201\"\narch = \"" + kBest + "\"\n");
  const GraphPtr g = r.create<WorkloadFrontend>(*f, p)->load(file);
  EXPECT_EQ(g->total_macs(), 3 * 7783040);
  EXPECT_EQ(g->name(), "nasbench201:" + cheap);
  p.set("arch", std::string("|none~0|"));
  EXPECT_THAT(test::error_of([&] { r.create<WorkloadFrontend>(*f, p)->load(file); }),
              HasSubstr("parameter arch ([workload] arch of the experiment): '|none~0|' has 1 node groups"));
}

TEST_F(NasBench201, KeysAreChecked) {
  const std::string& ok = kBest;
  EXPECT_THAT(fail("|conv_5x5~0|+|none~0|none~1|+|none~0|none~1|none~2|"),
              HasSubstr("'conv_5x5' (edge conv_5x5~0 of node 1) is not a NAS-Bench-201 operation; expected one of "
                        "none"));
  EXPECT_THAT(fail("|none~0|+|none~0|none~1|"), HasSubstr("has 2 node groups; expected 3"));
  EXPECT_THAT(fail("|none~0|+|none~0|+|none~0|none~1|none~2|"), HasSubstr("node group 2 '|none~0|' has 1 edges"));
  EXPECT_THAT(fail("|none~0|+|none~0|none~2|+|none~0|none~1|none~2|"), HasSubstr("reads node '2'"));
  EXPECT_THAT(fail("none~0+|none~0|none~1|+|none~0|none~1|none~2|"), HasSubstr("is not of the form |op~i|"));
  EXPECT_THAT(fail("|none0|+|none~0|none~1|+|none~0|none~1|none~2|"), HasSubstr("is not of the form op~i"));
  EXPECT_THAT(fail(ok, "input = 30\n"), HasSubstr("not a multiple of 4"));
  EXPECT_THAT(fail(ok, "classes = 0\n"), HasSubstr("workload.classes"));
  EXPECT_THAT(fail(ok, "channels = 0\n"), HasSubstr("workload.channels"));
  EXPECT_THAT(fail(ok, "cells_per_stage = 0\n"), HasSubstr("workload.cells_per_stage"));
  EXPECT_THAT(fail(ok, "cell = 1\n"), HasSubstr("cell"));
  // Other sizes: N cells per stage, channels C, input H: 3N + 2 cells, the head over 4C channels at H/4.
  const GraphPtr g = load(ok, 1, "channels = 8\ncells_per_stage = 2\ninput = 16\nclasses = 100\n");
  EXPECT_EQ(g->find_tensor("cells.7.node3.add5")->shape, (Shape{1, 32, 4, 4}));
  EXPECT_EQ(g->tensor(g->outputs().front()).shape, (Shape{1, 100}));
}

}  // namespace
}  // namespace monet

namespace monet {
namespace {

/// `ops = [six edges]` builds the same network as the arch string of the same cell, for every 97th cell of the
/// benchmark (its edge columns are the arch string's ops).
TEST(NasBench201Ops, TheSixEdgesBuildTheArchStringsNetwork) {
  test::ScratchDir dir;
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "nasbench201");
  const auto frontend = r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"));
  const auto rows = test::read_csv(test::source_dir() / "workloads/nasbench201/accuracy_cifar10.csv");
  int checked = 0;
  for (std::size_t i = 0; i < rows.size(); i += 97) {
    std::string ops;
    for (const char* e : {"edge_1_0", "edge_2_0", "edge_2_1", "edge_3_0", "edge_3_1", "edge_3_2"}) {
      ops += std::string(ops.empty() ? "" : ", ") + "\"" + rows[i][e] + "\"";
    }
    const GraphPtr by_ops = frontend->load(dir.write("ops.toml", "[workload]\ngenerator = \"nasbench201\"\nops = [" + ops + "]\n"));
    const GraphPtr by_arch =
        frontend->load(dir.write("arch.toml", "[workload]\ngenerator = \"nasbench201\"\narch = \"" + rows[i]["arch"] + "\"\n"));
    ASSERT_EQ(by_ops->operators().size(), by_arch->operators().size()) << rows[i]["index"];
    for (std::size_t k = 0; k < by_ops->operators().size(); ++k) {
      EXPECT_EQ(by_ops->operators()[k].name, by_arch->operators()[k].name) << rows[i]["index"];
      EXPECT_EQ(by_ops->operators()[k].macs(), by_arch->operators()[k].macs()) << rows[i]["index"];
    }
    EXPECT_EQ(by_ops->parameter_count(), by_arch->parameter_count()) << rows[i]["index"];
    ++checked;
  }
  EXPECT_EQ(checked, 162);
}

}  // namespace
}  // namespace monet
