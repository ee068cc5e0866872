// Activation checkpointing: module trees from names, the regions of each policy, and the transformed training
// graph on a chain of blocks whose saved bytes and recompute MACs are worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

GraphPtr training_graph(const test::ScratchDir& dir, const std::string& text) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "toml");
  const GraphPtr fwd = r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))->load(dir.write("w.toml", text));
  const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
  return r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(*fwd, TrainingSettings{});
}

GraphPtr checkpointed(const GraphPtr& g, const std::string& policy,
                      RecomputeSemantics semantics = RecomputeSemantics::pytorch) {
  CheckpointPolicy p = parse_checkpoint_policy(policy, SourceLocation{"test"});
  p.semantics = semantics;
  return apply_checkpointing(g, p);
}
constexpr RecomputeSemantics kMinimal = RecomputeSemantics::minimal;

// x [4,16] -> three blocks b1..b3 (linear 16->32, ReLU, linear 32->16, no biases) -> head (linear 16->10) -> loss.
std::string chain() {
  std::string s = "[[inputs]]\nname = \"x\"\nshape = [4, 16]\n";
  for (int b = 1; b <= 3; ++b) {
    const std::string m = "b" + std::to_string(b);
    s += "\n[[layers]]\nname = \"" + m + "_fcA\"\nop = \"linear\"\nout_features = 32\nbias = false\nmodule = \"" + m + "\"\n";
    s += "\n[[layers]]\nname = \"" + m + "_relu\"\nop = \"relu\"\nmodule = \"" + m + "\"\n";
    s += "\n[[layers]]\nname = \"" + m + "_fcB\"\nop = \"linear\"\nout_features = 16\nbias = false\nmodule = \"" + m + "\"\n";
  }
  return s + "\n[[layers]]\nname = \"fc\"\nop = \"linear\"\nout_features = 10\nmodule = \"head\"\n";
}

// Saved without checkpointing (fp32): each block's input 4·16·4 = 256 (fcA's dW) and ReLU output 4·32·4 = 512
// (its own gradient and fcB's dW); the head's input 256; log-probs 4·10·4 = 160; labels 4·8 = 32.
constexpr std::int64_t kInput = 256, kRelu = 512, kLoss = 160 + 32;
// A checkpointed block runs again whole under the default semantics, as PyTorch reruns a checkpointed function:
// fcA, the ReLU and fcB (4·16·32 + 4·32·16 MACs). Under "minimal" it recomputes fcA and the ReLU only (4·16·32
// MACs): fcB's output is the next block's input, which that block saved, so nothing backward reads comes from
// recomputing it (PyTorch >= 2.1's non-reentrant checkpoint stops there too).
constexpr std::int64_t kBlockMacs = 4 * 16 * 32;  // 2,048: fcA's, and fcB's
constexpr std::int64_t kWholeBlock = 2 * kBlockMacs;

class Checkpoint : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
};

TEST(ModuleTree, PathsFromPyTorchNodeNames) {
  Operator op;
  op.name = "/layer1/layer1.0/conv1/Conv";
  EXPECT_EQ(module_path(op), (std::vector<std::string>{"layer1", "layer1.0", "layer1.0.conv1"}));
  op.name = "/h.3/attn/MatMul_1@2";
  EXPECT_EQ(module_path(op), (std::vector<std::string>{"h.3", "h.3.attn"}));
  EXPECT_EQ(micro_batch_suffix(op), "@2");
  op.name = "/Flatten";
  EXPECT_TRUE(module_path(op).empty());
  op.name = "fc";
  op.module = "head.proj";
  EXPECT_EQ(module_path(op), (std::vector<std::string>{"head", "head.proj"}));
  EXPECT_TRUE(module_glob_match("layer*", "layer1"));
  EXPECT_FALSE(module_glob_match("layer*", "layer1.0"));
  EXPECT_TRUE(module_glob_match("h.*", "h.11"));
  EXPECT_FALSE(module_glob_match("h.*", "h.11.attn"));
  EXPECT_TRUE(module_glob_match("h.?.attn", "h.3.attn"));
}

