// loopnest's shared memories (the `shared_memories` parameter; docs/architectures.md): on a core whose L2 is one
// memory for all the cores an operator is split over, an input every sibling reads whole crosses from off chip
// into it once for all of them. Checked on the A100 SM core with a ResNet-18-CIFAR convolution split 8 ways along
// its output channels: the activations' off-chip reads fall to 1/8, the weights' stay, and less traffic never
// costs time or energy.
#include <gtest/gtest.h>

#include "monet/arch/accelerator.hpp"
#include "monet/arch/core.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/test_support.hpp"
#include "support/training_operators.hpp"

namespace monet {
namespace {

std::shared_ptr<const CostModel> loopnest(std::vector<std::string> shared) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::cost_model, "loopnest");
  ParamValues p = default_params(h->info.params, "test");
  p.set("shared_memories", ParamValue(std::move(shared)));
  return r.create<CostModel>(*h, p);
}

TEST(LoopnestShared, AnInputAllSiblingsReadLeavesOffChipOnceForAll) {
  const GraphPtr g = test::training_step(test::source_dir());
  // The SM as the scheduler costs it: every operand streams from HBM (the kernel's streamed-core variant).
  const AcceleratorPtr acc = load_accelerator(test::source_dir() / "architectures/gpu_a100.toml");
  StreamedOperands all;
  all.slot[0] = all.slot[1] = all.slot[2] = true;
  const auto core = std::make_shared<const Core>(with_offchip(*acc->cores.front().core, acc->offchip, all));
  const Operator* conv = g->find_operator("/layer3/layer3.1/conv1/Conv");
  ASSERT_NE(conv, nullptr);
  std::vector<Range> tile = conv->full_ranges();
  std::size_t k = 0;
  while (conv->dims[k].name != "K") ++k;
  tile[k] = Range{0, conv->dims[k].size / 8};  // one of 8 siblings along the output channels
  CostQuery q{*g, *conv, tile, *core};
  q.offchip_sharers = 8;
  const Cost apart = loopnest({})->evaluate(q);
  const Cost shared = loopnest({"l2_share"})->evaluate(q);

  const auto input = static_cast<std::size_t>(OperandSlot::I1);   // the activations: not indexed by K
  const auto weights = static_cast<std::size_t>(OperandSlot::I2);  // the weights: this sibling's K slice
  ASSERT_GT(apart.offchip_read_bits_by_slot[input], 0);
  // Within 0.1 %: the reads are counted in whole words of the HBM port (measured 65,591 against 65,537.5 bits).
  const double eighth = static_cast<double>(apart.offchip_read_bits_by_slot[input]) / 8;
  EXPECT_NEAR(static_cast<double>(shared.offchip_read_bits_by_slot[input]), eighth, 1e-3 * eighth);
  EXPECT_EQ(shared.offchip_read_bits_by_slot[weights], apart.offchip_read_bits_by_slot[weights]);
  EXPECT_LE(shared.cycles, apart.cycles);
  EXPECT_LT(shared.energy_pj, apart.energy_pj);

  // Without siblings nothing is shared: the same numbers with or without the parameter.
  q.offchip_sharers = 1;
  const Cost alone = loopnest({"l2_share"})->evaluate(q);
  EXPECT_EQ(alone.cycles, loopnest({})->evaluate(q).cycles);
  EXPECT_EQ(alone.offchip_read_bits, loopnest({})->evaluate(q).offchip_read_bits);
}

}  // namespace
}  // namespace monet
