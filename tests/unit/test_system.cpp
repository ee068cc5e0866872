// Systems of chips: the file format, the α–β collectives (NCCL's bus-bandwidth factors, hierarchical
// all-reduce), a pass as operators and collectives on links (overlap, contention) and Megatron's pipeline
// schedules (bubble of 1F1B and of the interleaved schedule); the last stage's copy of a tied word embedding.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "monet/experiment/runner.hpp"
#include "monet/system/collectives.hpp"
#include "monet/system/parallel_step.hpp"
#include "monet/system/pass_schedule.hpp"
#include "monet/system/pipeline_schedule.hpp"
#include "monet/system/system.hpp"
#include "monet/system/torus.hpp"

namespace monet {
namespace {

const std::filesystem::path kSystem = std::filesystem::path(MONET_SOURCE_DIR) / "tests/data/systems/two_nodes.toml";

TEST(System, ReadsTiersAndChip) {
  const System s = read_system(kSystem);
  EXPECT_EQ(s.chips(), 8);
  EXPECT_EQ(s.intra_node.name, "fabric");
  EXPECT_DOUBLE_EQ(s.intra_node.efficiency, 0.5);
  EXPECT_DOUBLE_EQ(s.inter_node.efficiency, 1.0);
  EXPECT_TRUE(std::filesystem::exists(s.chip));
}

// A tier's compute_share (default 0): a collective takes the largest share of the tiers it uses; a share of 1
// (the chip stopped) is refused at its key.
TEST(System, CollectivesTakeTheirTiersComputeShare) {
  System s = read_system(kSystem);
  EXPECT_EQ(s.intra_node.compute_share, 0);
  s.intra_node.compute_share = 0.1, s.inter_node.compute_share = 0.05;
  constexpr unsigned fabric = 1, network = 1u << kTierLinkBits;
  EXPECT_EQ(collective_compute_share(s, fabric), 0.1);
  EXPECT_EQ(collective_compute_share(s, network), 0.05);
  EXPECT_EQ(collective_compute_share(s, fabric | network), 0.1);
  EXPECT_EQ(collective_compute_share(s, 0), 0);
  std::string text;
  {
    std::ifstream in(kSystem);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.insert(text.find("[system.intra_node]\n") + 20, "compute_share = 1\n");
  const std::string chip = "\"../../../architectures/tpu_like_single.toml\"";
  text.replace(text.find(chip), chip.size(), "\"" + (std::filesystem::path(MONET_SOURCE_DIR) / "architectures/tpu_like_single.toml").string() + "\"");
  const auto file = std::filesystem::temp_directory_path() / "monet_system_compute_share.toml";
  std::ofstream(file) << text;
  try {
    (void)read_system(file);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("monet_system_compute_share.toml:9:17: error: system.intra_node.compute_share"),
              std::string::npos) << e.what();
  }
}

TEST(System, MissingFabricIsALocatedError) {
  const auto file = std::filesystem::temp_directory_path() / "monet_system_missing_fabric.toml";
  std::ofstream(file) << "[system]\nname = \"x\"\nchip = \"" << (std::filesystem::path(MONET_SOURCE_DIR) / "architectures/tpu_like_single.toml").string()
                      << "\"\nchips_per_node = 8\nnodes = 1\n";
  try {
    (void)read_system(file);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("monet_system_missing_fabric.toml:1:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("intra_node"), std::string::npos) << e.what();
  }
}

TEST(Collectives, RingTermsAreNcclBusBandwidthFactors) {
  Fabric f;
  f.bandwidth_bytes_per_s = 100e9;
  f.latency_s = 1e-6;
  const double S = 1e9;
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, reduce-scatter and all-gather (n-1)/n.
  EXPECT_DOUBLE_EQ(ring_collective(f, CollectiveKind::all_reduce, S, 8).seconds, 14e-6 + 2.0 * 7 / 8 * S / 100e9);
  EXPECT_DOUBLE_EQ(ring_collective(f, CollectiveKind::reduce_scatter, S, 8).seconds, 7e-6 + 7.0 / 8 * S / 100e9);
  EXPECT_DOUBLE_EQ(ring_collective(f, CollectiveKind::all_gather, S, 4).bytes_per_chip, 0.75 * S);
  EXPECT_DOUBLE_EQ(ring_collective(f, CollectiveKind::send, S, 2).seconds, 1e-6 + S / 100e9);
  EXPECT_EQ(ring_collective(f, CollectiveKind::all_reduce, S, 1).seconds, 0);
}

TEST(Collectives, GroupsInsideANodeAcrossNodesAndHierarchical) {
  const System s = read_system(kSystem);
  EXPECT_EQ(s.all_reduce, "ring");  // the default: ring algorithms only (NCCL's tree: below)
  const double S = 4e8;
  // 4 consecutive chips: one node, ring on the fabric at half its bandwidth.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 4, 1).seconds, 6e-6 + 1.5 * S / 50e9);
  // 2 chips 4 apart: one per node, ring on the network.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 2, 4).seconds, 2 * 5e-6 + 1.0 * S / 10e9);
  // 8 chips over 2 nodes: 2((k-1)/k)·S/B_intra + 2((N-1)/N)·(S/k)/B_inter plus the latencies.
  const CommCost h = group_collective(s, CollectiveKind::all_reduce, S, 8, 1);
  EXPECT_DOUBLE_EQ(h.seconds, 3e-6 + 0.75 * S / 50e9 + 2 * 5e-6 + 1.0 * (S / 4) / 10e9 + 3e-6 + 0.75 * S / 50e9);
  // Energy: every byte every chip sends, at its tier's pJ/bit (2 nodes x 4 chips inside, 4 rings of 2 across).
  const double inside = 2 * 4 * (0.75 * S) * 8 * 2.0e-12;
  const double across = 4 * 2 * (1.0 * S / 4) * 8 * 10.0e-12;
  EXPECT_NEAR(h.energy_j, 2 * inside + across, 1e-9);
  // An all-to-all of 8 chips on 2 nodes: each chip's 3 pieces of S/8 for its node over the fabric, its 4 for the
  // other node through its network port, at once: the network's 5e-6 + 4/8·S/10e9 is the longer.
  const CommCost a = group_collective(s, CollectiveKind::all_to_all, S, 8, 1);
  EXPECT_DOUBLE_EQ(a.seconds, 5e-6 + 0.5 * S / 10e9);
  EXPECT_NEAR(a.energy_j, 8 * (3.0 / 8 * S * 8 * 2.0e-12 + 4.0 / 8 * S * 8 * 10.0e-12), 1e-9);
  // A send between stages 4 chips apart crosses nodes.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 4).seconds, 5e-6 + S / 10e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 1).seconds, 1e-6 + S / 50e9);
}

// NCCL's tree all-reduce (src/graph/tuning.cc): 2·((k − 1)·α_fabric + ⌈log₂ N⌉·α_network) + 2·S / (0.92·B), B the
// slower of the fabric and the node's k network ports. The test system: fabric 100 GB/s × 0.5, 1 µs; network
// 10 GB/s, 5 µs; 2 nodes of 4. [system] all_reduce = "fastest" (as NCCL by default) takes whichever is shorter.
TEST(Collectives, TreeAllReduceTakesLogarithmicLatency) {
  System s = read_system(kSystem);
  s.all_reduce = "fastest";
  const double S = 4e8;
  const double ring_hierarchical = 3e-6 + 0.75 * S / 50e9 + 2 * 5e-6 + 1.0 * (S / 4) / 10e9 + 3e-6 + 0.75 * S / 50e9;
  const double tree = 2 * (3 * 1e-6 + 1 * 5e-6) + 2 * S / (0.92 * std::min(50e9, 4 * 10e9));
  EXPECT_LT(tree, ring_hierarchical);  // pipelined over both tiers, where the hierarchical ring adds its phases
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 8, 1).seconds, tree);
  // As many bytes on each tier as the hierarchical ring: the same energy.
  s.all_reduce = "ring";
  const CommCost ring = group_collective(s, CollectiveKind::all_reduce, S, 8, 1);
  EXPECT_DOUBLE_EQ(ring.seconds, ring_hierarchical);
  s.all_reduce = "fastest";
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 8, 1).energy_j, ring.energy_j);
  // Inside a node the chain has the ring's latency and less bandwidth: the ring; one chip per node on 2 nodes,
  // the ring too (2α + S/B against 2α + 2S/(0.92·B)).
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 4, 1).seconds, 6e-6 + 1.5 * S / 50e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 2, 4).seconds, 2 * 5e-6 + S / 10e9);
  s.all_reduce = "tree";  // NCCL_ALGO=tree: even where the ring is faster
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 2, 4).seconds, 2 * 5e-6 + 2 * S / (0.92 * 10e9));
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::reduce_scatter, S, 8, 1).seconds,
                   3e-6 + 0.75 * S / 50e9 + 5e-6 + 0.5 * (S / 4) / 10e9);  // all-reduce only, as NCCL
  // Small messages over many nodes: 64 chips on 16 nodes, 1 kB. The ring's 6 fabric and 30 network steps against
  // the tree's 2·(3 + 4): the tree, by 110 µs.
  s.all_reduce = "fastest";
  s.nodes = 16;
  const double small = 1e3;
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, small, 64, 1).seconds,
                   2 * (3 * 1e-6 + 4 * 5e-6) + 2 * small / (0.92 * 40e9));
  s.all_reduce = "ring";
  EXPECT_NEAR(group_collective(s, CollectiveKind::all_reduce, small, 64, 1).seconds, 6e-6 + 30 * 5e-6, 1e-7);  // plus 77 ns of bandwidth terms
}