TEST_F(Checkpoint, TreeOfExplicitModules) {
  const GraphPtr g = training_graph(dir_, chain());
  const ModuleTree t = module_tree(*g);
  ASSERT_EQ(t.root().items.size(), 4u);  // b1, b2, b3, head
  EXPECT_EQ(t.label(*g, t.root().items[3]), "head");
  EXPECT_EQ(t.modules[static_cast<std::size_t>(t.find("b2"))].operators.size(), 3u);
  EXPECT_EQ(t.blocks().size(), 4u);
}

TEST_F(Checkpoint, NoneSavesEverythingAutogradSaves) {
  const GraphPtr g = training_graph(dir_, chain());
  const TrainingSummary s = training_summary(*g);
  EXPECT_EQ(s.memory.saved_activation_bytes, 3 * (kInput + kRelu) + kInput + kLoss);  // 2,752
  EXPECT_EQ(s.recompute.macs, 0);
  // At the first backward operator every saved storage is live, and nothing else is an activation.
  EXPECT_EQ(s.memory.peak_activation_bytes, s.memory.saved_activation_bytes);
  EXPECT_EQ(checkpointed(g, "none"), g);
  EXPECT_EQ(checkpointed(g, "segments=1")->operators().size(), g->operators().size());  // one segment: none
}

