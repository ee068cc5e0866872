// Computation-node graphs and the list scheduler, on cases small enough to work out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/ir/ops.hpp"
#include "monet/schedule/schedule.hpp"
#include "support/test_support.hpp"
#include "support/graph_builders.hpp"

namespace monet {
namespace {

using test::named;
using test::tensor;

/// x[1,1,8,8] -> conv1 (3x3, pad 1) -> y -> conv2 (3x3, pad 1) -> z, all fp32.
GraphPtr two_convs() {
  GraphBuilder b("two_convs");
  const TensorId x = tensor(b, "x", {1, 1, 8, 8}, TensorRole::input);
  const TensorId w1 = tensor(b, "w1", {1, 1, 3, 3}, TensorRole::weight);
  const TensorId w2 = tensor(b, "w2", {1, 1, 3, 3}, TensorRole::weight);
  const TensorId y = tensor(b, "y", {1, 1, 8, 8});
  const TensorId z = tensor(b, "z", {1, 1, 8, 8});
  ops::Conv2dSpec s;
  s.kernel = {3, 3};
  s.pads = {1, 1, 1, 1};
  ops::conv2d(b, named("conv1"), x, w1, std::nullopt, y, s);
  ops::conv2d(b, named("conv2"), y, w2, std::nullopt, z, s);
  return std::move(b).build();
}

/// Tiles of an operator split in two along a dimension.
std::vector<ComputationNode> halves(const Graph& g, OperatorId op, const std::string& dim) {
  const Operator& o = g.op(op);
  const auto d = static_cast<std::size_t>(o.dim_index(dim));
  std::vector<ComputationNode> out(2);
  for (int i = 0; i < 2; ++i) {
    out[static_cast<std::size_t>(i)].op = op;
    out[static_cast<std::size_t>(i)].ranges = o.full_ranges();
    const std::int64_t half = o.dims[d].size / 2;
    out[static_cast<std::size_t>(i)].ranges[d] = Range{i * half, (i + 1) * half};
  }
  return out;
}

TEST(CNGraph, EdgesFollowTheConvolutionHalo) {
  const GraphPtr g = two_convs();
  auto nodes = halves(*g, 0, "OY");
  auto second = halves(*g, 1, "OY");
  nodes.insert(nodes.end(), second.begin(), second.end());
  const CNGraph cn = connect_tiles(*g, nodes);
  // conv2 rows [0,4) read y rows [-1,5) -> [0,5): 4 rows from conv1's first tile, 1 from its second.
  // conv2 rows [4,8) read y rows [3,9) -> [3,8): 1 row from the first tile, 4 from the second. Row = 8 × 32 bits.
  ASSERT_EQ(cn.edges.size(), 4u);
  auto bits = [&](int src, int dst) {
    for (const CNEdge& e : cn.edges) {
      if (e.src == src && e.dst == dst) return e.bits;
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(bits(0, 2), 4 * 256);
  EXPECT_EQ(bits(1, 2), 1 * 256);
  EXPECT_EQ(bits(0, 3), 1 * 256);
  EXPECT_EQ(bits(1, 3), 4 * 256);
  // conv1's first tile reads x rows [0,5) and the whole 3x3 weight from off-chip.
  ASSERT_EQ(cn.source_reads[0].size(), 2u);
  EXPECT_EQ(cn.source_reads[0][0].bits, 5 * 256);
  EXPECT_EQ(cn.source_reads[0][1].bits, 9 * 32);
  // z is the graph output: each conv2 tile writes half of it.
  EXPECT_EQ(cn.sink_bits[2], 4 * 256);
  EXPECT_EQ(cn_name(*g, cn.nodes[3]), "conv2[OY 4:8]");
}

TEST(CNGraph, TilesMustCoverAndMayComeInAnyPriorityOrder) {
  const GraphPtr g = two_convs();
  auto nodes = halves(*g, 0, "OY");
  auto second = halves(*g, 1, "OY");
  auto missing = nodes;
  missing.push_back(second[0]);  // conv2's second half is missing
  EXPECT_THROW(connect_tiles(*g, missing), InternalError);
  // The node order is a priority, not a topological order: conv2's tiles listed first still depend on conv1's.
  auto reversed = second;
  reversed.insert(reversed.end(), nodes.begin(), nodes.end());
  const CNGraph cn = connect_tiles(*g, reversed);
  // conv2[OY 0:4] reads rows 0..4 of conv1's output (3x3, padding 1): both halves (nodes 2 and 3).
  ASSERT_EQ(cn.in_edges[0].size(), 2u);
  EXPECT_EQ(cn.edges[static_cast<std::size_t>(cn.in_edges[0][0])].src, 2);
  EXPECT_EQ(cn.edges[static_cast<std::size_t>(cn.in_edges[0][1])].src, 3);
  EXPECT_EQ(cn.edges[static_cast<std::size_t>(cn.in_edges[0][1])].bits, 1 * 8 * 32);  // one row of 8 fp32 values
  EXPECT_EQ(cn.in_edges[1].size(), 2u);
}

const char* kVectorCore = R"([core]
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

Cost hundred(const ComputationNode&, int, const StreamedOperands&) {
  Cost c;
  c.cycles = 100;
  return c;
}

/// Two cores that only reach each other through DRAM (one link each).
const char* kViaDram = R"([accelerator]
name = "via_dram"
[[cores]]
name = "c0"
file = "vec.toml"
[[cores]]
name = "c1"
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
[[links]]
name = "l1"
endpoints = ["c1", "dram"]
bandwidth_bits_per_cycle = 64
energy_pj_per_bit = 0.5
)";

TEST(Scheduler, DataBetweenUnlinkedCoresGoesThroughDram) {
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kViaDram));
  GraphBuilder b("chain");
  const TensorId x = tensor(b, "x", {256}, TensorRole::input);  // 256 × 32 = 8192 bits
  const TensorId a = tensor(b, "a", {256});
  const TensorId c = tensor(b, "c", {256});
  ops::elementwise(b, named("first"), {x}, a, 1);
  ops::elementwise(b, named("second"), {a}, c, 1);
  const GraphPtr g = std::move(b).build();
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, {1, 1, g->op(1).full_ranges(), 1}});
  const std::vector<std::vector<int>> allowed{{0}, {1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = [](const ComputationNode&, int, const StreamedOperands&) {
    Cost c;
    c.cycles = 100;
    return c;
  };
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  // first on c0: fetch x over l0, 8192 / 64 = 128 cycles [0,128); compute [128,228).
  EXPECT_EQ(r.nodes[0].start, 128);
  EXPECT_EQ(r.nodes[0].end, 228);
  // a to c1 via DRAM: c0 -> dram [228,356), dram -> c1 [356,484); second computes [484,584).
  ASSERT_EQ(r.transfers.size(), 4u);
  EXPECT_EQ(r.transfers[1].to, Accelerator::kOffChip);
  EXPECT_EQ(r.transfers[1].start, 228);
  EXPECT_EQ(r.transfers[2].end, 484);
  EXPECT_EQ(r.nodes[1].start, 484);
  // c is the graph output: written back over l1 [584,712).
  EXPECT_EQ(r.transfers[3].start, 584);
  EXPECT_EQ(r.summary.latency_cycles, 712);
  EXPECT_EQ(r.summary.offchip_read_bits, 2 * 8192);
  EXPECT_EQ(r.summary.offchip_write_bits, 2 * 8192);
  // Off-chip energy 16384 × 1 + 16384 × 2; links: only l1 costs 0.5 pJ/bit (dram -> c1 and the write-back).
  EXPECT_DOUBLE_EQ(r.summary.energy.offchip_pj, 16384 * 1.0 + 16384 * 2.0);
  EXPECT_DOUBLE_EQ(r.summary.energy.link_pj, 2 * 8192 * 0.5);
  // c0 holds x [0,228) and a [128,356): both during [128,228). c1 holds a [356,584) and c [484,712).
  EXPECT_EQ(r.summary.peak_memory_bits, (std::vector<std::int64_t>{16384, 16384}));
}

TEST(Scheduler, StreamRecordsNameTheirOperandAndFlowTheWayTheDataDoes) {
  // One CN on c1 streams its input x from DRAM and its output a back (8,192 bits each) while it runs 100 cycles:
  // the path holds min(16,384 / 100, 64) = 64 bits/cycle on l1 (0.5 pJ/bit). One record per operand and
  // direction: x dram -> c1 and a c1 -> dram, 32 bits/cycle and 4,096 pJ of link each; their DRAM accesses are
  // the CN's (its cost), not the records'.
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kViaDram));
  GraphBuilder b("stream");
  const TensorId x = tensor(b, "x", {256}, TensorRole::input);
  const TensorId a = tensor(b, "a", {256});
  ops::elementwise(b, named("first"), {x}, a, 1);
  const GraphPtr g = std::move(b).build();
  ComputationNode node{0, 0, g->op(0).full_ranges(), 0};
  node.streamed = true;
  const CNGraph cns = connect_tiles(*g, {node});
  const std::vector<std::vector<int>> allowed{{1}};
  const std::vector<int> fixed{-1};
  const CostFunction cost = [](const ComputationNode&, int, const StreamedOperands& s) {
    Cost c;
    c.cycles = 100;
    if (s.slot[static_cast<int>(OperandSlot::I1)]) c.offchip_read_bits_by_slot[static_cast<int>(OperandSlot::I1)] = 8192;
    if (s.slot[static_cast<int>(OperandSlot::O)]) c.offchip_write_bits_by_slot[static_cast<int>(OperandSlot::O)] = 8192;
    c.offchip_read_bits = c.offchip_read_bits_by_slot[0];
    c.offchip_write_bits = c.offchip_write_bits_by_slot[2];
    c.offchip_energy_pj = 8192 * 1.0 + 8192 * 2.0;
    c.memory_energy_pj = c.offchip_energy_pj;
    c.energy_pj = c.memory_energy_pj;
    return c;
  };
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  ASSERT_EQ(r.transfers.size(), 2u);
  const Transfer& in = r.transfers[0];
  const Transfer& out = r.transfers[1];
  EXPECT_EQ(in.tensor, x);
  EXPECT_EQ(in.from, Accelerator::kOffChip);
  EXPECT_EQ(in.to, 1);
  EXPECT_EQ(out.tensor, a);
  EXPECT_EQ(out.from, 1);
  EXPECT_EQ(out.to, Accelerator::kOffChip);
  for (const Transfer* t : {&in, &out}) {
    EXPECT_EQ(t->cause, TransferCause::stream);
    EXPECT_EQ(t->start, 0);
    EXPECT_EQ(t->end, 100);
    EXPECT_EQ(t->bits, 8192);
    EXPECT_DOUBLE_EQ(t->bandwidth, 32.0);
    EXPECT_DOUBLE_EQ(t->link_energy_pj, 4096.0);
    EXPECT_DOUBLE_EQ(t->read_energy_pj + t->write_energy_pj, 0.0);
    EXPECT_DOUBLE_EQ(t->energy_pj, 4096.0);
  }
  EXPECT_DOUBLE_EQ(r.summary.energy.link_pj, 8192.0);
  EXPECT_DOUBLE_EQ(r.summary.energy.offchip_pj, 24576.0);  // the CN's accesses, once
}

