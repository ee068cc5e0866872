// Activation offloading worked out by hand: a four-layer chain on one core whose first layer's saved activation is
// paged out to off-chip memory after its forward reader and fetched back for its backward reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/ir/ops.hpp"
#include "monet/schedule/schedule.hpp"
#include "monet/training/offload.hpp"
#include "support/graph_builders.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using test::named;
using test::tensor;

const char* kCore = R"([core]
name = "vec"
op_kinds = ["elementwise"]
[array]
dims = ["D1"]
sizes = [4]
unit_energy_pj = 0
[[memories]]
name = "sram"
size_bits = 1_000_000
read_energy_pj = 0
write_energy_pj = 0
operands = ["I1", "I2", "O"]
served_dims = ["D1"]
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["tl"], I2 = ["tl"], O = ["fl"] }
)";

const char* kAccelerator = R"([accelerator]
name = "one_core"
[[cores]]
name = "c0"
file = "vec.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 1
write_energy_pj_per_bit = 2
bandwidth_bits_per_cycle = 64
[[links]]
name = "l0"
endpoints = ["c0", "dram"]
bandwidth_bits_per_cycle = 64
energy_pj_per_bit = 0.5
)";

/// x -> l1 -> a1 -> l2 -> a2 -> l3 -> a3 -> l4 -> a4, then the backward chain b4 (a4, a3), b3 (g3, a2),
/// b2 (g2, a1), b1 (g1) -> g0 (the graph output). Every tensor 256 fp32 = 8192 bits.
GraphPtr chain() {
  GraphBuilder b("chain");
  const TensorId x = tensor(b, "x", {256}, TensorRole::input);
  std::vector<TensorId> a{x};
  for (int i = 1; i <= 4; ++i) {
    a.push_back(tensor(b, "a" + std::to_string(i), {256}));
    ops::elementwise(b, named("/l" + std::to_string(i) + "/Relu"), {a[i - 1]}, a[i], 1);
  }
  std::vector<TensorId> g(5);
  for (int i = 0; i < 4; ++i) g[i] = tensor(b, "g" + std::to_string(i), {256}, TensorRole::gradient);
  for (int i = 4; i >= 1; --i) {
    std::vector<TensorId> in = i == 4 ? std::vector<TensorId>{a[4], a[3]} : std::vector<TensorId>{g[i], a[i - 1]};
    if (i == 1) in = {g[1]};
    const OperatorId o = ops::elementwise(b, named("b" + std::to_string(i)), in, g[i - 1], 1);
    b.op(o).phase = Phase::backward_dx;
  }
  return std::move(b).build();
}

ScheduleResult run(const Graph& g, const Accelerator& acc, const std::vector<bool>* offloaded) {
  std::vector<ComputationNode> nodes;
  for (const Operator& op : g.operators()) nodes.push_back(ComputationNode{static_cast<int>(op.id), op.id, op.full_ranges(), static_cast<int>(op.id)});
  const CNGraph cns = connect_tiles(g, nodes);
  const std::vector<std::vector<int>> allowed(g.operators().size(), std::vector<int>{0});
  const std::vector<int> fixed(g.operators().size(), -1);
  const CostFunction cost = [](const ComputationNode&, int, const StreamedOperands&) {
    Cost c;
    c.cycles = 100;
    return c;
  };
  ScheduleInputs in{g, cns, acc, allowed, fixed, cost};
  in.offloaded = offloaded;
  return schedule(in);
}