// [system] rings = "flat": NCCL's ring through all 8 chips of 2 nodes, pipelined over both tiers at the slower of
// the fabric (100 GB/s x 0.5) and the node's 4 network ports (4 x 10 GB/s): 2 of an all-reduce's 14 steps cross the
// network, 1 of a reduce-scatter's 7; of every chip's bytes, 2 of the 8 ring edges' share crosses the network.
TEST(Collectives, FlatRingsRunThroughEveryChip) {
  System s = read_system(kSystem);
  EXPECT_EQ(s.rings, "hierarchical");
  s.rings = "flat";
  const double S = 4e8;
  const CommCost ar = group_collective(s, CollectiveKind::all_reduce, S, 8, 1);
  EXPECT_DOUBLE_EQ(ar.seconds, 12 * 1e-6 + 2 * 5e-6 + 1.75 * S / 40e9);
  EXPECT_NEAR(ar.energy_j, 8 * 1.75 * S * 8e-12 * (6.0 / 8 * 2.0 + 2.0 / 8 * 10.0), 1e-12);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::reduce_scatter, S, 8, 1).seconds, 6e-6 + 5e-6 + 0.875 * S / 40e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_gather, S, 8, 1).seconds, 6e-6 + 5e-6 + 0.875 * S / 40e9);
  // Inside one node, or one chip per node, nothing changes; nor do all-to-alls.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 4, 1).seconds, 6e-6 + 1.5 * S / 50e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_to_all, S, 8, 1).seconds, 5e-6 + 0.5 * S / 10e9);
  // With the tree as the alternative ("fastest"), the flat ring wins this large all-reduce (NCCL's choice), as
  // the tree wins small ones.
  s.all_reduce = "fastest";
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::all_reduce, S, 8, 1).seconds, ar.seconds);
}

