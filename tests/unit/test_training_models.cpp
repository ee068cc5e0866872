// Training steps of the real models against PyTorch (../shared/reference/pytorch.json): saved activations
// measured with autograd's saved-tensor hooks (fp32, distinct storages, incl. the input batch) within ±3 %,
// ResNet-18 backward MACs and Adam state exactly; every model yields a training graph with every optimizer.
#include <gtest/gtest.h>

#include <cmath>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/precision.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

GraphPtr step(const std::string& model, const std::string& optimizer, std::int64_t batch = 0,
              TrainingSettings settings = {}) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "onnx");
  ParamValues fp = default_params(f->info.params, "test");
  fp.set("batch", batch);
  const GraphPtr fwd = r.create<WorkloadFrontend>(*f, fp)->load(test::source_dir() / "workloads/onnx" / model);
  const PluginHandle* b = r.find(PluginKind::backward, "autodiff");
  const GraphPtr bwd = r.create<BackwardGenerator>(*b, default_params(b->info.params, "t"))->generate(*fwd, settings);
  const PluginHandle* o = r.find(PluginKind::optimizer, optimizer);
  EXPECT_NE(o, nullptr) << optimizer;
  return r.create<OptimizerModel>(*o, default_params(o->info.params, "t"))->apply(*bwd, settings);
}

void expect_within(std::int64_t value, std::int64_t reference, double tolerance, const char* what) {
  const double err = std::fabs(static_cast<double>(value - reference)) / static_cast<double>(reference);
  EXPECT_LE(err, tolerance) << what << ": " << value << " vs PyTorch " << reference;
}

// The ±3 % tolerance is the issue's: the conventions (distinct storages, what each autograd node saves) are
// PyTorch's, and the remaining differences are scalars PyTorch saves that monet does not model.
TEST(TrainingModels, SavedActivationsMatchPyTorch) {
  expect_within(training_memory(*step("resnet18.onnx", "sgd")).saved_activation_bytes, 22'260'652, 0.03,
                "resnet18 batch 1");
  expect_within(training_memory(*step("resnet18.onnx", "sgd", 8)).saved_activation_bytes, 177'547'588, 0.03,
                "resnet18 batch 8");
  expect_within(training_memory(*step("gpt2_small.onnx", "sgd")).saved_activation_bytes, 1'432'907'876, 0.03,
                "gpt2_small");
  expect_within(training_memory(*step("gpt2_tiny_L2_T256.onnx", "sgd")).saved_activation_bytes, 84'638'740, 0.03,
                "gpt2_tiny");
}

GraphPtr backward(const std::string& model, const std::string& class_axis, TrainingSettings settings = {}) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "onnx");
  const GraphPtr fwd = r.create<WorkloadFrontend>(*f, default_params(f->info.params, "t"))
                           ->load(test::source_dir() / "workloads/onnx" / model);
  const PluginHandle* b = r.find(PluginKind::backward, "autodiff");
  ParamValues p = default_params(b->info.params, "t");
  p.set("class_axis", class_axis);
  return r.create<BackwardGenerator>(*b, p)->generate(*fwd, settings);
}

TEST(TrainingModels, SegmentationLogitsTakeTheirClassesOnAxisOne) {
  // U-Net logits [1, 4, 128, 128]: PyTorch's CrossEntropyLoss wants labels [1, 128, 128] (auto: rank 4 -> axis 1).
  EXPECT_EQ(backward("unet.onnx", "auto")->find_tensor("labels")->shape, (Shape{1, 128, 128}));
  EXPECT_EQ(backward("unet.onnx", "channels")->find_tensor("labels")->shape, (Shape{1, 128, 128}));
  EXPECT_EQ(backward("unet.onnx", "last")->find_tensor("labels")->shape, (Shape{1, 4, 128}));
  // Token logits [1, 128, 8192] keep the last axis.
  EXPECT_EQ(backward("bert_style.onnx", "auto")->find_tensor("labels")->shape, (Shape{1, 128}));
}

TEST(TrainingModels, DropoutMasksFollowThePrecisionSetting) {
  // MobileNetV2's classifier dropout (p = 0.2) on [1, 1280]: 1 B per element by default (GPU), 4 B on CPUs.
  const std::int64_t gpu = training_memory(*backward("mobilenet_v2.onnx", "auto")).saved_activation_bytes;
  TrainingSettings cpu;
  cpu.precision = Precision::preset_named("fp32");
  cpu.precision->dropout_mask = ElementType::fp32;
  EXPECT_EQ(training_memory(*backward("mobilenet_v2.onnx", "auto", cpu)).saved_activation_bytes, gpu + 1280 * 3);
  // ViT-B/16's dropouts have ratio 0: views, no masks.
  const GraphPtr vit = backward("vit_b_16.onnx", "auto");
  for (const Tensor& t : vit->tensors()) EXPECT_EQ(t.name.find(":mask"), std::string::npos) << t.name;
}

TEST(TrainingModels, ResNet18BackwardMacsAndAdamStateExactly) {
  const GraphPtr g = step("resnet18.onnx", "adam");
  const TrainingSummary s = training_summary(*g);
  EXPECT_EQ(s.forward.macs, 1'814'073'344);
  EXPECT_EQ(s.backward_dw.macs, 1'814'073'344);
  EXPECT_EQ(s.backward_dx.macs, 1'696'059'392);  // every conv and the fc but the stem (its input is the image)
  EXPECT_EQ(s.forward.macs + s.backward_dx.macs + s.backward_dw.macs, 5'324'206'080);
  EXPECT_EQ(s.memory.optimizer_state_bytes, 2LL * 11'689'512 * 4);  // 93,516,096
  EXPECT_EQ(s.memory.parameter_bytes, 11'689'512LL * 4);
  EXPECT_EQ(s.memory.gradient_bytes, 11'689'512LL * 4);
  EXPECT_DOUBLE_EQ(s.optimizer.vector_ops, 14.0 * 11'689'512);  // Adam: 14 operations per parameter
}

TEST(TrainingModels, EveryModelWithEveryOptimizer) {
  const char* models[] = {"resnet18.onnx", "resnet18_cifar_b4.onnx", "mobilenet_v2.onnx", "gpt2_small.onnx",
                          "gpt2_tiny_L2_T256.onnx", "gpt2_monet_small.onnx"};
  for (const char* m : models) {
    const GraphPtr g = step(m, "adamw");
    const TrainingSummary s = training_summary(*g);
    EXPECT_GT(s.backward_dw.macs, 0) << m;
    EXPECT_EQ(s.backward_dw.macs, s.forward.macs - [&] {
      // Attention matmuls have no weights: their backward is all dX.
      std::int64_t matmul = 0;
      for (const Operator& op : g->operators()) {
        if (op.phase == Phase::forward && op.kind == OpKind::matmul) matmul += op.macs();
      }
      return matmul;
    }()) << m;
  }
  for (const char* opt : {"sgd", "momentum", "adam", "adamw", "adagrad", "rmsprop", "adafactor", "lion", "lamb"}) {
    EXPECT_GT(training_summary(*step("gpt2_monet_small.onnx", opt)).optimizer.vector_ops, 0) << opt;
  }
}

}  // namespace
}  // namespace monet
