// Activation checkpointing from the command line: `inspect --training --checkpoint` against PyTorch's
// checkpoint_sequential and checkpoint(module) on ResNet-18 (tests/data/pytorch_checkpoint.json, measured by
// scripts/reference/pytorch_checkpoint.py), and a checkpointed training step on the quad core: recompute operators
// are scheduled and costed, the activation peak falls and the latency and energy rise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>

#include "support/csv.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;
using test::q;

json inspect(const std::string& policy, const std::string& model = "workloads/onnx/resnet18.onnx",
             const std::string& extra = "") {
  const auto r = test::monet("inspect " + q(test::source_dir() / model) + " --training --json --checkpoint '" + policy +
                             "' " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(r.out)["training"];
}

// Every case of tests/data/pytorch_checkpoint.json (ResNet-18 at batch 1 and 2, a 4-layer nanoGPT per block; both
// checkpoint implementations of torch 1.13, which rerun a checkpointed function whole): under the default
// semantics, "pytorch", the saved bytes after forward, the recomputed MACs and the backward peak of saved tensors
// are PyTorch's to the byte and the MAC.
TEST(Checkpointing, MatchesPyTorchToTheByte) {
  const json ref = json::parse(test::read_file(test::source_dir() / "tests/data/pytorch_checkpoint.json"))["models"];
  int cases = 0;
  for (const auto& [name, model] : ref.items()) {
    const std::string batch = " --batch " + std::to_string(model["batch"].get<int>());
    for (const auto& [policy, variants] : model["cases"].items()) {
      const json t = inspect(policy, model["file"].get<std::string>(), batch);
      for (const char* variant : {"reentrant", "nonreentrant"}) {
        const json& m = variants[variant];
        const std::string what = name + " " + policy + " " + variant;
        EXPECT_EQ(t["saved_activation_bytes"].get<long>(), m["saved_activation_bytes"].get<long>()) << what;
        EXPECT_EQ(t["recompute_macs"].get<long>(), m["recompute_macs"].get<long>()) << what;
        EXPECT_EQ(t["peak_saved_activation_bytes"].get<long>(), m["backward_peak_bytes"].get<long>()) << what;
        ++cases;
      }
      // The peak with the transients of recomputation (a recomputed output only the next recompute operator reads,
      // which PyTorch allocates too but no saved-tensor hook sees) is at least the saved one.
      EXPECT_GE(t["peak_activation_bytes"].get<long>(), t["peak_saved_activation_bytes"].get<long>()) << name << policy;
    }
  }
  EXPECT_EQ(cases, 14);
  const json two = inspect("segments=2");
  ASSERT_EQ(two["checkpoint_regions"].size(), 1u);
  EXPECT_EQ(two["checkpoint_regions"][0]["name"], "segment 1: conv1 .. layer1");
  EXPECT_EQ(two["checkpoint_regions"][0]["recompute_macs"].get<long>(), two["recompute_macs"].get<long>());
  EXPECT_EQ(inspect("modules=layer*")["checkpoint_regions"].size(), 4u);
}

// "minimal" reruns only what backward reads: the same saved bytes, fewer MACs where a region ends in an operator
// whose output only the next region reads (ResNet-18's segments = 8 ends segments in convolutions and batch norms;
// every nanoGPT block in its MLP's second projection, 4·d²·T MACs a block), the same where every region ends in a
// ReLU that saves its output (segments = 2). The figures: 2,569,011,200 and 2,415,919,104 MACs.
TEST(Checkpointing, MinimalSemanticsRecomputesOnlyWhatBackwardReads) {
  const std::string minimal = "--checkpoint-semantics minimal";
  const json gpt_pt = inspect("modules=blocks.*", "workloads/onnx/nanogpt_L4_d512_T256.onnx");
  const json gpt_min = inspect("modules=blocks.*", "workloads/onnx/nanogpt_L4_d512_T256.onnx", minimal);
  EXPECT_EQ(gpt_min["saved_activation_bytes"], gpt_pt["saved_activation_bytes"]);
  const long d = 512, T = 256, L = 4;
  EXPECT_EQ(gpt_pt["recompute_macs"].get<long>() - gpt_min["recompute_macs"].get<long>(), L * 4 * d * d * T);
  EXPECT_EQ(gpt_min["recompute_macs"].get<long>(), 2'415'919'104L);
  const json eight = inspect("segments=8", "workloads/onnx/resnet18.onnx", "--batch 2 " + minimal);
  EXPECT_EQ(eight["recompute_macs"].get<long>(), 2'569'011'200L);
  EXPECT_EQ(eight["saved_activation_bytes"].get<long>(), 26'726'224L);
  const json two_pt = inspect("segments=2", "workloads/onnx/resnet18.onnx", "--batch 2");
  const json two_min = inspect("segments=2", "workloads/onnx/resnet18.onnx", "--batch 2 " + minimal);
  EXPECT_EQ(two_min["recompute_macs"], two_pt["recompute_macs"]);
  EXPECT_EQ(two_min["peak_saved_activation_bytes"], two_pt["peak_saved_activation_bytes"]);
  // Without a policy the flag is refused, as is an unknown semantics.
  const auto r = test::monet("inspect " + q(test::source_dir() / "workloads/onnx/resnet18.onnx") +
                             " --training --checkpoint-semantics minimal");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--checkpoint-semantics"));
  const auto bad = test::monet("inspect " + q(test::source_dir() / "workloads/onnx/resnet18.onnx") +
                               " --training --checkpoint segments=2 --checkpoint-semantics lazy");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

// Per-block checkpointing of GPT-2 (Korthikanti et al.'s analysis): what stays saved is what the layers outside the
// blocks save (embeddings' indices, final LayerNorm, head, loss) plus each block's input — the previous block's
// output, which the next block (or the final LayerNorm) saves. Derived from the uncheckpointed run's saved bytes by
// producer, which match PyTorch (tests/data/pytorch_models.json).
TEST(Checkpointing, Gpt2PerBlockKeepsOnlyBlockInputs) {
  for (const char* model : {"gpt2_tiny_L2_T256", "gpt2_small"}) {
    const std::string file = q(test::source_dir() / "workloads/onnx" / (std::string(model) + ".onnx"));
    auto r = test::monet("inspect " + file + " --training --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const json none = json::parse(r.out)["training"];
    // Without checkpointing every saved storage is live when the backward pass starts.
    EXPECT_EQ(none["peak_activation_bytes"].get<long>(), none["saved_activation_bytes"].get<long>()) << model;
    long expected = 0;
    int block_outputs = 0;
    for (const json& s : none["saved_by_layer"]) {
      const std::string op = s["operator"];
      const bool in_block = op.rfind("/blocks.", 0) == 0;
      const bool block_output = in_block && op.size() > 6 && op.substr(op.size() - 6) == "/Add_2";
      if (!in_block || block_output) expected += s["bytes"].get<long>();
      block_outputs += block_output;
    }
    r = test::monet("inspect " + file + " --training --json --checkpoint 'modules=blocks.*'");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const json per_block = json::parse(r.out)["training"];
    EXPECT_EQ(per_block["saved_activation_bytes"].get<long>(), expected) << model;
    EXPECT_EQ(static_cast<int>(per_block["checkpoint_regions"].size()), block_outputs) << model;
    EXPECT_GT(per_block["recompute_macs"].get<long>(), 0) << model;
    EXPECT_LT(per_block["recompute_macs"].get<long>(), per_block["macs_forward"].get<long>()) << model;
  }
}

// The optimal policy (DP over ResNet-18's 15 blocks, each checkpointed alone or not) against Chen et al.'s every_k
// at the same budget: given every_k's backward activation peak as the budget, it fits and recomputes no more MACs.
TEST(Checkpointing, OptimalIsNeverWorseThanEveryK) {
  // Only budgets the per-block space can meet: every_k = 2 and 4 reach 11.84 MB with multi-block regions, below
  // the 12,645,376 B the best per-block choice reaches (Rotor's runs of blocks, solver = "segments", reach them:
  // tests/unit/test_checkpoint_segments.cpp).
  for (const char* k : {"8"}) {
    const json every = inspect(std::string("every_k=") + k);
    const long budget = every["peak_activation_bytes"].get<long>();
    const json best = inspect("optimal=" + std::to_string(budget));
    EXPECT_LE(best["peak_activation_bytes"].get<long>(), budget) << k;
    EXPECT_LE(best["recompute_macs"].get<long>(), every["recompute_macs"].get<long>()) << k;
  }
  const json none = inspect("none");
  const json loose = inspect("optimal=" + std::to_string(none["peak_activation_bytes"].get<long>()));
  EXPECT_EQ(loose["recompute_macs"].get<long>(), 0);  // nothing to recompute when everything fits
  // Blocks that recompute nothing (no result backward reads) may still be checkpointed: free, at a lower peak.
  EXPECT_LE(loose["peak_activation_bytes"].get<long>(), none["peak_activation_bytes"].get<long>());
}

// The chain DPs measure their choice. MONET's small GPT-2 read with one module per node name, as monet read it
// before it resolved the calls of a shared module (tests/data/gpt2_monet_small_one_module_per_name.toml: module
// `layer` holds pass 1 and the linear layers of passes 2-4), is not a chain. At 20,746,240 B the per-block DP's
// model says its choice peaks there, the rewritten step peaks at 22,155,264 B: refused (exit 2), naming the MILP.
// The MILP, which makes no chain assumption, says no choice goes below 21,434,368 B, and meets that budget exactly.
// (Semantics "minimal", for which these budgets were worked out; the solvers under both: SolversUnderBothSemantics.)
TEST(Checkpointing, ChainDpRefusesBlocksThatAreNotAChain) {
  const std::string model = q(test::source_dir() / "tests/data/gpt2_monet_small_one_module_per_name.toml");
  const std::string budget = "20746240";
  for (const char* solver : {"dp", "segments"}) {
    const auto r = test::monet("inspect " + model + " --training --checkpoint-semantics minimal --checkpoint optimal=" + budget +
                               " --checkpoint-solver " + solver);
    EXPECT_EQ(r.exit_code, 2) << solver << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("as a chain, but they do not form one")) << solver;
    EXPECT_THAT(r.out, HasSubstr("use solver = \"milp\"")) << solver;
  }
  EXPECT_THAT(test::monet("inspect " + model + " --training --checkpoint-semantics minimal --checkpoint optimal=" + budget).out,
              HasSubstr("its choice peaks at 22155264 B, not the 20746240 B its model predicts, over the budget"));
  auto r = test::monet("inspect " + model + " --training --checkpoint-semantics minimal --checkpoint optimal=" + budget + " --checkpoint-solver milp,30");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("below the smallest backward activation peak any choice of the 7 blocks of "
                               "gpt2_monet_small reaches (21434368 B)"));
  r = test::monet("--log-level warn inspect " + model + " --training --json --checkpoint-semantics minimal --checkpoint optimal=21434368 "
                  "--checkpoint-solver milp,30");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["training"]["peak_activation_bytes"].get<long>(), 21434368);
}

// The same network from its ONNX export, each pass of the shared layer a block of its own (layer, layer_1 ..
// layer_3; docs/training.md "Modules called several times"): a chain, and every chain solver runs. Recomputing a
// pass reruns q, k, v, o (4 T d^2), Q K^T and A V (2 T^2 d) and fc1 (T d d_ff), not fc2, whose output only feeds
// the residual add the next block saves: T = 256, d = 512, d_ff = 1,376 give 515,899,392 MACs. At 20,746,240 B
// (fp32) the DP and the MILP (no chain assumption) both recompute two passes; Rotor's runs of blocks and nested
// schedules reach a lower peak for no more. (Semantics "minimal"; "pytorch" reruns fc2 too.)
TEST(Checkpointing, ChainSolversRunOnTheSharedLayerOfMonetsSmallGpt2) {
  const std::string model = q(test::source_dir() / "workloads/onnx/gpt2_monet_small.onnx");
  constexpr long kPass = 256L * 512 * (4 * 512 + 1376) + 2L * 256 * 256 * 512;
  static_assert(kPass == 515'899'392);
  const long budget = 20'746'240;
  std::map<std::string, json> t;
  for (const char* solver : {"dp", "milp,30", "segments", "rotor"}) {
    const auto r = test::monet("--log-level warn inspect " + model + " --training --json --checkpoint-semantics minimal --checkpoint optimal=" +
                               std::to_string(budget) + " --checkpoint-solver " + solver);
    ASSERT_EQ(r.exit_code, 0) << solver << "\n" << r.out;
    t[solver] = json::parse(r.out)["training"];
    EXPECT_LE(t[solver]["peak_activation_bytes"].get<long>(), budget) << solver;
  }
  EXPECT_EQ(t["dp"]["recompute_macs"].get<long>(), 2 * kPass);
  EXPECT_EQ(t["milp,30"]["recompute_macs"].get<long>(), 2 * kPass);
  EXPECT_EQ(t["milp,30"]["checkpoint_solver"]["status"], "optimal");
  for (const char* solver : {"segments", "rotor"}) {
    EXPECT_LE(t[solver]["recompute_macs"].get<long>(), 2 * kPass) << solver;
    EXPECT_LT(t[solver]["peak_activation_bytes"].get<long>(), t["dp"]["peak_activation_bytes"].get<long>()) << solver;
  }
  // checkpoint(layer_1, x) is the whole second pass, its linear layers included.
  auto r = test::monet("--log-level warn inspect " + model + " --training --json --checkpoint-semantics minimal --checkpoint modules=layer_1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["training"]["recompute_macs"].get<long>(), kPass);
  // The step on the edge TPU (int8, experiments/checkpointing/gpt2_monet_small_edge_tpu_optimal.toml) with Rotor's
  // solver: two passes recomputed within 4,222,976 B.
  test::ScratchDir dir;
  r = test::monet("run " + q(test::source_dir() / "experiments/checkpointing/gpt2_monet_small_edge_tpu_optimal.toml") +
                  " --out " + q(dir.path() / "run") + " --set 'training.checkpoint.solver=\"rotor\"' --log-level warn" +
                  " --set 'training.checkpoint.semantics=\"minimal\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = json::parse(test::read_file(dir.path() / "run/results.json"))["training"];
  EXPECT_LE(run["peak_activation_bytes"].get<long>(), 4'222'976L);
  EXPECT_EQ(run["recompute_macs"].get<long>(), 2 * kPass);
  EXPECT_EQ(run["checkpoint_solver"]["solver"], "rotor");
}

// Rotor's nested recomputation from the command line (--checkpoint-solver rotor): on ResNet-18 at segments' least
// peak, 647,069,696 MACs recomputed (segments: 1,171,308,544; docs/training.md), the stem convolution three times;
// the regions are the top-level runs and their recompute MACs count every copy. On blocks that are not a chain
// (MONET's small GPT-2 with one module per name), it refuses as the other chain DPs do. (Semantics "minimal".)
TEST(Checkpointing, RotorNestedRecomputation) {
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18.onnx");
  auto r = test::monet("--log-level warn inspect " + model +
                       " --training --json --checkpoint-semantics minimal --checkpoint optimal=9434112 --checkpoint-solver rotor");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json t = json::parse(r.out)["training"];
  EXPECT_EQ(t["recompute_macs"].get<long>(), 647'069'696);
  EXPECT_EQ(t["peak_activation_bytes"].get<long>(), 9'370'536);
  EXPECT_EQ(t["checkpoint_solver"]["solver"], "rotor");
  EXPECT_EQ(t["checkpoint_solver"]["status"], "optimal");
  long region_macs = 0;
  for (const json& x : t["checkpoint_regions"]) region_macs += x["recompute_macs"].get<long>();
  EXPECT_EQ(region_macs, 647'069'696);
  r = test::monet("--log-level warn inspect " + model + " --training --checkpoint-semantics minimal --checkpoint optimal=9434112 --checkpoint-solver rotor");
  EXPECT_THAT(r.out, HasSubstr("/conv1/Conv@recompute2"));

  const std::string gpt = q(test::source_dir() / "tests/data/gpt2_monet_small_one_module_per_name.toml");
  r = test::monet("inspect " + gpt + " --training --checkpoint-semantics minimal --checkpoint optimal=20746240 --checkpoint-solver rotor");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("its choice peaks at 25464832 B, not the 18288640 B its model predicts, over the budget"));
  EXPECT_THAT(r.out, HasSubstr("use solver = \"milp\""));

  // A run (experiments/checkpointing/resnet18_cifar_quad_core_optimal.toml: mixed bf16, cost = "latency"): the
  // scheduled step is the rewritten one, results.json says how it was solved, resolved.toml keeps the solver; a
  // budget below every schedule is located at the budget key.
  test::ScratchDir dir;
  r = test::monet("run " + q(test::source_dir() / "experiments/checkpointing/resnet18_cifar_quad_core_optimal.toml") +
                  " --out " + q(dir.path() / "run") + " --set 'training.checkpoint.solver=\"rotor\"' --log-level warn" +
                  " --set 'training.checkpoint.semantics=\"minimal\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json results = json::parse(test::read_file(dir.path() / "run/results.json"));
  EXPECT_EQ(results["training"]["checkpoint_solver"]["solver"], "rotor");
  EXPECT_EQ(results["training"]["checkpoint_solver"]["status"], "optimal");
  EXPECT_EQ(results["training"]["peak_activation_bytes"].get<long>(), 6'271'600);
  EXPECT_EQ(results["training"]["recompute_macs"].get<long>(), 536'870'912);
  EXPECT_THAT(test::read_file(dir.path() / "run/resolved.toml"), HasSubstr("solver = \"rotor\""));
  const auto low = dir.write("t.toml", "[experiment]\nname = \"x\"\n[workload]\nfile = " +
                                            q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx") +
                                            "\n[training]\nmode = \"training\"\n[training.checkpoint]\n"
                                            "budget = 1000\nsolver = \"rotor\"\n[architecture]\nfile = " +
                                            q(test::source_dir() / "architectures/tpu_like_quad_core.toml") + "\n");
  r = test::monet("run " + q(low) + " --out " + q(dir.path() / "t") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("t.toml:8:10: error: checkpoint budget 1000 B is below the smallest backward activation "
                               "peak any nested schedule of the 13 blocks of "));
}

// Gradient accumulation (--micro-batches 2) with the optimal solvers on ResNet-18-CIFAR (batch 4, 12 MB): each
// solves one micro-batch and every micro-batch recomputes its own blocks: the 1-micro-batch peak, twice its MACs,
// its blocks; every region of micro-batch 1 has its copy for micro-batch 2.
TEST(Checkpointing, SolversWithSeveralMicroBatches) {
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx");
  const std::map<std::string, std::pair<long, long>> one{{"rotor", {11'494'400, 543'948'800}},
                                                         {"dp", {10'444'992, 838'860'800}}};
  for (const auto& [solver, expected] : one) {
    json t[2];
    for (int k = 1; k <= 2; ++k) {
      const auto r = test::monet("--log-level warn inspect " + model + " --training --json --micro-batches " +
                                 std::to_string(k) + " --checkpoint-semantics minimal --checkpoint optimal=12000000 " +
                                 "--checkpoint-solver " + solver);
      ASSERT_EQ(r.exit_code, 0) << r.out;
      t[k - 1] = json::parse(r.out)["training"];
    }
    EXPECT_EQ(t[0]["peak_activation_bytes"].get<long>(), expected.first) << solver;
    EXPECT_EQ(t[0]["recompute_macs"].get<long>(), expected.second) << solver;
    EXPECT_EQ(t[1]["peak_activation_bytes"].get<long>(), expected.first) << solver;
    EXPECT_EQ(t[1]["recompute_macs"].get<long>(), 2 * expected.second) << solver;
    EXPECT_EQ(t[1]["checkpoint_solver"]["peak_activation_bytes"], t[0]["checkpoint_solver"]["peak_activation_bytes"]);
    EXPECT_EQ(t[1]["checkpoint_solver"]["checkpointed_blocks"], t[0]["checkpoint_solver"]["checkpointed_blocks"]);
    EXPECT_EQ(t[1]["checkpoint_solver"]["objective"].get<double>(), 2.0 * static_cast<double>(expected.second));
    EXPECT_EQ(t[1]["checkpoint_regions"].size(), 2 * t[0]["checkpoint_regions"].size()) << solver;
  }
}

// Every optimal solver under both semantics on ResNet-18-CIFAR (batch 4) at 9 MB: each fits the budget on the
// rewritten step (the solvers refuse a choice whose rewritten step is not their model's), the chain DP and the MILP
// agree, Rotor's runs and nested schedules never cost more, and "pytorch" never recomputes less than "minimal".
TEST(Checkpointing, SolversUnderBothSemantics) {
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx");
  const long budget = 9'000'000;
  std::map<std::string, std::map<std::string, json>> t;
  for (const char* semantics : {"pytorch", "minimal"}) {
    for (const char* solver : {"dp", "milp,30", "segments", "rotor"}) {
      const auto r = test::monet("--log-level warn inspect " + model + " --training --json --checkpoint-semantics " +
                                 semantics + " --checkpoint optimal=" + std::to_string(budget) + " --checkpoint-solver " +
                                 solver);
      ASSERT_EQ(r.exit_code, 0) << semantics << " " << solver << "\n" << r.out;
      const json x = json::parse(r.out)["training"];
      EXPECT_LE(x["peak_activation_bytes"].get<long>(), budget) << semantics << " " << solver;
      EXPECT_GT(x["recompute_macs"].get<long>(), 0) << semantics << " " << solver;
      t[semantics][solver] = x;
    }
    auto& s = t[semantics];
    EXPECT_EQ(s["dp"]["recompute_macs"], s["milp,30"]["recompute_macs"]) << semantics;
    EXPECT_LE(s["segments"]["recompute_macs"].get<long>(), s["dp"]["recompute_macs"].get<long>()) << semantics;
    EXPECT_LE(s["rotor"]["recompute_macs"].get<long>(), s["segments"]["recompute_macs"].get<long>()) << semantics;
  }
  for (const char* solver : {"dp", "segments", "rotor"}) {
    EXPECT_GE(t["pytorch"][solver]["recompute_macs"].get<long>(), t["minimal"][solver]["recompute_macs"].get<long>()) << solver;
  }
}

// The optimal policy solved as a MILP (solver = "milp", --checkpoint-solver milp): the DP's optimum on ResNet-18's
// 15-block chain; its errors located; a time limit that stops CBC before it proves optimality keeps the best
// choice found and says the gap.
TEST(Checkpointing, OptimalByMilp) {
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18.onnx");
  const long budget = 19'877'376;  // every_k = 8's peak (OptimalIsNeverWorseThanEveryK)
  auto r = test::monet("--log-level warn inspect " + model + " --training --json --checkpoint optimal=" +
                       std::to_string(budget) + " --checkpoint-solver milp,30");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json milp = json::parse(r.out)["training"];
  const json dp = inspect("optimal=" + std::to_string(budget));
  EXPECT_EQ(milp["recompute_macs"], dp["recompute_macs"]);
  EXPECT_LE(milp["peak_activation_bytes"].get<long>(), budget);

  r = test::monet("inspect " + model + " --training --checkpoint optimal=" + std::to_string(budget) +
                  " --checkpoint-solver milp,0");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("stopped at time_limit_s = 0 s: the best choice found costs "));
  EXPECT_THAT(r.out, HasSubstr("% (a choice within the budget"));
  r = test::monet("inspect " + model + " --training --checkpoint every_k=2 --checkpoint-solver milp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--checkpoint-solver: error: solves --checkpoint optimal=BUDGET"));

  test::ScratchDir dir;
  auto experiment = [&](const std::string& name, const std::string& checkpoint) {
    return dir.write(name, "[experiment]\nname = \"x\"\n[workload]\nfile = " +
                               q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx") +
                               "\n[training]\nmode = \"training\"\n[training.checkpoint]\n" + checkpoint +
                               "[architecture]\nfile = " + q(test::source_dir() / "architectures/tpu_like_quad_core.toml") + "\n");
  };
  r = test::monet("run " + q(experiment("t.toml", "budget = 1000\nsolver = \"milp\"\ntime_limit_s = 5\n")) + " --out " +
                  q(dir.path() / "t") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("t.toml:8:10: error: checkpoint budget 1000 B is below the smallest backward activation "
                               "peak any choice of the 14 blocks of "));
  r = test::monet("validate " + q(experiment("s.toml", "budget = 6_400_000\nsolver = \"cplex\"\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("s.toml:9:10: error: "));
  r = test::monet("validate " + q(experiment("l.toml", "budget = 6_400_000\ntime_limit_s = 5\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("l.toml:9:16: error: training.checkpoint.time_limit_s: applies to solver = \"milp\" only"));
  r = test::monet("validate " + q(experiment("m.toml", "segments = 2\nsolver = \"milp\"\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("m.toml:9:10: error: training.checkpoint.solver: belongs to the optimal policy (budget = B)"));
}

// How the optimal policy was solved, in `inspect --json` and results.json (training.checkpoint_solver), on the
// 17-block chain of tests/data/checkpoint_chain17.toml: the DP and the MILP without a node limit prove the same
// optimum (gap 0); a node limit of 0 stops CBC after its root, where the gap is still open: the same choice,
// bound and gap on every machine and under any load (a time limit would not be).
TEST(Checkpointing, SolverOutcomeIsReported) {
  const fs::path chain = test::source_dir() / "tests/data/checkpoint_chain17.toml";
  const std::string budget = "18057";
  auto solve = [&](const std::string& solver) {
    const auto r = test::monet("--log-level error inspect " + q(chain) + " --training --json --checkpoint optimal=" +
                               budget + (solver.empty() ? "" : " --checkpoint-solver " + solver));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out)["training"];
  };
  const json dp = solve(""), milp = solve("milp,60"), stopped = solve("milp,60,0");
  const json& d = dp["checkpoint_solver"];
  EXPECT_EQ(d["solver"], "dp");
  EXPECT_EQ(d["status"], "optimal");
  EXPECT_EQ(d["gap"], 0.0);
  EXPECT_EQ(d["objective"], d["best_bound"]);
  EXPECT_EQ(d["objective"].get<double>(), dp["recompute_macs"].get<double>());  // cost = "macs"
  EXPECT_EQ(d["peak_activation_bytes"], dp["peak_activation_bytes"]);
  EXPECT_EQ(d["checkpointed_blocks"].size(), dp["checkpoint_regions"].size());
  EXPECT_FALSE(d.contains("node_limit"));  // the DP has no limits
  const json& m = milp["checkpoint_solver"];
  EXPECT_EQ(m["solver"], "milp");
  EXPECT_EQ(m["status"], "optimal");
  EXPECT_EQ(m["gap"], 0.0);
  EXPECT_EQ(m["objective"], d["objective"]);
  EXPECT_EQ(m["best_bound"], d["objective"]);
  EXPECT_EQ(m["time_limit_s"], 60.0);
  EXPECT_TRUE(m["node_limit"].is_null());
  const json& s = stopped["checkpoint_solver"];
  EXPECT_EQ(s["status"], "node_limit");
  EXPECT_EQ(s["node_limit"], 0);
  EXPECT_GT(s["objective"].get<double>(), d["objective"].get<double>());
  EXPECT_LE(s["best_bound"].get<double>(), d["objective"].get<double>());
  EXPECT_GT(s["gap"].get<double>(), 0.01);
  EXPECT_LE(s["peak_activation_bytes"].get<long>(), std::stol(budget));
  EXPECT_EQ(s["peak_activation_bytes"], stopped["peak_activation_bytes"]);
  EXPECT_EQ(s["objective"].get<double>(), stopped["recompute_macs"].get<double>());

  // A run: results.json reports the same solve, lists the chosen regions, and resolved.toml keeps the limit.
  test::ScratchDir dir;
  auto experiment = [&](const std::string& name, const std::string& solver) {
    return dir.write(name, "[experiment]\nname = \"x\"\n[workload]\nfile = " + q(chain) +
                               "\n[training]\nmode = \"training\"\n[training.checkpoint]\nbudget = " + budget + "\n" +
                               solver + "[architecture]\nfile = " +
                               q(test::source_dir() / "architectures/dual_core.toml") + "\n");
  };
  auto r = test::monet("run " + q(experiment("t.toml", "solver = \"milp\"\ntime_limit_s = 60\nnode_limit = 0\n")) + " --out " +
                       q(dir.path() / "t") + " --log-level error");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = json::parse(test::read_file(dir.path() / "t/results.json"))["training"];
  EXPECT_EQ(run["checkpoint_solver"], s);
  EXPECT_EQ(run["checkpoint_regions"].size(), s["checkpointed_blocks"].size());
  EXPECT_EQ(run["recompute_macs"], stopped["recompute_macs"]);
  EXPECT_THAT(test::read_file(dir.path() / "t/resolved.toml"), HasSubstr("solver = \"milp\"\ntime_limit_s = 60\nnode_limit = 0\n"));

  // Rotor's segments from TOML (on a 4-operator CNN: the segment DP over the 17-block chain takes seconds).
  const fs::path small = dir.write("s.toml", "[experiment]\nname = \"s\"\n[workload]\nfile = " +
                                                 q(test::source_dir() / "workloads/tiny_cnn.toml") +
                                                 "\n[training]\nmode = \"training\"\n[training.checkpoint]\nbudget = "
                                                 "100_000_000\nsolver = \"segments\"\n[architecture]\nfile = " +
                                                 q(test::source_dir() / "architectures/dual_core.toml") + "\n");
  r = test::monet("run " + q(small) + " --out " + q(dir.path() / "s") + " --log-level error");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "s/results.json"))["training"]["checkpoint_solver"]["solver"],
            "segments");
  EXPECT_THAT(test::read_file(dir.path() / "s/resolved.toml"), HasSubstr("solver = \"segments\"\n"));
  r = test::monet("validate " + q(experiment("n.toml", "node_limit = 5\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("n.toml:9:14: error: training.checkpoint.node_limit: applies to solver = \"milp\" only"));
  r = test::monet("validate " + q(experiment("m.toml", "solver = \"milp\"\nnode_limit = -1\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("m.toml:10:14: error: "));
  r = test::monet("inspect " + q(chain) + " --training --checkpoint optimal=" + budget + " --checkpoint-solver milp,5,x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--checkpoint-solver: error: expected dp, segments or milp[,SECONDS[,NODES]]"));
}

TEST(Checkpointing, TextReportListsRegions) {
  const auto r = test::monet("inspect " + q(test::source_dir() / "workloads/onnx/resnet18.onnx") +
                             " --training --checkpoint every_k=sqrt");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("  recompute  "));
  EXPECT_THAT(r.out, HasSubstr("backward peak activations"));
  EXPECT_THAT(r.out, HasSubstr("checkpointed regions"));
}

TEST(Checkpointing, PoliciesThatDoNotFitAreOneMessage) {
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18.onnx");
  auto r = test::monet("inspect " + model + " --training --checkpoint segments=40");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--checkpoint: error: segments = 40 but resnet18 has only 11 top-level"));
  r = test::monet("inspect " + model + " --training --checkpoint modules=block*");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("matches no module of resnet18; top-level modules: conv1, bn1"));
  r = test::monet("inspect " + model + " --training --checkpoint optimal");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("checkpoint policy 'optimal' needs a positive integer"));
  r = test::monet("inspect " + model + " --training --checkpoint optimal=1000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--checkpoint: error: checkpoint budget 1000 B is below the smallest backward "
                               "activation peak any choice of the 15 blocks of resnet18 reaches ("));

  test::ScratchDir dir;
  const fs::path exp = dir.write("e.toml", "[experiment]\nname = \"x\"\n[workload]\nfile = " +
                                               q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx") +
                                               "\n[training]\nmode = \"training\"\n[training.checkpoint]\nsegments = 2\n"
                                               "every_k = 3\n[architecture]\nfile = " +
                                               q(test::source_dir() / "architectures/tpu_like_quad_core.toml") + "\n");
  r = test::monet("validate " + q(exp));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("e.toml:9:11: error: [training.checkpoint] takes one policy: segments and every_k are given"));

  // A budget nothing fits, in TOML: the error points at it.
  const fs::path tight = dir.write("t.toml", "[experiment]\nname = \"x\"\n[workload]\nfile = " +
                                                 q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx") +
                                                 "\n[training]\nmode = \"training\"\n[training.checkpoint]\n"
                                                 "budget = 1000\ncost = \"latency\"\n[architecture]\nfile = " +
                                                 q(test::source_dir() / "architectures/tpu_like_quad_core.toml") + "\n");
  r = test::monet("run " + q(tight) + " --out " + q(dir.path() / "out") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("t.toml:8:10: error: checkpoint budget 1000 B is below the smallest backward activation "
                               "peak any choice of the 14 blocks of "));
}

// The quad-core ResNet-18 (CIFAR) training step without and with checkpoint_sequential's two segments.
TEST(Checkpointing, QuadCoreStepRecomputesAndTradesLatencyForMemory) {
  test::ScratchDir dir;
  const fs::path experiment = test::source_dir() / "experiments/resnet18_cifar_training_quad_core.toml";
  auto run = [&](const std::string& name, const std::string& extra) {
    const auto r = test::monet("run " + q(experiment) + " --out " + q(dir.path() / name) + " --log-level warn " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(test::read_file(dir.path() / name / "results.json"));
  };
  const json none = run("none", "");
  const json seg = run("seg", "--set training.checkpoint.segments=2");
  EXPECT_EQ(none["training"]["recompute_macs"].get<long>(), 0);
  EXPECT_GT(seg["training"]["recompute_macs"].get<long>(), 0);
  EXPECT_LT(seg["training"]["saved_activation_bytes"].get<long>(), none["training"]["saved_activation_bytes"].get<long>());
  EXPECT_GT(seg["latency_cycles"].get<double>(), none["latency_cycles"].get<double>());
  EXPECT_GT(seg["training"]["recompute_busy_cycles"].get<double>(), 0);
  EXPECT_GT(seg["training"]["recompute_energy_pj"].get<double>(), 0);
  EXPECT_GT(seg["energy_pj"].get<double>(), none["energy_pj"].get<double>());
  // The backward pass's peak of saved + recomputed activations falls (9,419,632 -> 7,892,736 B in bf16). The
  // scheduler's off-chip peak of this batch-4 step does not: it is at the optimizer step (bf16 weights and
  // gradients, fp32 master weights and Adam states, 201 MB), where no activation is live any more.
  EXPECT_LT(seg["training"]["peak_activation_bytes"].get<long>(), none["training"]["peak_activation_bytes"].get<long>());
  // Recompute operators are computation nodes of the schedule, costed like any other.
  std::int64_t recompute_macs = 0;
  for (const test::CsvRow& cn : test::read_csv(dir.path() / "seg/schedule.csv")) {
    if (cn["phase"] != "recompute") continue;
    recompute_macs += std::stoll(cn["macs"]);
    EXPECT_GT(std::stod(cn["latency_cycles"]), 0) << cn["name"];
  }
  EXPECT_EQ(recompute_macs, seg["training"]["recompute_macs"].get<long>());
  EXPECT_THAT(test::read_file(dir.path() / "seg/resolved.toml"), HasSubstr("[training.checkpoint]\nsegments = 2\n"));
  // memory.svg marks when recomputation runs, behind each core's and the off-chip memory curve.
  EXPECT_THAT(test::read_file(dir.path() / "seg/memory.svg"), HasSubstr("recomputation running"));
  EXPECT_THAT(test::read_file(dir.path() / "none/memory.svg"), ::testing::Not(HasSubstr("recomputation running")));
  // Recomputed activations are a use of their own in the stacked memory of the cores (and in report.html's data).
  EXPECT_THAT(test::read_file(dir.path() / "seg/memory.svg"), HasSubstr(">recomputed activations</text>"));
  EXPECT_THAT(test::read_file(dir.path() / "none/memory.svg"), ::testing::Not(HasSubstr("recomputed activations")));
  EXPECT_THAT(test::read_file(dir.path() / "seg/report.html"), HasSubstr("\"recomputed activations\":["));
}

// A memory budget as a search constraint (experiments/checkpointing/resnet18_cifar_quad_core_budget.toml): the
// fastest split whose backward activation peak fits; splits over the budget are infeasible points, not errors, and
// a budget nothing fits leaves an empty front and reports the point of least violation.
TEST(Checkpointing, FastestSplitUnderAMemoryBudget) {
  test::ScratchDir dir;
  const fs::path experiment = test::source_dir() / "experiments/checkpointing/resnet18_cifar_quad_core_budget.toml";
  auto r = test::monet("run " + q(experiment) + " --out " + q(dir.path() / "fits") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json best = json::parse(test::read_file(dir.path() / "fits/best/results.json"));
  EXPECT_LE(best["training"]["peak_activation_bytes"].get<long>(), 6'400'000L);
  int feasible = 0, over = 0;
  for (const test::CsvRow& e : test::read_csv(dir.path() / "fits/evaluations.csv")) {
    if (e["feasible"] == "true") {
      ++feasible;
      EXPECT_GE(std::stod(e["latency_cycles"]), best["latency_cycles"].get<double>()) << e["segments"];
    } else {
      ++over;
      EXPECT_THAT(e["reason"], HasSubstr("training.peak_activation_bytes = "));
    }
  }
  EXPECT_EQ(feasible + over, 10);
  EXPECT_GT(over, 0);  // none (segments = 1) does not fit
  EXPECT_GT(feasible, 0);

  std::string text = test::read_file(experiment);
  text.replace(text.find("max = 6_400_000"), 15, "max = 1_000_000");
  for (std::size_t at = text.find("\"../../"); at != std::string::npos; at = text.find("\"../../")) {
    text.replace(at, 7, "\"" + test::source_dir().string() + "/");
  }
  r = test::monet("run " + q(dir.write("tight.toml", text)) + " --out " + q(dir.path() / "tight") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("0 non-dominated feasible points"));
  EXPECT_GT(json::parse(test::read_file(dir.path() / "tight/best/results.json"))["training"]["peak_activation_bytes"].get<long>(),
            1'000'000L);
}

// Checkpoint genes (one keep / recompute gene per block) searched with NSGA-II on a 7-block chain, objectives the
// backward activation peak and the recomputed MACs: the grid's exact front over all 128 points, and NSGA-II seeded
// with none, sqrt(n) and the optimal policy's front, which is that exact front — so NSGA-II's front equals it
// after one generation.
TEST(Checkpointing, CheckpointGenesSearchedWithSeededNsga2) {
  test::ScratchDir dir;
  std::string w = "[[inputs]]\nname = \"x\"\nshape = [4, 16]\n";
  const int widths[] = {64, 8, 48, 16, 96, 24};
  for (int b = 0; b < 6; ++b) {
    const std::string m = "b" + std::to_string(b);
    w += "\n[[layers]]\nname = \"" + m + "_fcA\"\nop = \"linear\"\nout_features = " + std::to_string(widths[b]) +
         "\nbias = false\nmodule = \"" + m + "\"\n\n[[layers]]\nname = \"" + m + "_relu\"\nop = \"relu\"\nmodule = \"" +
         m + "\"\n\n[[layers]]\nname = \"" + m + "_fcB\"\nop = \"linear\"\nout_features = 16\nbias = false\nmodule = \"" +
         m + "\"\n";
  }
  w += "\n[[layers]]\nname = \"fc\"\nop = \"linear\"\nout_features = 10\nmodule = \"head\"\n";
  dir.write("chain.toml", w);
  const fs::path exp = dir.write(
      "e.toml", "[experiment]\nname = \"ckpt_genes\"\nseed = 3\n[workload]\nfile = \"chain.toml\"\n[training]\n"
                "mode = \"training\"\n[architecture]\nfile = " +
                    q(test::source_dir() / "architectures/tpu_like_single.toml") +
                    "\n[space]\nobjectives = [\"training.peak_activation_bytes\", \"training.recompute_macs\"]\n"
                    "[space.genes.ckpt]\ncheckpoint = \"blocks\"\n[search]\nplugin = \"grid\"\n");
  auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "grid") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("128 distinct"));
  auto front = [&](const std::string& out) {
    std::set<std::pair<long, long>> f;
    for (const test::CsvRow& row : test::read_csv(dir.path() / out / "pareto.csv")) {
      f.emplace(static_cast<long>(row.number("training.peak_activation_bytes")),
                static_cast<long>(row.number("training.recompute_macs")));
    }
    return f;
  };
  const auto exact = front("grid");
  EXPECT_GE(exact.size(), 3u);
  r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "ga") + " --log-level warn --set search.plugin=nsga2 "
                  "--set search.population=" + std::to_string(exact.size() + 3) + " --set search.generations=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(front("ga"), exact);
  // The seeds are evaluated: no checkpointing (every gene keep) and sqrt(n) (k = 3: b0 .. b5 recomputed, head kept).
  bool none = false, sqrt_n = false;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "ga/evaluations.csv")) {
    std::string genes;
    for (const char* b : {"b0", "b1", "b2", "b3", "b4", "b5", "head"}) genes += row[std::string("ckpt:") + b] == "recompute" ? "1" : "0";
    none = none || genes == "0000000";
    sqrt_n = sqrt_n || genes == "1111110";
  }
  EXPECT_TRUE(none);
  EXPECT_TRUE(sqrt_n);
  EXPECT_THAT(test::read_file(dir.path() / "ga/best/resolved.toml"), HasSubstr("[training.checkpoint]\nblocks = ["));
}