TEST(Scheduler, EveryTransferRecordSplitsItsEnergyByWhereItIsSpent) {
  // The chain of DataBetweenUnlinkedCoresGoesThroughDram: x fetched to c0 (l0, 0 pJ/bit), a via DRAM to c1, c written
  // back over l1 (0.5 pJ/bit). Each record: read at its source + link + write at its destination, and the
  // records add up to the summary (the cores' SRAMs cost 0 here).
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kViaDram));
  GraphBuilder b("chain");
  const TensorId x = tensor(b, "x", {256}, TensorRole::input);
  const TensorId a = tensor(b, "a", {256});
  const TensorId c = tensor(b, "c", {256});
  ops::elementwise(b, named("first"), {x}, a, 1);
  ops::elementwise(b, named("second"), {a}, c, 1);
  const GraphPtr g = std::move(b).build();
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, {1, 1, g->op(1).full_ranges(), 1}});
  const std::vector<std::vector<int>> allowed{{0}, {1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = hundred;
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  ASSERT_EQ(r.transfers.size(), 4u);
  const std::vector<std::tuple<TensorId, int, int, double, double, double>> expected{
      {x, Accelerator::kOffChip, 0, 8192 * 1.0, 0, 0},     // fetch: DRAM read
      {a, 0, Accelerator::kOffChip, 0, 0, 8192 * 2.0},     // a to DRAM: DRAM write
      {a, Accelerator::kOffChip, 1, 8192 * 1.0, 4096, 0},  // ... and on to c1 over l1
      {c, 1, Accelerator::kOffChip, 0, 4096, 8192 * 2.0}}; // write-back of the graph output
  double link = 0, off = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Transfer& t = r.transfers[i];
    const auto& [tensor_id, from, to, read, wire, write] = expected[i];
    EXPECT_EQ(t.tensor, tensor_id) << i;
    EXPECT_EQ(t.from, from) << i;
    EXPECT_EQ(t.to, to) << i;
    EXPECT_DOUBLE_EQ(t.read_energy_pj, read) << i;
    EXPECT_DOUBLE_EQ(t.link_energy_pj, wire) << i;
    EXPECT_DOUBLE_EQ(t.write_energy_pj, write) << i;
    EXPECT_DOUBLE_EQ(t.energy_pj, read + wire + write) << i;
    link += t.link_energy_pj;
    off += t.read_energy_pj + t.write_energy_pj;
  }
  EXPECT_DOUBLE_EQ(r.summary.energy.link_pj, link);
  EXPECT_DOUBLE_EQ(r.summary.energy.offchip_pj, off);
}

