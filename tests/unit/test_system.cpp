// Systems of chips: the file format, the α–β collectives (NCCL's bus-bandwidth factors, hierarchical
// all-reduce), a pass as operators and collectives on links (overlap, contention) and Megatron's pipeline
// schedules (bubble of 1F1B and of the interleaved schedule).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "monet/system/collectives.hpp"
#include "monet/system/pass_schedule.hpp"
#include "monet/system/pipeline_schedule.hpp"
#include "monet/system/system.hpp"

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
  // A send between stages 4 chips apart crosses nodes.
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 4).seconds, 5e-6 + S / 10e9);
  EXPECT_DOUBLE_EQ(group_collective(s, CollectiveKind::send, S, 2, 1).seconds, 1e-6 + S / 50e9);
}

TEST(Collectives, TiersAGroupOccupies) {
  const System s = read_system(kSystem);  // 2 nodes of 4
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 4, 1), 1u);   // inside a node
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 2, 4), 2u);   // one chip per node
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 8, 1), 3u);   // hierarchical
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_to_all, 8, 1), 2u);   // one ring over the network
  EXPECT_EQ(collective_tiers(s, CollectiveKind::all_reduce, 1, 1), 0u);   // no group
  EXPECT_EQ(collective_tiers(s, CollectiveKind::send, 2, 4), 2u);
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

}  // namespace
}  // namespace monet
