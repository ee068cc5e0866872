// Modules called several times: the module tree gives each call its own module, read back from the names PyTorch
// 1.13's ONNX exporter writes (tests/data/module_calls: scripts/reference/module_calls.py exported the models and
// listed the node names in NAME.txt). Which call each node belongs to is read off the models' forward code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/module_calls.hpp"
#include "monet/training/modules.hpp"
#include "support/onnx_test.hpp"
#include "support/plugin_graphs.hpp"

namespace monet {
namespace {

class ModuleCalls : public test::OnnxTest {
 protected:
  GraphPtr load_model(const std::string& name) {
    return load_file(test::source_dir() / "tests/data/module_calls" / (name + ".onnx"));
  }
};

// Operator name -> the innermost module it is in ("" for the root).
std::map<std::string, std::string> innermost(const Graph& g, const ModuleTree& t) {
  std::map<std::string, std::string> out;
  for (const Module& m : t.modules) {
    for (const ModuleItem& i : m.items) {
      if (i.module < 0) out[g.op(i.op).name] = m.name;
    }
  }
  return out;
}

std::vector<std::string> labels(const Graph& g, const ModuleTree& t, const std::vector<ModuleItem>& items) {
  std::vector<std::string> out;
  for (const ModuleItem& i : items) out.push_back(t.label(g, i));
  return out;
}

// emb, then `layer` (attn (q, Softmax, Mul), Add, fc, Relu) applied 3 times, then head. The exporter names the
// second call's q "/layer/attn/q_1", its attn's own operators "/layer/attn_1/...", the layer's "/layer_1/...".
TEST_F(ModuleCalls, ALayerAppliedThreeTimesIsThreeModulesDownToItsGrandchildren) {
  const GraphPtr g = load_model("shared3");
  const ModuleTree t = module_tree(*g);
  const std::map<std::string, std::string> expected = {
      {"/emb/Gemm", "emb"},
      {"/layer/attn/q/Gemm", "layer.attn.q"},          {"/layer/attn/Softmax", "layer.attn"},
      {"/layer/attn/Mul", "layer.attn"},               {"/layer/Add", "layer"},
      {"/layer/fc/Gemm", "layer.fc"},                  {"/layer/Relu", "layer"},
      {"/layer/attn/q_1/Gemm", "layer_1.attn.q"},      {"/layer/attn_1/Softmax", "layer_1.attn"},
      {"/layer/attn_1/Mul", "layer_1.attn"},           {"/layer_1/Add", "layer_1"},
      {"/layer/fc_1/Gemm", "layer_1.fc"},              {"/layer_1/Relu", "layer_1"},
      {"/layer/attn/q_2/Gemm", "layer_2.attn.q"},      {"/layer/attn_2/Softmax", "layer_2.attn"},
      {"/layer/attn_2/Mul", "layer_2.attn"},           {"/layer_2/Add", "layer_2"},
      {"/layer/fc_2/Gemm", "layer_2.fc"},              {"/layer_2/Relu", "layer_2"},
      {"/head/Gemm", "head"}};
  EXPECT_EQ(innermost(*g, t), expected);
  EXPECT_EQ(labels(*g, t, t.root().items), (std::vector<std::string>{"emb", "layer", "layer_1", "layer_2", "head"}));
  for (const char* call : {"layer", "layer_1", "layer_2"}) {
    const Module& m = t.modules[static_cast<std::size_t>(t.find(call))];
    EXPECT_EQ(m.operators.size(), 6u) << call;
    EXPECT_EQ(labels(*g, t, m.items), (std::vector<std::string>{std::string(call) + ".attn", "/" + std::string(call) + "/Add",
                                                                std::string(call) + ".fc", "/" + std::string(call) + "/Relu"}))
        << call;
  }
  // The calls are a chain of blocks, each call's operators consecutive in the graph.
  EXPECT_EQ(labels(*g, t, t.blocks()), (std::vector<std::string>{"emb", "layer", "layer_1", "layer_2", "head"}));
  // module_path() reads one name and cannot know the call: the child keeps the first call's parent.
  Operator op;
  op.name = "/layer/attn/q_1/Gemm";
  EXPECT_EQ(module_path(op), (std::vector<std::string>{"layer", "layer.attn", "layer.attn.q_1"}));
}

// `blk` is called once and calls `lin` twice: one module blk with two calls of lin, as today.
TEST_F(ModuleCalls, AModuleCalledOnceWithAChildCalledTwiceIsUnaffected) {
  const GraphPtr g = load_model("once_twice");
  const ModuleTree t = module_tree(*g);
  const std::map<std::string, std::string> expected = {
      {"/blk/lin/Gemm", "blk.lin"}, {"/blk/Relu", "blk"}, {"/blk/lin_1/Gemm", "blk.lin_1"}, {"/head/Gemm", "head"}};
  EXPECT_EQ(innermost(*g, t), expected);
  EXPECT_EQ(labels(*g, t, t.root().items), (std::vector<std::string>{"blk", "head"}));
  EXPECT_EQ(t.modules[static_cast<std::size_t>(t.find("blk"))].operators.size(), 3u);
  for (const Operator& op : g->operators()) {
    if (op.phase == Phase::forward) {
      std::vector<std::string> path = module_path(op);
      EXPECT_EQ(path.back(), expected.at(op.name)) << op.name;
    }
  }
}

// `blk` (lin, Relu, lin) called twice: lin's four calls are "lin" .. "lin_3", two per call of blk.
TEST_F(ModuleCalls, ChildCallsAreSharedOutEvenlyOverTheParentsCalls) {
  const GraphPtr g = load_model("shared2_twice");
  const ModuleTree t = module_tree(*g);
  const std::map<std::string, std::string> expected = {
      {"/blk/lin/Gemm", "blk.lin"},     {"/blk/Relu", "blk"},     {"/blk/lin_1/Gemm", "blk.lin_1"},
      {"/blk/lin_2/Gemm", "blk_1.lin"}, {"/blk_1/Relu", "blk_1"}, {"/blk/lin_3/Gemm", "blk_1.lin_1"},
      {"/head/Gemm", "head"}};
  EXPECT_EQ(innermost(*g, t), expected);
  EXPECT_EQ(labels(*g, t, t.blocks()), (std::vector<std::string>{"blk", "blk_1", "head"}));
}

// A module without operators of its own leaves no name per call: `blk` (only `lin`) called twice is written as
// "/blk/lin" and "/blk/lin_1", exactly as a blk called once that calls lin twice. monet reads the latter.
TEST_F(ModuleCalls, AWrapperWithoutOwnOperatorsReadsAsOneCall) {
  const GraphPtr g = load_model("wrapper2");
  const ModuleTree t = module_tree(*g);
  const std::map<std::string, std::string> expected = {
      {"/blk/lin/Gemm", "blk.lin"}, {"/blk/lin_1/Gemm", "blk.lin_1"}, {"/head/Gemm", "head"}};
  EXPECT_EQ(innermost(*g, t), expected);
  // As a container of modules it is expanded into its calls of lin: the chain is the same either way.
  EXPECT_EQ(labels(*g, t, t.blocks()), (std::vector<std::string>{"blk.lin", "blk.lin_1", "head"}));
}

std::vector<std::vector<std::string>> paths_of(const std::vector<std::string>& names) {
  std::vector<Operator> ops(names.size());
  std::vector<const Operator*> p;
  for (std::size_t i = 0; i < names.size(); ++i) {
    ops[i].name = names[i];
    p.push_back(&ops[i]);
  }
  return module_call_paths(p);
}

TEST(ModuleCallPaths, SuffixesThatAreNotCallsAndUnevenCalls) {
  using P = std::vector<std::string>;
  // "conv_1" is a module of its own when no "conv" exists; "_0" and "_01" are never call numbers.
  EXPECT_EQ(paths_of({"/conv_1/Conv", "/a_0/Relu", "/a/b/Relu", "/a/b_01/Relu"}),
            (std::vector<P>{{"conv_1"}, {"a_0"}, {"a", "a.b"}, {"a", "a.b_01"}}));
  // Sequential children written qualified follow their parent's call: call 1 of "h" holds "h_1.0".
  EXPECT_EQ(paths_of({"/h/Add", "/h/h.0/Relu", "/h_1/Add", "/h/h.0_1/Relu"}),
            (std::vector<P>{{"h"}, {"h", "h.0"}, {"h_1"}, {"h_1", "h_1.0"}}));
  // Two calls of `blk` but three of its child: the counts do not divide, so the child's calls stay where their
  // names put them (blk's first call) rather than be guessed.
  EXPECT_EQ(paths_of({"/blk/Add", "/blk/c/Relu", "/blk/c_1/Relu", "/blk_1/Add", "/blk/c_2/Relu"}),
            (std::vector<P>{{"blk"}, {"blk", "blk.c"}, {"blk", "blk.c_1"}, {"blk_1"}, {"blk", "blk.c_2"}}));
  // A parent without operators of its own between a called-3-times grandparent and the child: the child's calls
  // follow the grandparent's, the parent taken as called once per call. A micro-batch suffix is ignored.
  EXPECT_EQ(paths_of({"/L/Add@2", "/L/m/q/Relu@2", "/L_1/Add@2", "/L/m/q_1/Relu@2", "/L_2/Add@2", "/L/m/q_2/Relu@2"}),
            (std::vector<P>{{"L"}, {"L", "L.m", "L.m.q"}, {"L_1"}, {"L_1", "L_1.m", "L_1.m.q"}, {"L_2"},
                            {"L_2", "L_2.m", "L_2.m.q"}}));
}

// Choices of the chain's blocks (bit b of m: block b checkpointed) whose rewritten step's activation peak or
// recompute MACs are not what the chain model says.
int choices_off_the_model(const GraphPtr& g, const CheckpointChain& ch) {
  int off = 0;
  for (std::uint64_t m = 0; m < (std::uint64_t{1} << ch.size()); ++m) {
    std::vector<bool> c(ch.size());
    for (std::size_t b = 0; b < c.size(); ++b) c[b] = (m >> b & 1) != 0;
    const TrainingSummary s = training_summary(*apply_checkpointing(*g, ch.regions_of(c)));
    if (s.memory.peak_activation_bytes != ch.peak(c) || s.recompute.macs != static_cast<std::int64_t>(ch.total_cost(c))) ++off;
  }
  return off;
}

// MONET's small GPT-2 (one layer applied 4 times): each pass is a block of 23 operators — 17 of the layer's own
// (attention arithmetic, reshapes, residual adds, ReLU) and its 6 linear layers q, k, v, o, fc1, fc2 — where the
// names alone give `layer` 17 + 4 x 6 = 41 and the other passes 17. With one block per pass the 7 blocks are a chain:
// the chain DP's model is the rewritten step for all 128 choices. Read with one module per name
// (tests/data/gpt2_monet_small_one_module_per_name.toml, the same operators) they are not.
TEST(ModuleCallsGpt2, EachPassOfTheSharedLayerIsABlockAndTheBlocksAreAChain) {
  const GraphPtr g = test::training_graph(test::load("onnx", test::source_dir() / "workloads/onnx/gpt2_monet_small.onnx"));
  const ModuleTree t = module_tree(*g);
  EXPECT_EQ(labels(*g, t, t.blocks()),
            (std::vector<std::string>{"emb", "/Add", "layer", "layer_1", "layer_2", "layer_3", "head"}));
  for (const char* call : {"layer", "layer_1", "layer_2", "layer_3"}) {
    const Module& m = t.modules[static_cast<std::size_t>(t.find(call))];
    EXPECT_EQ(m.operators.size(), 23u) << call;
    std::vector<std::string> children;
    for (const ModuleItem& i : m.items) {
      if (i.module >= 0) children.push_back(t.modules[static_cast<std::size_t>(i.module)].name);
    }
    const std::string c = call;
    EXPECT_EQ(children, (std::vector<std::string>{c + ".q", c + ".k", c + ".v", c + ".o", c + ".fc1", c + ".fc2"}));
  }
  const CheckpointChain ch = checkpoint_chain(g);
  ASSERT_EQ(ch.size(), 7u);
  EXPECT_EQ(choices_off_the_model(g, ch), 0);

  const GraphPtr named = test::training_graph(
      test::load("toml", test::source_dir() / "tests/data/gpt2_monet_small_one_module_per_name.toml"));
  const ModuleTree n = module_tree(*named);
  EXPECT_EQ(n.modules[static_cast<std::size_t>(n.find("layer"))].operators.size(), 41u);
  EXPECT_EQ(n.modules[static_cast<std::size_t>(n.find("layer_1"))].operators.size(), 17u);
  EXPECT_GT(choices_off_the_model(named, checkpoint_chain(named)), 0);
}

}  // namespace
}  // namespace monet