// Checkpoint genes with the third value, offload: on a 3-block chain and its head (4 genes, 81 points), a grid over
// (backward activation peak with offloading, recomputed MACs, offloaded bytes) has offload points on its front, and
// a point that offloads block b1 pages out exactly what an explicit `offload = ["b1"]` run does: the outputs of b1's
// operators that backward reads (fp32, batch 4: the ReLU's [4, 24], read by its own backward and fcB's dW, and
// fcB's [4, 16], read by the next block's dW; fcA's output is not saved: the ReLU's backward reads its output)
// = 4 * 4 * (24 + 16) = 640 B.
TEST(Checkpointing, CheckpointGenesOffloadBlocks) {
  test::ScratchDir dir;
  std::string w = "[[inputs]]\nname = \"x\"\nshape = [4, 16]\n";
  const int widths[] = {40, 24, 8};
  for (int b = 0; b < 3; ++b) {
    const std::string m = "b" + std::to_string(b);
    w += "\n[[layers]]\nname = \"" + m + "_fcA\"\nop = \"linear\"\nout_features = " + std::to_string(widths[b]) +
         "\nbias = false\nmodule = \"" + m + "\"\n\n[[layers]]\nname = \"" + m + "_relu\"\nop = \"relu\"\nmodule = \"" +
         m + "\"\n\n[[layers]]\nname = \"" + m + "_fcB\"\nop = \"linear\"\nout_features = 16\nbias = false\nmodule = \"" +
         m + "\"\n";
  }
  w += "\n[[layers]]\nname = \"fc\"\nop = \"linear\"\nout_features = 10\nmodule = \"head\"\n";
  dir.write("chain.toml", w);
  auto experiment = [&](const std::string& name, const std::string& extra) {
    return dir.write(name, "[experiment]\nname = \"ckpt_offload\"\nseed = 3\n[workload]\nfile = \"chain.toml\"\n[training]\n"
                           "mode = \"training\"\n" + extra + "[architecture]\nfile = " +
                               q(test::source_dir() / "architectures/tpu_like_single.toml") + "\n");
  };
  const std::string space =
      "[space]\nobjectives = [\"training.offload.peak_activation_bytes\", \"training.recompute_macs\", "
      "\"training.offload.offloaded_bytes\"]\n[space.genes.ckpt]\ncheckpoint = \"blocks\"\n"
      "values = [\"keep\", \"recompute\", \"offload\"]\n[search]\nplugin = \"grid\"\n";
  const fs::path exp = experiment("e.toml", space);
  auto r = test::monet("run " + q(exp) + " --out " + q(dir.path() / "grid") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("81 distinct"));
  const char* genes[] = {"ckpt:b0", "ckpt:b1", "ckpt:b2", "ckpt:head"};
  auto choice = [&](const test::CsvRow& row) {
    std::string c;
    for (const char* g : genes) c += row[g].substr(0, 1);  // k, r, o
    return c;
  };
  int offload_on_front = 0;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "grid/pareto.csv")) {
    offload_on_front += choice(row).find('o') != std::string::npos;
  }
  EXPECT_GT(offload_on_front, 0);
  std::optional<test::CsvRow> b1;
  for (const test::CsvRow& row : test::read_csv(dir.path() / "grid/evaluations.csv")) {
    if (choice(row) == "kokk") b1 = row;
  }
  ASSERT_TRUE(b1.has_value());
  EXPECT_EQ(b1->number("training.offload.offloaded_bytes"), 640);
  EXPECT_EQ(b1->number("training.recompute_macs"), 0);

  // The same modules offloaded explicitly: the same bytes leave the core, the same peak.
  r = test::monet("run " + q(experiment("x.toml", "[training.checkpoint]\noffload = [\"b1\"]\n")) + " --out " +
                  q(dir.path() / "explicit") + " --log-level warn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json o = json::parse(test::read_file(dir.path() / "explicit/results.json"))["training"]["offload"];
  EXPECT_EQ(o["offloaded_bytes"].get<long>(), 640);
  EXPECT_EQ(o["saved_bytes"].get<long>(), 640);
  EXPECT_EQ(o["peak_activation_bytes"].get<double>(), b1->number("training.offload.peak_activation_bytes"));

  // Bad values, located at the value; offload genes next to the experiment's own offload.
  std::string bad = space;
  bad.replace(bad.find("\"offload\"]"), 10, "\"page\"]");
  r = test::monet("run " + q(experiment("bad.toml", bad)) + " --out " + q(dir.path() / "bad") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("bad.toml:12:32: error: checkpoint gene value 'page': expected"));
  r = test::monet("run " + q(experiment("both.toml", "[training.checkpoint]\noffload = [\"b1\"]\n" + space)) + " --out " +
                  q(dir.path() / "both") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("the checkpoint gene's offload value sets training.checkpoint.offload"));
}