TEST(Scheduler, PicksTheCoreThatFinishesFirstAndSerializesALink) {
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kViaDram));
  GraphBuilder b("fanout");
  const TensorId x = tensor(b, "x", {64}, TensorRole::input);  // 2048 bits: 32 cycles on a link
  const TensorId y = tensor(b, "y", {64}, TensorRole::input);
  ops::elementwise(b, named("p"), {x}, tensor(b, "p_out", {64}), 1);
  ops::elementwise(b, named("q"), {y}, tensor(b, "q_out", {64}), 1);
  const GraphPtr g = std::move(b).build();
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, {1, 1, g->op(1).full_ranges(), 1}});
  const std::vector<std::vector<int>> allowed{{0, 1}, {0, 1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = [](const ComputationNode&, int, const StreamedOperands&) {
    Cost c;
    c.cycles = 1000;
    return c;
  };
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  // p takes c0 (tie -> lowest id); q finishes earlier on the idle c1. Both fetch through the one DRAM port:
  // p's input [0,32), q's input waits for the port: [32,64).
  EXPECT_EQ(r.nodes[0].core, 0);
  EXPECT_EQ(r.nodes[1].core, 1);
  EXPECT_EQ(r.nodes[1].start, 64);
  // Fixing q on c0 instead makes it wait for p.
  const std::vector<int> on_c0{-1, 0};
  const ScheduleResult s = schedule(ScheduleInputs{*g, cns, *acc, allowed, on_c0, cost});
  EXPECT_EQ(s.nodes[1].core, 0);
  // q's input is prefetched while p runs (a core's next CN may fetch once its previous CN has started):
  // l0 [32,64). q starts when c0 is free, 1032, alongside p's write-back on l0.
  EXPECT_EQ(s.nodes[1].start, 1032);
}


TEST(Scheduler, AnOperatorDeclaredAfterAnotherWaitsForIt) {
  // Layer lists (ZigZag's) give each layer its own input tensors and the producer layer as `after`: q shares no
  // tensor with p but must not start before p ends, even on the other core.
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kViaDram));
  GraphBuilder b("after");
  const TensorId x = tensor(b, "x", {64}, TensorRole::input);
  const TensorId y = tensor(b, "y", {64}, TensorRole::input);
  ops::elementwise(b, named("p"), {x}, tensor(b, "p_out", {64}), 1);
  Operator q = named("q");
  q.after = {0};
  ops::elementwise(b, q, {y}, tensor(b, "q_out", {64}), 1);
  const GraphPtr g = std::move(b).build();
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, {1, 1, g->op(1).full_ranges(), 1}});
  ASSERT_EQ(cns.edges.size(), 1u);
  EXPECT_TRUE(cns.edges[0].order_only);
  EXPECT_EQ(cns.edges[0].bits, 0);
  const CostFunction cost = [](const ComputationNode&, int, const StreamedOperands&) {
    Cost c;
    c.cycles = 1000;
    return c;
  };
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, {{0}, {1}}, {-1, -1}, cost});
  EXPECT_EQ(r.nodes[0].end, 32 + 1000);  // its input over l0, then 1000 cycles
  EXPECT_EQ(r.nodes[1].start, r.nodes[0].end);  // q's input was fetched meanwhile over l1
  // p's output is a graph output: written back, not held for q.
  EXPECT_EQ(r.summary.peak_memory_bits[1], 2 * 2048);
}