TEST_F(Checkpoint, SegmentsFollowCheckpointSequential) {
  const GraphPtr g = training_graph(dir_, chain());
  // segments=2: segment size 4 // 2 = 2, the first segment (b1, b2) checkpointed. It keeps x; b1's output and
  // both ReLU outputs go; b2's output stays (b3's fcA saved it, outside the region).
  const GraphPtr two = checkpointed(g, "segments=2");
  TrainingSummary s = training_summary(*two);
  EXPECT_EQ(s.memory.saved_activation_bytes, kInput + kInput + (kRelu + kInput) + kLoss);  // 1,472
  EXPECT_EQ(s.recompute.operators, 6);  // both blocks whole
  EXPECT_EQ(s.recompute.macs, 2 * kWholeBlock);
  s = training_summary(*checkpointed(g, "segments=2", kMinimal));
  EXPECT_EQ(s.memory.saved_activation_bytes, 1'472);  // the same saved set under either semantics
  EXPECT_EQ(s.recompute.operators, 5);  // b1: fcA, ReLU, fcB (b2's fcA reads it in the same region); b2: fcA, ReLU
  EXPECT_EQ(s.recompute.macs, kBlockMacs + 4 * 32 * 16 + kBlockMacs);
  // segments=4: size 1, b1..b3 each checkpointed: only the block inputs and the head's input remain.
  s = training_summary(*checkpointed(g, "segments=4"));
  EXPECT_EQ(s.memory.saved_activation_bytes, 4 * kInput + kLoss);  // 1,216
  EXPECT_EQ(s.recompute.macs, 3 * kWholeBlock);
  EXPECT_EQ(training_summary(*checkpointed(g, "segments=4", kMinimal)).recompute.macs, 3 * kBlockMacs);
  // Forward and backward work do not change.
  EXPECT_EQ(s.forward.macs, training_summary(*g).forward.macs);
  EXPECT_EQ(s.backward_dw.macs, training_summary(*g).backward_dw.macs);
  // segments=3: size 1, b1 and b2 checkpointed.
  s = training_summary(*checkpointed(g, "segments=3"));
  EXPECT_EQ(s.memory.saved_activation_bytes, 3 * kInput + (kRelu + kInput) + kLoss);
  EXPECT_EQ(s.recompute.macs, 2 * kWholeBlock);
  // minimal: two regions, each block's fcB output is saved by the next
  EXPECT_EQ(training_summary(*checkpointed(g, "segments=3", kMinimal)).recompute.macs, 2 * kBlockMacs);
}

TEST_F(Checkpoint, ModulesAndEveryK) {
  const GraphPtr g = training_graph(dir_, chain());
  TrainingSummary s = training_summary(*checkpointed(g, "modules=b2"));
  EXPECT_EQ(s.memory.saved_activation_bytes, 3 * (kInput + kRelu) + kInput + kLoss - kRelu);
  EXPECT_EQ(s.recompute.macs, kWholeBlock);
  EXPECT_EQ(training_summary(*checkpointed(g, "modules=b2", kMinimal)).recompute.macs, kBlockMacs);
  s = training_summary(*checkpointed(g, "modules=b*"));
  EXPECT_EQ(s.memory.saved_activation_bytes, 4 * kInput + kLoss);
  EXPECT_EQ(s.recompute.macs, 3 * kWholeBlock);
  EXPECT_EQ(training_summary(*checkpointed(g, "modules=b*", kMinimal)).recompute.macs, 3 * kBlockMacs);
  // The head's backward reads nothing its region produced. PyTorch reruns it anyway once its gradient arrives (a
  // gradient reaches its weights); minimal does not.
  const TrainingSummary head = training_summary(*checkpointed(g, "modules=head"));
  EXPECT_EQ(head.recompute.operators, 1);
  EXPECT_EQ(head.recompute.macs, 4 * 16 * 10);
  EXPECT_EQ(head.memory.saved_activation_bytes, training_summary(*g).memory.saved_activation_bytes);
  EXPECT_EQ(training_summary(*checkpointed(g, "modules=head", kMinimal)).recompute.operators, 0);
  // every_k=sqrt: 4 blocks, k = 2: as segments=2.
  s = training_summary(*checkpointed(g, "every_k=sqrt"));
  EXPECT_EQ(s.memory.saved_activation_bytes, 1'472);
  EXPECT_EQ(s.recompute.macs, 2 * kWholeBlock);
  EXPECT_EQ(training_summary(*checkpointed(g, "every_k=sqrt", kMinimal)).recompute.macs, 2 * kBlockMacs + 4 * 32 * 16);
  s = training_summary(*checkpointed(g, "every_k=1"));  // b1, b2, b3; the last block (head) is not checkpointed
  EXPECT_EQ(s.recompute.macs, 3 * kWholeBlock);
}

TEST_F(Checkpoint, RecomputeRunsRightBeforeItsFirstBackwardConsumer) {
  const GraphPtr g = checkpointed(training_graph(dir_, chain()), "modules=b2", kMinimal);
  const Operator* relu = g->find_operator("b2_relu@recompute");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->phase, Phase::recompute);
  EXPECT_EQ(relu->derived_from, g->find_operator("b2_relu")->id);
  // The recompute operators run in forward order and are followed at once by the first backward operator that
  // reads one of their results (b2's fcB dW reads the recomputed ReLU output); fcB is not recomputed.
  EXPECT_EQ(g->find_operator("b2_fcB@recompute"), nullptr);
  const Operator* first = g->find_operator("b2_fcA@recompute");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(g->op(first->id + 1).name, "b2_relu@recompute");
  const Operator& next = g->op(first->id + 2);
  EXPECT_NE(next.phase, Phase::recompute);
  EXPECT_EQ(next.derived_from, g->find_operator("b2_fcB")->id);
  bool reads_copy = false;
  for (const Operand& o : next.operands) reads_copy = reads_copy || g->tensor(o.tensor).name == "b2_relu@recompute";
  EXPECT_TRUE(reads_copy);
  // Everything before is forward, loss or backward of later layers; the recompute reads b2's input (b1's output).
  for (OperatorId i = 0; i < first->id; ++i) EXPECT_NE(g->op(i).phase, Phase::recompute);
  std::vector<std::string> inputs;
  for (const Operand& o : first->operands) {
    if (!o.is_output()) inputs.push_back(g->tensor(o.tensor).name);
  }
  EXPECT_EQ(inputs, (std::vector<std::string>{"b1_fcB", "b2_fcA.weight"}));
  // Peak of saved + recomputed activations in the backward pass: at the start the whole saved set is live
  // (2,752 − 512 = 2,240 B, less than none's 2,752); at b2's recomputation the saved storages still needed plus
  // the recomputed fcA output (512 B, until the ReLU has read it) and ReLU output (512 B).
  const TrainingMemory m = training_memory(*g);
  EXPECT_EQ(m.saved_activation_bytes, 2'240);
  EXPECT_GE(m.peak_activation_bytes, m.saved_activation_bytes);
  EXPECT_LE(m.peak_activation_bytes, m.saved_activation_bytes + 512 + 512);

  // pytorch: fcB runs again too, right after the ReLU, though nothing reads its output (b3 saved its own copy of
  // it): a transient of 4·16·4 = 256 B where it runs. The recomputed fcA output (512 B, until the ReLU has read it)
  // is a transient under both semantics: the ReLU's backward reads the ReLU's output, not its input. Transients
  // count in the activation peak, not in the saved one (what PyTorch's saved-tensor hooks see).
  const GraphPtr whole = checkpointed(training_graph(dir_, chain()), "modules=b2");
  const Operator* fcb = whole->find_operator("b2_fcB@recompute");
  ASSERT_NE(fcb, nullptr);
  EXPECT_EQ(whole->op(fcb->id - 1).name, "b2_relu@recompute");
  const TrainingMemory w = training_memory(*whole);
  EXPECT_EQ(w.saved_activation_bytes, m.saved_activation_bytes);
  std::map<std::string, std::pair<std::int64_t, std::size_t>> transients;  // name -> bytes, operators live
  for (const ActivationInterval& i : backward_activations(*whole).intervals) {
    if (!i.saved) transients[whole->tensor(i.storage).name] = {i.bytes, i.last - i.from + 1};
  }
  EXPECT_EQ(transients, (std::map<std::string, std::pair<std::int64_t, std::size_t>>{
                            {"b2_fcA@recompute", {512, 2}}, {"b2_fcB@recompute", {256, 1}}}));
  EXPECT_GE(w.peak_activation_bytes, w.peak_saved_activation_bytes);
}

TEST_F(Checkpoint, EveryMicroBatchGetsTheSameRegions) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "toml");
  const GraphPtr fwd = r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))->load(dir_.write("w.toml", chain()));
  const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
  TrainingSettings settings;
  settings.micro_batches = 2;
  const GraphPtr g = r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(*fwd, settings);
  const std::vector<CheckpointRegion> regions =
      checkpoint_regions(*g, parse_checkpoint_policy("segments=2", SourceLocation{"test"}));
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[1].name, "segment 1: b1 .. b2 (micro-batch 2)");
  const TrainingSummary s = training_summary(*apply_checkpointing(*g, regions));
  EXPECT_EQ(s.recompute.macs, 2 * 2 * kWholeBlock);
  EXPECT_EQ(s.memory.saved_activation_bytes, 2 * 1'472);  // each micro-batch's own activations, inputs and labels
}

TEST_F(Checkpoint, PoliciesThatDoNotFitAreUserErrors) {
  const GraphPtr g = training_graph(dir_, chain());
  try {
    (void)checkpointed(g, "segments=5");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("only 4 top-level"));
  }
  try {
    (void)checkpointed(g, "modules=layer*");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("top-level modules: b1, b2, b3, head"));
  }
  EXPECT_THROW((void)parse_checkpoint_policy("segments=0", SourceLocation{"x"}), UserError);
  EXPECT_THROW((void)parse_checkpoint_policy("optimal", SourceLocation{"x"}), UserError);
  EXPECT_EQ(parse_checkpoint_policy("every_k=sqrt", SourceLocation{"x"}).text(), "every_k=sqrt");
  EXPECT_EQ(parse_checkpoint_policy("modules=layer*,fc", SourceLocation{"x"}).modules.size(), 2u);
}

}  // namespace
}  // namespace monet