TEST(Collectives, TiersAGroupOccupies) {
  const System s = read_system(kSystem);  // 2 nodes of 4
  constexpr unsigned fabric = 1, network = 1u << kTierLinkBits;
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 4, 1), fabric);   // inside a node
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 2, 4), network);  // one chip per node
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 8, 1), fabric | network);  // hierarchical
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_to_all, 8, 1), fabric | network);  // pieces on both
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 1, 1), 0u);       // no group
  EXPECT_EQ(collective_tiers(s, CollectiveKind::send, 2, 4), network);
}

// --- Collectives on a torus: each formula derived by hand from the torus algorithm (docs/datacenter.md) ---

const std::filesystem::path kTorus = std::filesystem::path(MONET_SOURCE_DIR) / "tests/data/systems/torus_two_slices.toml";

Fabric torus_444() {
  Fabric f;
  f.name = "ici";
  f.topology = "torus";
  f.torus = {4, 4, 4};
  f.bandwidth_bytes_per_s = 50e9;  // per link and direction
  f.latency_s = 1e-6;
  f.energy_pj_per_bit = 1.0;
  return f;
}

// Writes a system whose intra-node tier has the given extra lines, and returns read_system's error.
std::string torus_error(const std::string& name, const std::string& lines, std::int64_t chips_per_node = 64,
                        std::int64_t nodes = 1, const std::string& inter = "") {
  const auto file = std::filesystem::temp_directory_path() / name;
  std::ofstream(file) << "[system]\nname = \"x\"\nchip = \""
                      << (std::filesystem::path(MONET_SOURCE_DIR) / "architectures/tpu_v4.toml").string()
                      << "\"\nchips_per_node = " << chips_per_node << "\nnodes = " << nodes
                      << "\n\n[system.intra_node]\nname = \"ici\"\n" << lines
                      << "bandwidth_bytes_per_s = 50e9\nlatency_s = 1e-6\nenergy_pj_per_bit = 1\n" << inter;
  try {
    (void)read_system(file);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Torus, ReadsDimensionsAndRefusesWrongOnesAtTheirKey) {
  const System s = read_system(kTorus);
  EXPECT_EQ(s.intra_node.topology, "torus");
  EXPECT_EQ(s.intra_node.torus, (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(s.intra_node.torus_where.line, 12u);
  std::string e = torus_error("monet_torus_product.toml", "topology = \"torus\"\ntorus = [4, 4, 8]\n");
  EXPECT_NE(e.find("monet_torus_product.toml:10:9: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("multiply to 128 but the tier joins 64"), std::string::npos) << e;
  e = torus_error("monet_torus_missing.toml", "topology = \"torus\"\n");
  EXPECT_NE(e.find("monet_torus_missing.toml:7:1"), std::string::npos) << e;
  EXPECT_NE(e.find("torus"), std::string::npos) << e;
  e = torus_error("monet_torus_switch.toml", "torus = [4, 4, 4]\n");
  EXPECT_NE(e.find("monet_torus_switch.toml:9:9"), std::string::npos) << e;
  e = torus_error("monet_torus_one.toml", "topology = \"torus\"\ntorus = [64, 1]\n");
  EXPECT_NE(e.find("monet_torus_one.toml:10"), std::string::npos) << e;
  // A torus between nodes of several chips: which chip owns which network link is not described.
  e = torus_error("monet_torus_inter.toml", "", 2, 4,
                  "[system.inter_node]\nname = \"n\"\ntopology = \"torus\"\ntorus = [2, 2]\n"
                  "bandwidth_bytes_per_s = 1e9\nlatency_s = 0\nenergy_pj_per_bit = 1\n");
  EXPECT_NE(e.find("monet_torus_inter.toml:15:9"), std::string::npos) << e;
  EXPECT_NE(e.find("not modelled"), std::string::npos) << e;
}

TEST(Torus, GroupsMapOntoDimensionsXFastest) {
  const Fabric f = torus_444();
  auto spans = torus_spans(f, 16, 4);  // data along y and z beside tensor 4 along x
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].size, 4);
  EXPECT_EQ(spans[0].ranks, 4);
  EXPECT_TRUE(spans[0].whole_ring());
  spans = torus_spans(f, 8, 1);  // all of x, half of y
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[1].ranks, 2);
  EXPECT_FALSE(spans[1].whole_ring());
  spans = torus_spans(f, 2, 2);  // chips 0 and 2 of an x ring
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].step, 2);
  EXPECT_TRUE(spans[0].whole_ring());
  EXPECT_EQ(torus_hops(f, 16), 1);  // one step along z
  EXPECT_EQ(torus_hops(f, 3), 1);   // x = 3 is one hop round the wrap-around link
  EXPECT_EQ(torus_hops(f, 2 + 8 + 32), 6);
}