// ------------------------------------------------------------------------------------------------------------
// Physics of the scheduler on hand-computed cases. Vector cores, 8192-bit tensors (256 fp32 values): every
// transfer on a 64-bit link takes 128 cycles; every CN takes 100 cycles.

const char* kPipeline = R"([accelerator]
name = "pipeline"
[[cores]]
name = "c0"
file = "vec.toml"
[[cores]]
name = "c1"
file = "vec.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 1
write_energy_pj_per_bit = 1
bandwidth_bits_per_cycle = 64
ports = 2
[[links]]
name = "l0"
endpoints = ["c0", "dram"]
bandwidth_bits_per_cycle = 64
[[links]]
name = "l1"
endpoints = ["c1", "dram"]
bandwidth_bits_per_cycle = 64
[[links]]
name = "p"
endpoints = ["c0", "c1"]
bandwidth_bits_per_cycle = 64
)";

/// Tiles of an elementwise operator over its only dim, in `parts` pieces.
std::vector<ComputationNode> pieces(const Graph& g, OperatorId op, int parts) {
  std::vector<ComputationNode> out;
  const std::int64_t n = g.op(op).dims[0].size;
  for (int i = 0; i < parts; ++i) {
    ComputationNode cn;
    cn.op = op;
    cn.ranges = {Range{i * n / parts, (i + 1) * n / parts}};
    out.push_back(cn);
  }
  return out;
}

