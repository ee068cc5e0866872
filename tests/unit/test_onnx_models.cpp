// The first six PyTorch exports in workloads/onnx load unmodified and inspect to the reference numbers
// (../shared/reference/pytorch.json and the frontend issue's table), exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/ir/workload_toml.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/report/inspect.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

GraphPtr load(const std::string& model, std::int64_t batch = 0, std::vector<std::string> frozen = {}) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::frontend, "onnx");
  EXPECT_NE(h, nullptr);
  ParamValues p = default_params(h->info.params, "test");
  p.set("batch", batch);
  p.set("frozen", frozen);
  return r.create<WorkloadFrontend>(*h, p)->load(test::source_dir() / "workloads/onnx" / model);
}

std::int64_t macs_of(const Graph& g, OpKind kind) {
  std::int64_t n = 0;
  for (const Operator& op : g.operators()) {
    if (op.kind == kind) n += op.macs();
  }
  return n;
}

TEST(OnnxModels, ResNet18) {
  const GraphPtr g = load("resnet18.onnx");
  const WorkloadTotals t = workload_totals(*g);
  EXPECT_EQ(t.params_trainable, 11'689'512);  // BN running statistics are buffers:
  EXPECT_EQ(t.params_buffers, 9'600);         // 2 × (64·5 + 128·5 + 256·5 + 512·5) = 2 × 4,800
  EXPECT_EQ(t.macs, 1'814'073'344);
  EXPECT_EQ(macs_of(*g, OpKind::conv), 1'813'561'344);
  EXPECT_EQ(macs_of(*g, OpKind::gemm), 512'000);
  // 20 Conv, 20 BatchNormalization (training mode), 17 Relu, 1 MaxPool, 8 Add, 1 GlobalAveragePool, 1 Flatten, 1 Gemm
  EXPECT_EQ(g->operators().size(), 69u);
  const Operator* bn = g->find_operator("/bn1/BatchNormalization");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->kind, OpKind::norm);
  EXPECT_EQ(bn->attributes.at("training_mode"), std::vector<std::int64_t>{1});
  EXPECT_EQ(g->find_tensor("bn1.running_mean")->role, TensorRole::buffer);
  EXPECT_EQ(g->find_tensor("bn1.weight")->role, TensorRole::weight);
}

TEST(OnnxModels, ResNet18BatchOverride) {
  const GraphPtr g = load("resnet18.onnx", 8);
  EXPECT_EQ(g->find_tensor("input")->shape, (Shape{8, 3, 224, 224}));
  EXPECT_EQ(g->total_macs(), 8 * 1'814'073'344LL);
  EXPECT_EQ(g->find_tensor("logits")->shape, (Shape{8, 1000}));
}

TEST(OnnxModels, ResNet18Cifar) {
  const GraphPtr g = load("resnet18_cifar_b4.onnx");
  const WorkloadTotals t = workload_totals(*g);
  EXPECT_EQ(t.params_trainable, 11'173'962);
  EXPECT_EQ(t.macs, 4 * 555'422'720LL);
  EXPECT_EQ(g->find_operator("/conv1/Conv")->dims[5].size, 3);  // 3×3 stem (FY)
}

// MobileNetV2 MACs, worked out from the architecture (not from the file): stem 3x3/2 3→32 at 112² =
// 112·112·32·3·9; inverted residuals (t, c, n, s) = (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1)
// (6,160,3,2) (6,320,1,1), each = expand 1x1 (t ≠ 1) at the input resolution + depthwise 3x3 at the output
// resolution + project 1x1; last 1x1 320→1280 at 7²; classifier 1280·1000.
std::int64_t mobilenet_v2_macs() {
  std::int64_t h = 112;
  std::int64_t macs = 112 * 112 * 32 * 3 * 9;
  std::int64_t cin = 32;
  const std::int64_t settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                       {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& s : settings) {
    for (std::int64_t i = 0; i < s[2]; ++i) {
      const std::int64_t stride = i == 0 ? s[3] : 1;
      const std::int64_t hidden = cin * s[0];
      if (s[0] != 1) macs += h * h * cin * hidden;
      const std::int64_t h2 = h / stride;
      macs += h2 * h2 * hidden * 9 + h2 * h2 * hidden * s[1];
      cin = s[1];
      h = h2;
    }
  }
  return macs + 7 * 7 * 320 * 1280 + 1280 * 1000;
}

TEST(OnnxModels, MobileNetV2) {
  const GraphPtr g = load("mobilenet_v2.onnx");
  const WorkloadTotals t = workload_totals(*g);
  EXPECT_EQ(t.params_trainable, 3'504'872);
  EXPECT_EQ(mobilenet_v2_macs(), 300'774'272);
  EXPECT_EQ(t.macs, mobilenet_v2_macs());
  // Depthwise convolutions have groups = channels; Clip is ReLU6; Dropout (training export) is kept.
  const Operator* dw = g->find_operator("/features/features.1/conv/conv.0/conv.0.0/Conv");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->dims[1].name, "G");
  EXPECT_EQ(dw->dims[1].size, 32);
  EXPECT_EQ(g->find_operator("/features/features.0/features.0.2/Clip")->type, "Clip");
  EXPECT_EQ(g->find_operator("/classifier/classifier.0/Dropout")->kind, OpKind::elementwise);
}

TEST(OnnxModels, Gpt2Small) {
  const GraphPtr g = load("gpt2_small.onnx");
  const WorkloadTotals t = workload_totals(*g);
  EXPECT_EQ(t.params_trainable, 124'439'808);  // the LM head reads wte.weight: counted once
  EXPECT_EQ(t.macs, 145'824'153'600LL);
  EXPECT_EQ(macs_of(*g, OpKind::gemm), 126'496'800'768LL);   // linear layers incl. the tied head
  EXPECT_EQ(macs_of(*g, OpKind::matmul), 19'327'352'832LL);  // attention: 12 layers × 2 × 12·1024·1024·64
  // Semantic operators: GELU from its erf formula, masked softmax, linear with bias, tied embedding.
  const Operator* gelu = g->find_operator("/blocks.0/Erf");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->type, "Gelu");
  EXPECT_EQ(gelu->source_nodes, (std::vector<std::string>{"/blocks.0/Div", "/blocks.0/Erf", "/blocks.0/Add_1",
                                                          "/blocks.0/Mul_1", "/blocks.0/Mul_2"}));
  const Operator* sm = g->find_operator("/blocks.0/Softmax");
  EXPECT_EQ(sm->operands.size(), 3u);  // output, scores, causal mask
  EXPECT_EQ(sm->attributes.at("mask"), std::vector<std::int64_t>{1});
  EXPECT_EQ(g->tensor(sm->operands[2].tensor).role, TensorRole::activation);  // built by torch.tril in forward
  const Operator* qkv = g->find_operator("/blocks.0/qkv/MatMul");
  EXPECT_EQ(qkv->kind, OpKind::gemm);
  EXPECT_EQ(qkv->operands.size(), 4u);  // output, x, weight (read transposed), bias
  EXPECT_EQ(g->tensor(qkv->operands[2].tensor).name, "blocks.0.qkv.weight");
  const Tensor* wte = g->find_tensor("wte.weight");
  EXPECT_EQ(wte->consumers.size(), 2u);  // the embedding and the LM head
  EXPECT_EQ(g->find_operator("/wte/Gather")->kind, OpKind::embedding);
}

TEST(OnnxModels, Gpt2TinyAndBatchOverride) {
  const GraphPtr g = load("gpt2_tiny_L2_T256.onnx");
  EXPECT_EQ(workload_totals(*g).params_trainable, 53'561'088);
  // Per layer: qkv 256·768·2304 + proj 256·768·768 + fc, fc2 2·256·768·3072 + attention 2·12·256·256·64
  // = 1,912,602,624; two layers + head 256·768·50257 = 9,880,928,256.
  EXPECT_EQ(g->total_macs(), 2 * 1'912'602'624LL + 9'880'928'256LL);
  // A batch of 2: the exported Reshape shapes carry the batch and are rewritten.
  const GraphPtr b = load("gpt2_tiny_L2_T256.onnx", 2);
  EXPECT_EQ(b->total_macs(), 2 * g->total_macs());
  EXPECT_EQ(b->find_tensor("logits")->shape, (Shape{2, 256, 50257}));
}

TEST(OnnxModels, Gpt2MonetSmallSharesOneLayerAndMasksWithABuffer) {
  const GraphPtr g = load("gpt2_monet_small.onnx");
  const WorkloadTotals t = workload_totals(*g);
  // pos 256·512 + emb 4000·512 + q,k,v,o 4·(512² + 512) + fc1 1376·512 + 1376 + fc2 512·1376 + 512
  // + head 4000·512 + 4000 = 6,692,608; the causal mask (1·1·256·256) is a buffer.
  EXPECT_EQ(t.params_trainable, 6'692'608);
  EXPECT_EQ(t.params_buffers, 65'536);
  EXPECT_EQ(g->find_tensor("layer.mask")->role, TensorRole::buffer);
  EXPECT_EQ(g->find_tensor("pos")->role, TensorRole::weight);  // an additive learned tensor
  // One layer applied 4 times: each of its weights is read by 4 operators.
  EXPECT_EQ(g->find_tensor("layer.q.weight")->consumers.size(), 4u);
  // MACs per application: q,k,v,o 4·256·512·512 + fc1, fc2 2·256·512·1376 + attention 2·4·256·256·128
  // = 696,254,464; × 4 + head 256·512·4000 = 3,309,305,856.
  EXPECT_EQ(t.macs, 4 * 696'254'464LL + 524'288'000LL);
  EXPECT_EQ(g->find_operator("/layer/Softmax")->attributes.at("mask"), std::vector<std::int64_t>{2});  // additive
}

TEST(OnnxModels, FrozenGlobsFreezeParameters) {
  const GraphPtr g = load("gpt2_monet_small.onnx", 0, {"layer.fc*", "head.*"});
  const WorkloadTotals t = workload_totals(*g);
  EXPECT_EQ(t.params_frozen, 705'888 + 705'024 + 2'052'000);
  EXPECT_EQ(t.params_trainable, 6'692'608 - t.params_frozen);
  EXPECT_TRUE(g->find_tensor("head.bias")->frozen);
  EXPECT_FALSE(g->find_tensor("layer.q.bias")->frozen);
}

TEST(OnnxModels, EveryModelRoundTripsThroughTheTomlFormat) {
  test::ScratchDir dir;
  const Registry& r = Registry::global();
  const PluginHandle* toml = r.find(PluginKind::frontend, "toml");
  const auto frontend = r.create<WorkloadFrontend>(*toml, default_params(toml->info.params, "test"));
  // The first models, and new operator families: transposed convolutions (U-Net), 1-/3-D convolutions (M5,
  // R3D-18), einsum and rotary tables (LLaMA-style), group norm (wav2vec-style), copies PyTorch makes (Swin-T).
  for (const char* model : {"resnet18.onnx", "resnet18_cifar_b4.onnx", "mobilenet_v2.onnx", "gpt2_small.onnx",
                            "gpt2_tiny_L2_T256.onnx", "gpt2_monet_small.onnx", "unet.onnx", "m5_audio.onnx",
                            "r3d_18.onnx", "llama_style.onnx", "wav2vec_style.onnx", "swin_t.onnx"}) {
    const GraphPtr g = load(model);
    const auto file = dir.write(std::string(model) + ".toml", workload_toml(*g));
    const GraphPtr back = frontend->load(file);
    EXPECT_EQ(inspect_json(*g, ""), inspect_json(*back, "")) << model;
    EXPECT_EQ(inspect_text(*g), inspect_text(*back)) << model;
  }
}

}  // namespace
}  // namespace monet