TEST(Torus, OneDimensionIsABidirectionalRing) {
  const Fabric f = torus_444();
  const double S = 1e9, B = 50e9;
  // 4 chips along x: reduce-scatter then all-gather, each 3 steps, 3/4 of S over two links (both directions).
  const CommCost c = torus_collective(f, CollectiveKind::all_reduce, S, 4, 1);
  EXPECT_DOUBLE_EQ(c.seconds, 2 * (3e-6 + 0.75 * S / (2 * B)));
  EXPECT_DOUBLE_EQ(c.bytes_per_chip, 1.5 * S);
  // Every chip sends 1.5 S, each byte over one link, at 1 pJ/bit.
  EXPECT_NEAR(c.energy_j, 4 * 1.5 * S * 8 * 1e-12, 1e-12);
  // Half a ring (2 chips of 4): one ring on the segment, its closing edge back over the same link: one direction each.
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::all_reduce, S, 2, 1).seconds, 2 * (1e-6 + 0.5 * S / B));
  // Chips 0 and 2 of a ring of 4: both ways round, 2 hops each, the links shared with the group {1, 3}: 2B/2.
  const CommCost h = torus_collective(f, CollectiveKind::all_reduce, S, 2, 2);
  EXPECT_DOUBLE_EQ(h.seconds, 2 * (1e-6 + 0.5 * S / B));
  EXPECT_NEAR(h.energy_j, 2 * (2 * 0.5 * S * 2 * 8e-12), 1e-12);
  // A dimension of two chips has one link between them.
  Fabric two = f;
  two.torus = {2, 32};
  EXPECT_DOUBLE_EQ(torus_collective(two, CollectiveKind::reduce_scatter, S, 2, 1).seconds, 1e-6 + 0.5 * S / B);
}

TEST(Torus, SeveralDimensionsReduceScatterInTurnThenGatherBack) {
  const Fabric f = torus_444();
  const double S = 1e9, B = 50e9;
  // 2-D (16 chips, x then y): x on S, y on S/4; the all-reduce twice that.
  const double rs2 = 3e-6 + 0.75 * S / (2 * B) + 3e-6 + 0.75 * (S / 4) / (2 * B);
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::reduce_scatter, S, 16, 1).seconds, rs2);
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::all_gather, S, 16, 1).seconds, rs2);
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::all_reduce, S, 16, 1).seconds, 2 * rs2);
  // The same over y and z (stride 4), beside a tensor-parallel x.
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::all_reduce, S, 16, 4).seconds, 2 * rs2);
  // 3-D (64 chips): S, S/4, S/16; bytes per chip 2 (n-1)/n S as a ring's.
  const CommCost c = torus_collective(f, CollectiveKind::all_reduce, S, 64, 1);
  EXPECT_DOUBLE_EQ(c.seconds, 2 * (9e-6 + 0.75 * (1 + 0.25 + 0.0625) * S / (2 * B)));
  EXPECT_DOUBLE_EQ(c.bytes_per_chip, 2.0 * 63 / 64 * S);
  // x whole, half of y: the y phase is a segment (one direction).
  EXPECT_DOUBLE_EQ(torus_collective(f, CollectiveKind::reduce_scatter, S, 8, 1).seconds,
                   3e-6 + 0.75 * S / (2 * B) + 1e-6 + 0.5 * (S / 4) / B);
  // A send crosses the shortest route: the time of one link, the energy of every hop.
  const CommCost send = torus_collective(f, CollectiveKind::send, S, 2, 2 + 8 + 32);
  EXPECT_DOUBLE_EQ(send.seconds, 1e-6 + S / B);
  EXPECT_NEAR(send.energy_j, 6 * S * 8e-12, 1e-12);
}

TEST(Torus, MisalignedGroupsAndUnmodelledCollectivesAreRefusedAtTheTorusKey) {
  const System s = read_system(kTorus);
  const auto refused = [&](CollectiveKind kind, std::int64_t ranks, std::int64_t stride) {
    try {
      (void)group_collective(s, kind, 1e6, ranks, stride);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = refused(CollectiveKind::all_reduce, 6, 1);  // one x ring and half of another
  EXPECT_NE(e.find("torus_two_slices.toml:12:9: error: a group of 6 chips 1 apart does not align"), std::string::npos) << e;
  e = refused(CollectiveKind::all_reduce, 2, 3);  // a step of 3 on rings of 4
  EXPECT_NE(e.find("a step of 3 does not divide dimension 0 of 4 chips"), std::string::npos) << e;
  e = refused(CollectiveKind::all_to_all, 4, 1);
  EXPECT_NE(e.find("all_to_all on the torus of 'ici' is not modelled"), std::string::npos) << e;
}

TEST(Torus, GroupAcrossSlicesIsHierarchicalWithTheTorusInside) {
  const System s = read_system(kTorus);
  const double S = 1e9, B = 50e9;
  // 128 chips: reduce-scatter on the slice's 3-D torus, all-reduce of S/64 over the 2 slices, all-gather back.
  const double inside = 9e-6 + 0.75 * (1 + 0.25 + 0.0625) * S / (2 * B);
  const CommCost h = group_collective(s, CollectiveKind::all_reduce, S, 128, 1);
  EXPECT_DOUBLE_EQ(h.seconds, inside + 2 * 5e-6 + 1.0 * (S / 64) / 10e9 + inside);
  // The links it holds: the torus's three dimensions and the network (OnATorusEachDimensionHoldsItsOwnLinks).
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 128, 1), 7u | (1u << kTierLinkBits));
  // Energy: 2 slices x 64 chips x (63/64) S at 1 pJ/bit, both phases; 64 rings of 2 across at 10 pJ/bit.
  const double torus = 2 * 64 * (63.0 / 64) * S * 8e-12;
  const double across = 64 * 2 * (S / 64) * 8 * 10e-12;
  EXPECT_NEAR(h.energy_j, 2 * torus + across, 1e-9);
  // Pipeline neighbours in the next slice use the network; inside a slice, one link of the torus.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 64).seconds, 5e-6 + S / 10e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 16).seconds, 1e-6 + S / B);
}