TEST(SchedulerPhysics, TwoCorePipelineOverlapsOverOneLink) {
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kPipeline));
  GraphBuilder b("pipe");
  const TensorId x = tensor(b, "x", {512}, TensorRole::input);
  const TensorId a = tensor(b, "a", {512});
  const TensorId y = tensor(b, "y", {512});
  ops::elementwise(b, named("p"), {x}, a, 1);
  ops::elementwise(b, named("q"), {a}, y, 1);
  const GraphPtr g = std::move(b).build();
  // Depth first: p's first half, q's first half, p's second half, q's second half. Halves are 8192 bits.
  auto p = pieces(*g, 0, 2);
  auto q = pieces(*g, 1, 2);
  const CNGraph cns = connect_tiles(*g, {p[0], q[0], p[1], q[1]});
  const std::vector<std::vector<int>> allowed{{0}, {1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = hundred;
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  // p[0]: x's first half over l0 [0,128), runs [128,228). p[1]: its input is prefetched while p[0] runs
  // (l0 [128,256)) and it starts when c0 is free: [256,356).
  EXPECT_EQ(r.nodes[0].start, 128);
  EXPECT_EQ(r.nodes[2].start, 256);
  // q[0]: a's first half crosses p [228,356) while c0 runs p[1]; q[0] runs [356,456) while the second half
  // crosses: computation and transfers overlap.
  EXPECT_EQ(r.nodes[1].start, 356);
  // q[1]: a's second half crosses p [356,484), runs [484,584). y's halves go back over l1 [456,584), [584,712).
  EXPECT_EQ(r.nodes[3].start, 484);
  EXPECT_EQ(r.summary.latency_cycles, 712);
  std::int64_t on_p = 0;
  for (const Transfer& t : r.transfers) {
    if (t.link == 2) {
      EXPECT_EQ(t.end - t.start, 128);  // 8192 bits at 64 bits/cycle
      on_p += t.bits;
    }
  }
  EXPECT_EQ(on_p, 16384);
}

TEST(SchedulerPhysics, ACoreReadingHalfATileReceivesHalfOrTheWholeTile) {
  // p writes a (16,384 bits) on c0; q is split in two groups, q[0] on c0 reads the first half in place, q[1] on
  // c1 reads the second half. Exact transfers move 8,192 bits over link p; Stream's edges carry the producer's
  // whole output, so with whole_tile_transfers q[1] receives all 16,384.
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kPipeline));
  GraphBuilder b("half");
  const TensorId x = tensor(b, "x", {512}, TensorRole::input);
  const TensorId a = tensor(b, "a", {512});
  const TensorId y = tensor(b, "y", {512});
  ops::elementwise(b, named("p"), {x}, a, 1);
  ops::elementwise(b, named("q"), {a}, y, 1);
  const GraphPtr g = std::move(b).build();
  auto q = pieces(*g, 1, 2);
  for (int i = 0; i < 2; ++i) {
    q[static_cast<std::size_t>(i)].group = i;
    q[static_cast<std::size_t>(i)].groups = 2;
  }
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, q[0], q[1]});
  const std::vector<std::vector<int>> allowed{{0}, {0, 1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = hundred;
  auto on_link_p = [](const ScheduleResult& r) {
    std::int64_t bits = 0;
    for (const Transfer& t : r.transfers) bits += t.link == 2 ? t.bits : 0;
    return bits;
  };
  const ScheduleResult exact = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  EXPECT_EQ(exact.nodes[2].core, 1);
  EXPECT_EQ(on_link_p(exact), 8192);
  // p runs [256,356) after x (16,384 bits) crossed l0; q's two groups share links (32 bits/cycle each), so the
  // half crosses p in 256 cycles: q[1] starts at 612, and 256 cycles later with the whole tile.
  EXPECT_EQ(exact.nodes[2].start, 356 + 256);
  ScheduleOptions whole;
  whole.whole_tile_transfers = true;
  const ScheduleResult w = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost, whole});
  EXPECT_EQ(on_link_p(w), 16384);
  EXPECT_EQ(w.nodes[2].start, 356 + 512);
}