// Offloading (POET-style paging) on the quad-core ResNet-18 (CIFAR) step: layer1's saved activations leave the
// cores after their forward readers and come back for their backward readers.
TEST(Checkpointing, OffloadingPagesSavedActivationsOutAndBack) {
  test::ScratchDir dir;
  const fs::path experiment = test::source_dir() / "experiments/resnet18_cifar_training_quad_core.toml";
  auto run = [&](const std::string& name, const std::string& extra) {
    const auto r = test::monet("run " + q(experiment) + " --out " + q(dir.path() / name) + " --log-level warn " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(test::read_file(dir.path() / name / "results.json"));
  };
  const json none = run("none", "");
  const json off = run("off", "--set 'training.checkpoint.offload=[\"layer1*\"]'");
  ASSERT_TRUE(off["training"].contains("offload"));
  EXPECT_FALSE(none["training"].contains("offload"));
  const json& o = off["training"]["offload"];
  // Exactly the selected bytes leave the cores: the outputs of layer1's operators that backward reads (bf16),
  // written out or, when a spill put them off chip already, freed there.
  EXPECT_EQ(o["offloaded_bytes"].get<long>(), o["saved_bytes"].get<long>());
  EXPECT_GT(o["saved_bytes"].get<long>(), 4'000'000);
  EXPECT_GT(o["written_bytes"].get<long>(), 0);
  EXPECT_GT(o["fetched_back_bytes"].get<long>(), 0);
  EXPECT_GT(o["energy_pj"].get<double>(), 0);
  EXPECT_GE(o["stall_cycles"].get<long>(), 0);
  // The transfers say so, by cause, and the step reads and writes more off chip.
  EXPECT_EQ(off["transfers_by_cause"]["offload"]["bits"].get<long>(), 8 * o["written_bytes"].get<long>());
  EXPECT_EQ(off["transfers_by_cause"]["prefetch"]["bits"].get<long>(), 8 * o["fetched_back_bytes"].get<long>());
  EXPECT_GT(off["energy_breakdown"]["offchip_energy_pj"].get<double>(), none["energy_breakdown"]["offchip_energy_pj"].get<double>());
  // The backward activation peak falls (offloaded storages count from their first backward reader on).
  EXPECT_LT(o["peak_activation_bytes"].get<long>(), none["training"]["peak_activation_bytes"].get<long>());
  EXPECT_THAT(test::read_file(dir.path() / "off/resolved.toml"), HasSubstr("offload = [\"layer1*\"]\n"));

  // Bad input, located: a glob matching nothing, a module both recomputed and offloaded.
  test::ScratchDir bad;
  auto exp = [&](const std::string& name, const std::string& checkpoint) {
    return bad.write(name, "[experiment]\nname = \"x\"\n[workload]\nfile = " +
                               q(test::source_dir() / "workloads/onnx/resnet18_cifar_b4.onnx") +
                               "\n[training]\nmode = \"training\"\n[training.checkpoint]\n" + checkpoint +
                               "[architecture]\nfile = " + q(test::source_dir() / "architectures/tpu_like_quad_core.toml") + "\n");
  };
  auto r = test::monet("run " + q(exp("g.toml", "offload = [\"block*\"]\n")) + " --out " + q(bad.path() / "g") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("g.toml:8:11: error: offload module 'block*' matches no module of"));
  r = test::monet("run " + q(exp("c.toml", "modules = [\"layer1\"]\noffload = [\"layer*\"]\n")) + " --out " +
                  q(bad.path() / "c") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("c.toml:9:11: error: module 'layer1' is both offloaded and recomputed"));

  // inspect shows what is offloaded and the backward activation peak with it (ResNet-18, 224², fp32).
  const std::string model = q(test::source_dir() / "workloads/onnx/resnet18.onnx");
  r = test::monet("inspect " + model + " --training --json --offload 'layer1*'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json t = json::parse(r.out)["training"];
  EXPECT_EQ(t["offload"]["modules"], "layer1*");
  EXPECT_GT(t["offload"]["tensors"].size(), 10u);
  EXPECT_GT(t["offload"]["saved_bytes"].get<long>(), 0);
  EXPECT_LT(t["offload"]["peak_activation_bytes"].get<long>(), t["peak_activation_bytes"].get<long>());
  r = test::monet("inspect " + model + " --training --offload 'layer1*'");
  EXPECT_THAT(r.out, HasSubstr("offloaded (layer1*): "));
  r = test::monet("inspect " + model + " --training --checkpoint modules=layer1 --offload 'layer1*'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("--offload: error: module 'layer1' is both offloaded and recomputed"));
}

}  // namespace
}  // namespace monet