TEST(Collectives, OnATorusEachDimensionHoldsItsOwnLinks) {
  // 2 slices of a 4x4x4 torus over a network: a tensor group along x and a data group over y and z share no link
  // (their collectives run at once); a group of both slices also holds the network.
  const System s = read_system(kTorus);
  constexpr unsigned x = 1, y = 2, z = 4, network = 1u << kTierLinkBits;
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 4, 1), x);
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 16, 4), y | z);
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 64, 1), x | y | z);
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 128, 1), x | y | z | network);
  EXPECT_EQ(collective_tiers(s, CollectiveKind::send, 2, 16), z);  // one step along z
  EXPECT_EQ(collective_tiers(s, CollectiveKind::send, 2, 64), network);
}

PassCollective collective(double seconds, std::size_t issued, bool issued_at_start, std::size_t awaited,
                          bool awaited_at_start, unsigned tiers = 1, int group = 0) {
  PassCollective c;
  c.seconds = seconds, c.tiers = tiers, c.group = group;
  c.issued_by = issued, c.issued_at_start = issued_at_start;
  c.awaited_by = awaited, c.awaited_at_start = awaited_at_start;
  return c;
}

TEST(PassSchedule, SynchronousCollectiveIsOnTheCriticalPath) {
  PassSchedule p{{1, 2, 3}, {collective(0.5, 0, false, 0, false)}};
  const PassRun r = run_pass(p);
  EXPECT_DOUBLE_EQ(r.seconds, 6.5);
  EXPECT_DOUBLE_EQ(r.exposed_s[0], 0.5);
  EXPECT_DOUBLE_EQ(r.link_s[0], 0.5);
  EXPECT_DOUBLE_EQ(r.operator_end_s[2], 6.5);
}

TEST(PassSchedule, AsynchronousCollectiveRunsBesideTheNextOperator) {
  // Issued as the input gradient (op 0, 1 s) ends, awaited when the weight gradient (op 1, 2 s) ends.
  PassSchedule hidden{{1, 2, 1}, {collective(1.5, 0, false, 1, false)}};
  PassRun r = run_pass(hidden);
  EXPECT_DOUBLE_EQ(r.seconds, 4);
  EXPECT_DOUBLE_EQ(r.exposed_s[0], 0);
  EXPECT_DOUBLE_EQ(r.collective_start_s[0], 1);
  // Longer than the weight gradient: the second it outlasts it is exposed.
  PassSchedule longer{{1, 2, 1}, {collective(3, 0, false, 1, false)}};
  r = run_pass(longer);
  EXPECT_DOUBLE_EQ(r.seconds, 5);
  EXPECT_DOUBLE_EQ(r.exposed_s[0], 1);
  EXPECT_DOUBLE_EQ(r.link_s[0], 3);
  // Issued as op 0 starts, awaited before op 1 starts (the sequence-parallel gather beside the input gradient).
  PassSchedule gather{{1, 2}, {collective(1.5, 0, true, 1, true)}};
  r = run_pass(gather);
  EXPECT_DOUBLE_EQ(r.seconds, 3.5);
  EXPECT_DOUBLE_EQ(r.exposed_s[0], 0.5);
}

TEST(PassSchedule, CollectivesOnOneLinkWaitForEachOther) {
  // Two 1-s collectives issued as op 0 ends and awaited at the end of the pass; op 1 takes 0.5 s.
  PassSchedule same{{1, 0.5}, {collective(1, 0, false, kPassEnd, false, 1), collective(1, 0, false, kPassEnd, false, 1, 1)}};
  PassRun r = run_pass(same);
  EXPECT_DOUBLE_EQ(r.collective_start_s[1], 2);  // after the first, on the same fabric
  EXPECT_DOUBLE_EQ(r.seconds, 3);
  EXPECT_DOUBLE_EQ(r.exposed_s[0] + r.exposed_s[1], 1.5);
  // On different tiers they run at once; a hierarchical one (both tiers) waits for either.
  PassSchedule apart{{1, 0.5}, {collective(1, 0, false, kPassEnd, false, 1), collective(1, 0, false, kPassEnd, false, 2)}};
  EXPECT_DOUBLE_EQ(run_pass(apart).seconds, 2);
  PassSchedule both{{1, 0.5}, {collective(1, 0, false, kPassEnd, false, 2), collective(1, 0, false, kPassEnd, false, 3)}};
  EXPECT_DOUBLE_EQ(run_pass(both).seconds, 3);
}