TEST(SchedulerPhysics, ASourceReadByTwoCoresComesFromTheNearestCopyOrFromOffChip) {
  // p on c0 and q on c1 both read the network input x (16,384 bits). By default q takes x from c0's copy over
  // link p; with sources_from_offchip (Stream: each CN's tile of a source is a tensor of its own) q fetches it
  // from off-chip memory over l1, and the read costs off-chip energy again.
  test::ScratchDir dir;
  dir.write("vec.toml", kVectorCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kPipeline));
  GraphBuilder b("shared_source");
  const TensorId x = tensor(b, "x", {512}, TensorRole::input);
  const TensorId a = tensor(b, "a", {512});
  const TensorId y = tensor(b, "y", {512});
  ops::elementwise(b, named("p"), {x}, a, 1);
  ops::elementwise(b, named("q"), {x}, y, 1);
  const GraphPtr g = std::move(b).build();
  const CNGraph cns = connect_tiles(*g, {{0, 0, g->op(0).full_ranges(), 0}, {1, 1, g->op(1).full_ranges(), 1}});
  const std::vector<std::vector<int>> allowed{{0}, {1}};
  const std::vector<int> fixed{-1, -1};
  const CostFunction cost = hundred;
  auto x_moves = [&](const ScheduleResult& r) {
    std::vector<std::string> out;
    for (const Transfer& t : r.transfers) {
      if (t.tensor == x) out.push_back(std::to_string(t.from) + "->" + std::to_string(t.to) + " " + to_string(t.cause));
    }
    return out;
  };
  const std::string dram = std::to_string(Accelerator::kOffChip);
  const ScheduleResult nearest = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  EXPECT_EQ(x_moves(nearest), (std::vector<std::string>{dram + "->0 fetch", "0->1 input"}));
  ScheduleOptions offchip;
  offchip.sources_from_offchip = true;
  const ScheduleResult own = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost, offchip});
  EXPECT_EQ(x_moves(own), (std::vector<std::string>{dram + "->0 fetch", dram + "->1 fetch"}));
}

