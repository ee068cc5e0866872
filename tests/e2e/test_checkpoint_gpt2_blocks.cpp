// GPT-2 124M (workloads/onnx/gpt2_small.onnx: L = 12 blocks, T = 1024, d = 768, H = 12, V = 50257, batch 1, fp32)
// with every block checkpointed (`modules = ["blocks.*"]`, PyTorch's checkpoint(block, x) for each of the 12, as in
// Korthikanti et al.'s full recomputation): the saved bytes and recomputed MACs of `monet inspect` against a
// derivation by hand from the model's dimensions, term by term.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <string>

#include "support/test_support.hpp"

namespace monet {
namespace {

using json = nlohmann::json;

// GPT-2 small's published configuration (HF `gpt2`: n_layer 12, n_ctx 1024, n_embd 768, n_head 12, vocab 50257).
constexpr long L = 12, T = 1024, d = 768, H = 12, V = 50257, b = 1;
constexpr long fp32 = 4, int64 = 8, boolean = 1;

json inspect_training(const std::string& checkpoint, const std::string& extra = "") {
  const auto r = test::monet("inspect " + test::q(test::source_dir() / "workloads/onnx/gpt2_small.onnx") +
                             " --training --json" + (checkpoint.empty() ? "" : " --checkpoint '" + checkpoint + "' ") +
                             extra);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(r.out);
}

TEST(CheckpointGpt2Blocks, SavedBytesAndRecomputeMacsDerivedFromDimensions) {
  const json all = inspect_training("modules=blocks.*");
  EXPECT_EQ(all["inputs"][0]["shape"], json::array({b, T}));  // the dimensions the derivation assumes
  const json& t = all["training"];
  ASSERT_EQ(t["checkpoint_regions"].size(), static_cast<size_t>(L));  // all 12 blocks, the last one too

  // What stays saved once every block is a region (PyTorch's checkpoint keeps only a region's input):
  const long block_inputs = L * b * T * d * fp32;  // blocks.0's is the embedding sum /Add, blocks.i's blocks.(i-1)'s output
  // The layers outside the blocks save as without checkpointing:
  const long lnf_input = b * T * d * fp32;         // final LayerNorm saves its input: the last block's output
  const long lnf_output_and_stats = b * T * d * fp32 + 2 * b * T * fp32;  // LM head saves its input; mean, rstd
  const long log_probs = b * T * V * fp32;         // the loss (log-softmax + NLL) saves the log-probabilities
  const long ids = 3 * b * T * int64;              // token ids (wte), position ids (wpe), labels (NLL)
  // monet, not PyTorch: each block's causal mask (tril(ones(T, T)) == 0, bool) is computed from constants, so the
  // export folds it into a constant; masked_fill saves it, and as a graph constant rather than an operator of the
  // block it stays saved under checkpointing. PyTorch computes it inside the checkpointed block and keeps none.
  const long masks = L * T * T * boolean;

  std::map<std::string, long> by_producer;
  for (const json& s : t["saved_by_layer"]) by_producer[s["operator"].get<std::string>()] += s["bytes"].get<long>();
  long inputs_seen = by_producer["/Add"];
  for (int i = 0; i + 1 < L; ++i) inputs_seen += by_producer["/blocks." + std::to_string(i) + "/Add_2"];
  EXPECT_EQ(inputs_seen, block_inputs);
  EXPECT_EQ(by_producer["/blocks.11/Add_2"], lnf_input);
  EXPECT_EQ(by_producer["/lnf/LayerNormalization"], lnf_output_and_stats);
  EXPECT_EQ(by_producer["loss/LogSoftmax"], log_probs);
  EXPECT_EQ(by_producer["(graph inputs)"], ids + masks);
  EXPECT_EQ(by_producer.size(), static_cast<size_t>(L + 4)) << "a saved tensor the derivation does not name";
  const long pytorch = block_inputs + lnf_input + lnf_output_and_stats + log_probs + ids;
  EXPECT_EQ(pytorch, 249'925'632);
  EXPECT_EQ(t["saved_activation_bytes"].get<long>(), pytorch + masks);  // 262,508,544

  // Recomputed (semantics "pytorch", the default): each block's forward matrix products, as PyTorch reruns a
  // checkpointed function whole.
  const long qkv = b * T * d * 3 * d, scores = b * H * T * T * (d / H), context = scores, proj = b * T * d * d,
             fc = b * T * d * 4 * d, fc2 = b * T * 4 * d * d;
  EXPECT_EQ(t["recompute_macs"].get<long>(), L * (qkv + scores + context + proj + fc + fc2));  // 106,300,440,576
  // "minimal" leaves out each block's last product (fc2), whose output only the residual add reads and whose
  // backward needs its input, not its output (torch >= 2.1's non-reentrant checkpoint stops there too).
  const json minimal = inspect_training("modules=blocks.*", "--checkpoint-semantics minimal")["training"];
  EXPECT_EQ(minimal["recompute_macs"].get<long>(), L * (qkv + scores + context + proj + fc));  // 77,309,411,328
  EXPECT_EQ(minimal["saved_activation_bytes"], t["saved_activation_bytes"]);

  // Without checkpointing, the same outside-block terms are saved, and every block's own tensors besides.
  const json none = inspect_training("")["training"];
  EXPECT_GT(none["saved_activation_bytes"].get<long>(), t["saved_activation_bytes"].get<long>());
  EXPECT_EQ(none["recompute_macs"].get<long>(), 0);
}

}  // namespace
}  // namespace monet