// A collective whose library takes a share of the chip's compute (Fabric::compute_share) slows the operators it
// runs beside; what they lose is its exposed time. A 0.5-s collective taking 20 % issued as a 1-s operator starts:
// the operator does 0.4 s of work in its first 0.5 s and the other 0.6 s after, ending at 1.1 s; 0.1 s exposed.
// Two collectives of 20 % and 30 % on different links: each takes its share of what the other leaves, so the rate is
// 0.8 · 0.7 = 0.56 while both run; the 0.44 lost is split 2:3 between their groups.
TEST(PassSchedule, CollectivesTakeTheirShareOfTheChipsCompute) {
  PassSchedule p{{1}, {collective(0.5, 0, true, kPassEnd, false)}};
  p.collectives[0].compute_share = 0.2;
  PassRun r = run_pass(p);
  EXPECT_DOUBLE_EQ(r.seconds, 1.1);
  EXPECT_DOUBLE_EQ(r.compute_s, 1);
  EXPECT_NEAR(r.exposed_s[0], 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(r.link_s[0], 0.5);
  // Issued before the operator, on a busy link: it starts 0.25 s into the operator, which then slows down.
  PassSchedule queued{{0.25, 1}, {collective(0.25, 0, true, kPassEnd, false), collective(0.5, 0, true, kPassEnd, false, 1, 1)}};
  queued.collectives[1].compute_share = 0.2;
  r = run_pass(queued);
  EXPECT_DOUBLE_EQ(r.collective_start_s[1], 0.25);
  EXPECT_NEAR(r.seconds, 1.35, 1e-15);
  EXPECT_NEAR(r.exposed_s[1], 0.1, 1e-15);
  PassSchedule both{{1}, {collective(0.5, 0, true, kPassEnd, false, 1, 0), collective(0.5, 0, true, kPassEnd, false, 2, 2)}};
  both.collectives[0].compute_share = 0.2, both.collectives[1].compute_share = 0.3;
  r = run_pass(both);
  EXPECT_NEAR(r.seconds, 1.22, 1e-15);  // 0.28 s of work in the first 0.5 s, 0.72 s after
  EXPECT_NEAR(r.exposed_s[0], 0.088, 1e-15);
  EXPECT_NEAR(r.exposed_s[2], 0.132, 1e-15);
}

TEST(PassSchedule, FirstFreeFindsAGapLongEnough) {
  // The link is held over [1, 2), [1.5, 3) and [4, 5): a 1-s use ready at 0 fits before them, one ready at 2 in
  // the 1-s gap [3, 4), one of 1.5 s only after the last, as does a 1-s use ready at 3.5.
  const std::vector<std::pair<double, double>> taken{{1, 2}, {1.5, 3}, {4, 5}};
  EXPECT_DOUBLE_EQ(first_free(taken, 0, 1), 0);
  EXPECT_DOUBLE_EQ(first_free(taken, 2, 1), 3);
  EXPECT_DOUBLE_EQ(first_free(taken, 0, 1.5), 5);
  EXPECT_DOUBLE_EQ(first_free(taken, 3.5, 1), 5);
  EXPECT_DOUBLE_EQ(first_free({}, 2, 1), 2);
}

TEST(PassSchedule, AwaitedBeforeIssuedIsAnInternalError) {
  PassSchedule p{{1, 1}, {collective(1, 1, false, 0, false)}};
  EXPECT_THROW((void)run_pass(p), InternalError);
  PassSchedule same_start{{1, 1}, {collective(1, 1, true, 1, true)}};  // awaited as op 1 starts, issued right after
  EXPECT_THROW((void)run_pass(same_start), InternalError);
}

PipelineTimes uniform(std::int64_t p, std::int64_t v, std::int64_t m, double f, double b) {
  PipelineTimes t;
  t.stages = p;
  t.chunks = v;
  t.micro_batches = m;
  t.forward.assign(static_cast<std::size_t>(p * v), f / static_cast<double>(v));
  t.backward.assign(static_cast<std::size_t>(p * v), b / static_cast<double>(v));
  return t;
}

TEST(Pipeline, OneFOneBBubbleIsStagesMinusOnePasses) {
  // Narayanan et al. §2.2: bubble = (p-1)·(t_f + t_b); step = (m + p - 1)·(t_f + t_b).
  const PipelineRun r = simulate_pipeline(uniform(4, 1, 8, 1.0, 2.0));
  EXPECT_DOUBLE_EQ(r.makespan_s, (8 + 3) * 3.0);
  EXPECT_DOUBLE_EQ(r.bubble_s, 3 * 3.0);
  for (double b : r.busy_s) EXPECT_DOUBLE_EQ(b, 8 * 3.0);
}

TEST(Pipeline, InterleavingDividesTheBubbleByChunks) {
  // With v chunks per stage the bubble is (p-1)·(t_f + t_b)/v.
  for (std::int64_t v : {2, 3, 4}) {
    const PipelineRun r = simulate_pipeline(uniform(4, v, 8, 1.0, 2.0));
    EXPECT_NEAR(r.bubble_s, 3 * 3.0 / static_cast<double>(v), 1e-12) << v;
    EXPECT_NEAR(r.makespan_s, 8 * 3.0 + 3 * 3.0 / static_cast<double>(v), 1e-12) << v;
  }
}

TEST(Pipeline, OneStageRunsItsMicroBatchesBackToBack) {
  const PipelineRun r = simulate_pipeline(uniform(1, 1, 5, 1.0, 2.0));
  EXPECT_DOUBLE_EQ(r.makespan_s, 15.0);
  EXPECT_DOUBLE_EQ(r.bubble_s, 0.0);
}

TEST(Pipeline, InFlightMicroBatchesOfTheFirstStage) {
  // 1F1B keeps p micro-batches' activations on the first stage and one on the last (Korthikanti et al. §4.2.3);
  // interleaving keeps (1 + (p-1)/(p·v)) times a stage's layers' worth on the first (their Fig. 1 factor).
  PipelineTimes t = uniform(4, 1, 8, 1.0, 2.0);
  t.saved_bytes.assign(4, 10.0);
  PipelineRun r = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(r.peak_saved_bytes[0], 40.0);
  EXPECT_DOUBLE_EQ(r.peak_saved_bytes[3], 10.0);
  t = uniform(4, 2, 8, 1.0, 2.0);
  t.saved_bytes.assign(8, 5.0);  // each chunk half a stage's layers
  r = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(r.peak_saved_bytes[0], 40.0 * (1 + 3.0 / 8));
}

TEST(Pipeline, SendsDelayTheDependentPasses) {
  PipelineTimes t = uniform(2, 1, 1, 1.0, 2.0);
  t.send_s = 0.5;
  // F0, send, F1, B1, send, B0.
  EXPECT_DOUBLE_EQ(simulate_pipeline(t).makespan_s, 1 + 0.5 + 1 + 2 + 0.5 + 2);
}

// Megatron's sends block the sender until they complete. Two stages, two micro-batches, 1F1B, sends of 0.5: stage 0
// runs F0 (0–1), waits for its send (–1.5), F1 (1.5–2.5), waits (–3), and B0 when stage 1's B0 (2.5–4.5, then its
// send –5) has arrived (5–7); stage 1's F1 (5–6) and B1 (6–8, send –8.5) let stage 0's B1 run 8.5–10.5. Without the
// blocking the step would be 10.
TEST(Pipeline, SendsBlockTheSendingStage) {
  PipelineTimes t = uniform(2, 1, 2, 1.0, 2.0);
  t.send_s = 0.5;
  const PipelineRun r = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(r.makespan_s, 10.5);
  EXPECT_DOUBLE_EQ(r.send_blocked_s[0], 1.0);  // after its two forward passes
  EXPECT_DOUBLE_EQ(r.send_blocked_s[1], 1.0);  // after its two backward passes
  EXPECT_DOUBLE_EQ(r.bubble_s, 10.5 - 6.0 - 1.0);
  // Both chips' links carry every send: stage 0's two forward sends, then stage 1's two backward ones.
  EXPECT_TRUE(r.send_intervals[0].empty());  // recorded on request
  t.record_sends = true;
  const PipelineRun recorded = simulate_pipeline(t);
  EXPECT_EQ(recorded.makespan_s, r.makespan_s);
  using Spans = std::vector<std::pair<double, double>>;
  const Spans sends{{1, 1.5}, {2.5, 3}, {4.5, 5}, {8, 8.5}};
  for (std::size_t s = 0; s < 2; ++s) {
    Spans spans = recorded.send_intervals[s];
    std::sort(spans.begin(), spans.end());
    EXPECT_EQ(spans, sends) << s;
  }
  // Megatron-Core's overlap_p2p_comm: the sender goes on at once, the receiver still waits for the data.
  t.blocking_sends = false;
  const PipelineRun overlapped = simulate_pipeline(t);
  EXPECT_DOUBLE_EQ(overlapped.makespan_s, 10.0);
  EXPECT_DOUBLE_EQ(overlapped.send_blocked_s[0] + overlapped.send_blocked_s[1], 0.0);
}

// Megatron's tied word embedding with pipeline parallelism: the small GPT (h 256, V 1,024, s 128, 2 layers; bf16
// weights and gradients, Adam's fp32 master copy and two moments: 12 B per parameter) on t 2, p 2, d 2 over two
// nodes of 4 chips (tests/data/experiments/gpt_small_system.toml). Per tensor-parallel rank: the word table
// V/t·h = 131,072 parameters, positions s·h = 32,768, a layer 395,648 (two LayerNorms 2·2h, linear_qkv h·3h/t + 3h/t,
// linear_proj h/t·h + h, linear_fc1 h·4h/t + 4h/t, linear_fc2 4h/t·h + h), the final LayerNorm 2h = 512.
ParallelStep small_gpt_step(const std::vector<std::string>& sets) {
  const auto file = std::filesystem::path(MONET_SOURCE_DIR) / "tests/data/experiments/gpt_small_system.toml";
  const RunResult r = run(prepare(load_experiment(file, sets, Registry::global()), Registry::global()));
  EXPECT_TRUE(r.best.summary.parallel);
  return r.best.summary.parallel ? *r.best.summary.parallel : ParallelStep{};
}

// Megatron's scatter/gather of pipeline sends: the small GPT's boundary, one micro-batch's hidden states (2·128·256
// bf16 = 131,072 B), goes from stage 0's chips to stage 1's 4 apart, over the network: each of the t = 2 ranks
// sends half (5 us + 65,536 B / 10 GB/s), and the receivers all-gather it inside their node (1 us + 1/2 · 131,072 B /
// (100 GB/s · 0.5)). With sequence parallelism the boundary is already split: a plain send of the rank's half.
TEST(TiedEmbedding, PipelineSendsScatterOverTheTensorGroupAndGatherInTheNode) {
  const ParallelStep r = small_gpt_step({});
  EXPECT_NEAR(r.pipeline_send_s, 5e-6 + 65'536 / 10e9 + 1e-6 + 65'536 / 50e9, 1e-15);
  const ParallelStep sp = small_gpt_step({"parallelism.sequence_parallel=true"});
  EXPECT_NEAR(sp.pipeline_send_s, 5e-6 + 65'536 / 10e9, 1e-15);
  EXPECT_GT(r.pipeline_comm_s, 0);
  EXPECT_NEAR(r.step_time_s,
              r.compute_s + r.tensor_comm_s + r.pipeline_comm_s + r.bubble_s + r.data_comm_s + r.optimizer_s, 1e-15);
}

TEST(TiedEmbedding, LastStageHoldsACopyAndAllReducesItsGradientWithTheFirst) {
  const std::int64_t table = 512 * 256, positions = 128 * 256, layer = 395'648, final_ln = 512;
  const ParallelStep r = small_gpt_step({});
  ASSERT_EQ(r.stage_memory.size(), 2u);
  // The first stage: the table, the positions, layer 0; the last: layer 1, the final LayerNorm and its own copy of
  // the table for the output layer, with the copy's gradient and optimizer states.
  const std::int64_t first = table + positions + layer, last = layer + final_ln + table;
  EXPECT_EQ(r.stage_memory[0].weights, 2 * first);
  EXPECT_EQ(r.stage_memory[0].gradients, 2 * first);
  EXPECT_EQ(r.stage_memory[0].optimizer_states, 12 * first);
  EXPECT_EQ(r.stage_memory[1].weights, 2 * last);
  EXPECT_EQ(r.stage_memory[1].gradients, 2 * last);
  EXPECT_EQ(r.stage_memory[1].optimizer_states, 12 * last);
  EXPECT_EQ(r.tied_copy.weights, 2 * table);
  EXPECT_EQ(r.tied_copy.gradients, 2 * table);
  EXPECT_EQ(r.tied_copy.optimizer_states, 12 * table);
  // The embedding group: stage 0's chip and stage 1's, t·cp·d·(p − 1) = 4 chips apart, on two nodes: a ring of two
  // on the network (5 us, 10 GB/s): 2·α + 2·(2 − 1)/2 · S/β for the copy's bf16 gradient S.
  const double all_reduce = 2 * 5e-6 + 2.0 * table / 10e9;
  EXPECT_NEAR(r.tied_comm_s, all_reduce, 1e-18);
  // After both stages' data-parallel all-reduces (Megatron's finalize_model_grads): the first stage ends its last
  // backward pass last (1F1B) and reduces its gradients over d = 2 chips 2 apart in a node (1 us, 100 GB/s at
  // 0.5), so the step's data-parallel part is that all-reduce, then the embedding's.
  const double first_reduce = 2 * 1e-6 + 2.0 * first * 2 / 2 / (100e9 * 0.5);
  EXPECT_NEAR(r.data_comm_s, first_reduce + all_reduce, 1e-15);
  EXPECT_NEAR(r.step_time_s,
              r.compute_s + r.tensor_comm_s + r.pipeline_comm_s + r.bubble_s + r.data_comm_s + r.optimizer_s, 1e-15);

  // ZeRO 1 shards the copy's optimizer states over d as the first stage's; the all-reduce moves the whole gradient.
  const ParallelStep z1 = small_gpt_step({"parallelism.zero_stage=1"});
  EXPECT_EQ(z1.tied_copy.optimizer_states, 12 * table / 2);
  EXPECT_EQ(z1.stage_memory[1].optimizer_states, 12 * last / 2);
  EXPECT_EQ(z1.tied_copy.gradients, 2 * table);
  EXPECT_NEAR(z1.tied_comm_s, all_reduce, 1e-18);
  // ZeRO 2 keeps each chip's 1/d of the gradient: that is what it all-reduces.
  const ParallelStep z2 = small_gpt_step({"parallelism.zero_stage=2"});
  EXPECT_EQ(z2.tied_copy.gradients, 2 * table / 2);
  EXPECT_NEAR(z2.tied_comm_s, 2 * 5e-6 + 2.0 * table / 2 / 10e9, 1e-18);
}

TEST(TiedEmbedding, OneStageHoldsTheTableOnce) {
  // p = 1: both readers on one chip, the table counted once, no copy and no all-reduce (the step's time is
  // bit-identical to before the copy was modelled: docs/validation.md's p = 1 rows did not move).
  const ParallelStep r = small_gpt_step({"parallelism.pipeline=1", "parallelism.data=4"});
  ASSERT_EQ(r.stage_memory.size(), 1u);
  EXPECT_EQ(r.stage_memory[0].weights, 2 * (512 * 256 + 128 * 256 + 2 * 395'648 + 512));
  EXPECT_EQ(r.tied_comm_s, 0);
  EXPECT_EQ(r.tied_copy.weights + r.tied_copy.gradients + r.tied_copy.optimizer_states, 0);
}

}  // namespace
}  // namespace monet