TEST(Offloading, SavedActivationLeavesTheCoreBetweenItsForwardAndBackwardReaders) {
  test::ScratchDir dir;
  dir.write("vec.toml", kCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kAccelerator));
  const GraphPtr g = chain();
  // The policy: module l1's saved activation is a1 (read by l2 in the forward pass and by b2 in the backward).
  OffloadPolicy policy;
  policy.modules = {"l1"};
  const std::vector<TensorId> picked = offloaded_tensors(*g, policy);
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_EQ(g->tensor(picked[0]).name, "a1");
  const std::vector<bool> mask = offload_mask(*g, picked);

  const ScheduleResult none = run(*g, *acc, nullptr);
  const ScheduleResult off = run(*g, *acc, &mask);
  // Without offloading (100 cycles per CN, 8192 bits = 128 cycles on the link): x [0,128), l1..l4 [128,528),
  // b4 [528,628) holds a1..a4 and g3: 5 x 8192 bits at the peak; b3, b2, b1 [628,928), g0 written back [928,1056).
  EXPECT_EQ(none.summary.peak_memory_bits[0], 5 * 8192);
  EXPECT_EQ(none.summary.latency_cycles, 1056);
  // With it: a1 is written out after l2 [328,456) and leaves the core; b2 fetches it back from the start of b3
  // [628,756), 28 cycles after its core is free (the stall), and runs [756,856); g0 is written back [956,1084).
  std::vector<const Transfer*> out, back;
  for (const Transfer& t : off.transfers) {
    if (t.cause == TransferCause::offload) out.push_back(&t);
    if (t.cause == TransferCause::prefetch) back.push_back(&t);
  }
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(out[0]->bits, 8192);
  EXPECT_EQ(back[0]->bits, 8192);
  EXPECT_EQ(out[0]->to, Accelerator::kOffChip);
  EXPECT_EQ(back[0]->from, Accelerator::kOffChip);
  EXPECT_EQ(out[0]->start, 328);
  EXPECT_EQ(out[0]->end, 456);
  EXPECT_EQ(back[0]->start, 628);
  EXPECT_EQ(back[0]->end, 756);
  // Energy: bits x (link + off-chip write) out, bits x (off-chip read + link) back (the core's SRAM costs 0 here).
  EXPECT_DOUBLE_EQ(out[0]->energy_pj, 8192 * (0.5 + 2.0));
  EXPECT_DOUBLE_EQ(back[0]->energy_pj, 8192 * (1.0 + 0.5));
  EXPECT_DOUBLE_EQ(off.summary.energy.offchip_pj - none.summary.energy.offchip_pj, 8192 * (2.0 + 1.0));
  EXPECT_DOUBLE_EQ(off.summary.energy.link_pj - none.summary.energy.link_pj, 2 * 8192 * 0.5);
  EXPECT_EQ(off.summary.offchip_write_bits - none.summary.offchip_write_bits, 8192);
  EXPECT_EQ(off.summary.offchip_read_bits - none.summary.offchip_read_bits, 8192);
  EXPECT_EQ(off.summary.offload_stall_cycles, 28);
  EXPECT_EQ(none.summary.offload_stall_cycles, 0);
  EXPECT_EQ(off.summary.latency_cycles, 1084);
  // The peak falls by the offloaded bits: a1 is off chip from 456 to 628, across b4's peak.
  EXPECT_EQ(off.summary.peak_memory_bits[0], 4 * 8192);
  // by_use shows it: during b4 [528,628) the core's activations are a2, a3, a4 (g3 is a gradient).
  auto at = [](const MemoryTimeline& tl, std::int64_t t) {
    std::size_t k = 0;
    while (k + 1 < tl.steps.size() && tl.steps[k + 1].first <= t) ++k;
    return tl.by_use[k][static_cast<std::size_t>(MemoryUse::activations)];
  };
  EXPECT_EQ(at(none.memory[0], 550), 4 * 8192);
  EXPECT_EQ(at(off.memory[0], 550), 3 * 8192);
  EXPECT_EQ(at(off.memory[0], 760), 8192);  // a1 back for b2 (a2 gone after b3)
  // Off chip, a1 is held from its write until b2 has read it.
  EXPECT_EQ(to_string(TransferCause::offload), "offload");
  EXPECT_EQ(to_string(TransferCause::prefetch), "prefetch");
}

TEST(Offloading, PolicyErrorsAreLocated) {
  const GraphPtr g = chain();
  OffloadPolicy policy;
  policy.modules = {"layer*"};
  policy.where = SourceLocation{"e.toml", 9, 11};
  try {
    (void)offloaded_tensors(*g, policy);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("offload module 'layer*' matches no module of chain; top-level modules: l1, l2"));
    EXPECT_EQ(e.where().line, 9);
  }
}

}  // namespace
}  // namespace monet