TEST(SchedulerPhysics, AFullCoreSpillsAndFetchesBack) {
  test::ScratchDir dir;
  // One core of 24,576 bits: room for three 8192-bit tensors.
  std::string core = kVectorCore;
  core.replace(core.find("size_bits = 1_000_000"), 21, "size_bits = 24_576");
  dir.write("vec.toml", core);
  const AcceleratorPtr acc = load_accelerator(dir.write("acc.toml", kPipeline));
  GraphBuilder b("spill");
  const TensorId x = tensor(b, "x", {256}, TensorRole::input);
  const TensorId y = tensor(b, "y", {256}, TensorRole::input);
  const TensorId a = tensor(b, "a", {256});
  const TensorId big = tensor(b, "b", {512});  // 16,384 bits
  const TensorId d = tensor(b, "d", {256});
  const TensorId c = tensor(b, "c", {256});
  ops::elementwise(b, named("p"), {x}, a, 1);  // a waits for r, the last operator
  Operator q = named("q");
  q.kind = OpKind::elementwise;
  q.type = "Expand";
  q.dims = {LoopDim{"D", 256}, LoopDim{"R", 2}};
  q.operands = {Operand{}, Operand{}};
  q.operands[0].tensor = y;
  q.operands[0].slot = OperandSlot::I1;
  q.operands[0].access = {AffineExpr::of_dim(0)};
  q.operands[0].precision_bits = 32;
  q.operands[1].tensor = big;
  q.operands[1].slot = OperandSlot::O;
  q.operands[1].access = {AffineExpr{{AffineExpr::Term{1, 256}, AffineExpr::Term{0, 1}}, 0}};
  q.operands[1].precision_bits = 32;
  b.add_operator(std::move(q));
  Operator s = named("s");
  s.kind = OpKind::reduction;
  s.type = "Fold";
  s.dims = {LoopDim{"D", 256}, LoopDim{"R", 2}};
  s.operands = {Operand{}, Operand{}};
  s.operands[0].tensor = big;
  s.operands[0].slot = OperandSlot::I1;
  s.operands[0].access = {AffineExpr{{AffineExpr::Term{1, 256}, AffineExpr::Term{0, 1}}, 0}};
  s.operands[0].precision_bits = 32;
  s.operands[1].tensor = d;
  s.operands[1].slot = OperandSlot::O;
  s.operands[1].access = {AffineExpr::of_dim(0)};
  s.operands[1].precision_bits = 32;
  b.add_operator(std::move(s));
  ops::elementwise(b, named("r"), {a}, c, 1);
  const GraphPtr g = std::move(b).build();
  std::vector<ComputationNode> nodes;
  for (const Operator& op : g->operators()) nodes.push_back(ComputationNode{0, op.id, op.full_ranges(), op.id});
  const CNGraph cns = connect_tiles(*g, nodes);
  const std::vector<std::vector<int>> allowed{{0}, {0}, {0}, {0}};
  const std::vector<int> fixed{-1, -1, -1, -1};
  const CostFunction cost = hundred;
  const ScheduleResult r = schedule(ScheduleInputs{*g, cns, *acc, allowed, fixed, cost});
  // p: x over l0 [0,128), runs [128,228). q: y comes in [128,256) (prefetch); its 16,384-bit output does not
  // fit next to a and y, and no resident data is about to leave: a is spilled, l0 [256,384); q runs [384,484).
  // s runs [484,584) and writes d back, l0 [584,712). r: a comes back once b has left (584) and l0 is free:
  // [712,840); r runs [840,940); c is written back [940,1068).
  ASSERT_EQ(r.transfers.size(), 6u);
  EXPECT_EQ(r.transfers[2].cause, TransferCause::spill);
  EXPECT_EQ(r.transfers[2].start, 256);
  EXPECT_EQ(r.transfers[4].cause, TransferCause::refetch);
  EXPECT_EQ(r.transfers[4].start, 712);
  EXPECT_EQ(r.nodes[1].start, 384);
  EXPECT_EQ(r.nodes[3].start, 840);
  EXPECT_EQ(r.summary.latency_cycles, 1068);
  EXPECT_EQ(r.summary.spilled_bits, 8192);
  EXPECT_FALSE(r.summary.over_capacity);
  EXPECT_EQ(r.summary.peak_memory_bits[0], 24576);
  // The spill and the fetch back are charged to spills: 2 x 8192 bits x 1 pJ/bit off chip (on chip costs 0).
  EXPECT_DOUBLE_EQ(r.summary.energy.spill_pj, 2 * 8192.0);
  // The memory by use adds up to the total at every step. The first peak (cycle 128): x and y (graph inputs:
  // other) and a (an activation); from 384 b's 16,384 activation bits and y hold the same total.
  const MemoryTimeline& tl = r.memory[0];
  ASSERT_EQ(tl.by_use.size(), tl.steps.size());
  for (std::size_t k = 0; k < tl.steps.size(); ++k) {
    std::int64_t sum = 0;
    for (std::int64_t bits : tl.by_use[k]) sum += bits;
    EXPECT_EQ(sum, tl.steps[k].second) << "step " << k;
  }
  const PeakComposition& pc = r.peak_composition[0];
  EXPECT_EQ(pc.time, 128);
  EXPECT_EQ(pc.other, 16384);
  EXPECT_EQ(pc.activations, 8192);
  EXPECT_EQ(pc.recomputed + pc.weights + pc.gradients + pc.optimizer_states + pc.streaming, 0);
  EXPECT_TRUE(r.offchip_memory.by_use.empty());
}

}  // namespace
}  // namespace monet
