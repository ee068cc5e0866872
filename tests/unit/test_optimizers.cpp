// Optimizer-state models: states (count, shape rule, precision), update operations per element, master
// weights and loss scaling, on one linear layer W [4, 3] + b [4] (16 parameters).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/config/toml_reader.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/precision.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

GraphPtr linear_step(const test::ScratchDir& dir, const std::string& optimizer, TrainingSettings s = {},
                     const std::function<void(ParamValues&)>& params = {}) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "toml");
  const GraphPtr fwd = r.create<WorkloadFrontend>(*f, default_params(f->info.params, "t"))
                           ->load(dir.write("w.toml", "[[inputs]]\nname = \"x\"\nshape = [2, 3]\n[[layers]]\nname = "
                                                      "\"fc\"\nop = \"linear\"\nout_features = 4\n"));
  const PluginHandle* b = r.find(PluginKind::backward, "autodiff");
  const GraphPtr bwd = r.create<BackwardGenerator>(*b, default_params(b->info.params, "t"))->generate(*fwd, s);
  const PluginHandle* o = r.find(PluginKind::optimizer, optimizer);
  EXPECT_NE(o, nullptr);
  ParamValues p = default_params(o->info.params, "t");
  if (params) params(p);
  return r.create<OptimizerModel>(*o, p)->apply(*bwd, s);
}

struct Expect {
  const char* name;
  std::int64_t state_bytes;  // fp32
  double ops;                // optimizer vector operations for the 16 parameters
};

TEST(Optimizers, StatesAndOperationCounts) {
  test::ScratchDir dir;
  // Full-size states: 16 parameters × 4 bytes each. Adafactor: W [4,3] keeps row (4) and column (3)
  // statistics, the vector b a full one (4): 11 × 4 bytes; 12 operations per element + the two reductions
  // over W (3 operations per element each). LAMB: 14 (direction) + 4 (scaled update) per element and the two
  // norms (2 operations per element each).
  const Expect cases[] = {
      {"sgd", 0, 2 * 16},
      {"momentum", 64, 4 * 16},
      {"adam", 128, 14 * 16},
      {"adamw", 128, 16 * 16},
      {"adagrad", 64, 6 * 16},
      {"rmsprop", 64, 8 * 16},
      {"adafactor", 44, 12 * 16 + 2 * 3 * 12},
      {"lion", 64, 10 * 16},
      {"lamb", 128, 18 * 16 + 2 * 2 * 16},
  };
  for (const Expect& c : cases) {
    const GraphPtr g = linear_step(dir, c.name);
    const TrainingSummary s = training_summary(*g);
    EXPECT_EQ(s.memory.optimizer_state_bytes, c.state_bytes) << c.name;
    EXPECT_DOUBLE_EQ(s.optimizer.vector_ops, c.ops) << c.name;
    // The update writes the parameters in place: no new parameter storage.
    EXPECT_EQ(s.memory.parameter_bytes, 16 * 4) << c.name;
    const Operator* update = g->find_operator("update(fc.weight)");
    ASSERT_NE(update, nullptr) << c.name;
    EXPECT_EQ(update->phase, Phase::optimizer);
  }
}

TEST(Optimizers, OptionsThatChangeTheWork) {
  test::ScratchDir dir;
  auto ops = [&](const char* opt, const std::function<void(ParamValues&)>& p) {
    return training_summary(*linear_step(dir, opt, {}, p)).optimizer.vector_ops;
  };
  EXPECT_DOUBLE_EQ(ops("momentum", [](ParamValues& p) { p.set("nesterov", true); }), 6 * 16);
  EXPECT_DOUBLE_EQ(ops("sgd", [](ParamValues& p) { p.set("weight_decay", 0.1); }), 4 * 16);
  EXPECT_DOUBLE_EQ(ops("adam", [](ParamValues& p) { p.set("amsgrad", true); }), 16 * 16);
  EXPECT_DOUBLE_EQ(ops("rmsprop", [](ParamValues& p) {
                     p.set("momentum", 0.9);
                     p.set("centered", true);
                   }),
                   14 * 16);
  const GraphPtr ams = linear_step(dir, "adam", {}, [](ParamValues& p) { p.set("amsgrad", true); });
  EXPECT_EQ(training_memory(*ams).optimizer_state_bytes, 3 * 64);
}

TEST(Optimizers, MixedPrecisionMasterWeightsAndLossScaling) {
  test::ScratchDir dir;
  TrainingSettings s;
  s.precision = Precision::preset_named("mixed_bf16");
  s.precision->loss_scaling = true;
  const GraphPtr g = apply_precision(*linear_step(dir, "adam", s), *s.precision);
  const TrainingMemory m = training_memory(*g);
  EXPECT_EQ(m.parameter_bytes, 16 * 2);      // bf16 working weights
  EXPECT_EQ(m.master_weight_bytes, 16 * 4);  // fp32 master copies
  EXPECT_EQ(m.optimizer_state_bytes, 128);   // fp32 states
  EXPECT_EQ(m.gradient_bytes, 16 * 2);       // bf16 gradients
  EXPECT_NE(g->find_operator("cast(fc.weight)"), nullptr);
  EXPECT_NE(g->find_operator("unscale(fc.weight)"), nullptr);
  EXPECT_NE(g->find_operator("loss_scale(loss)"), nullptr);
  // 14 (Adam) + 1 (cast to bf16) + 2 (unscale and check) per element, + 1 for the loss scale.
  EXPECT_DOUBLE_EQ(training_summary(*g).optimizer.vector_ops, (14 + 1 + 2) * 16);
  // bf16 activations, fp32 partial sums in the matrix products.
  EXPECT_EQ(g->find_tensor("fc")->dtype, ElementType::bf16);
  EXPECT_EQ(g->find_operator("fc")->operands[0].partial_sum_bits, 32);
}

TEST(Optimizers, AreListedWithDocumentedHyperParameters) {
  const Registry& r = Registry::global();
  for (const char* name : {"sgd", "momentum", "adam", "adamw", "adagrad", "rmsprop", "adafactor", "lion", "lamb"}) {
    const PluginHandle* h = r.find(PluginKind::optimizer, name);
    ASSERT_NE(h, nullptr) << name;
    EXPECT_FALSE(h->info.summary.empty());
    ASSERT_FALSE(h->info.params.empty()) << name;
    for (const ParamSpec& p : h->info.params) EXPECT_FALSE(p.doc.empty()) << name << "." << p.name;
  }
}

TEST(Precision, PresetsAndOverrides) {
  const auto stream = Precision::preset_named("int8_stream");
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->activation, ElementType::int8);
  EXPECT_EQ(stream->partial_sum, ElementType::int16);
  EXPECT_EQ(stream->dropout_mask, ElementType::boolean);  // every preset: 1-byte masks, as on GPUs
  auto doc = TomlDocument::parse_string(
      "preset = \"mixed_bf16\"\ngradient = 32\nmaster_weight = \"fp64\"\ndropout_mask = \"fp32\"\n", "p.toml");
  TableReader t(doc.root(), doc.file(), "precision");
  const Precision p = read_precision(t);
  t.finish();
  EXPECT_EQ(p.activation, ElementType::bf16);
  EXPECT_EQ(p.gradient, ElementType::fp32);
  EXPECT_EQ(p.master_weight, ElementType::fp64);
  EXPECT_EQ(p.dropout_mask, ElementType::fp32);  // PyTorch on CPUs
  EXPECT_THAT(precision_toml(p), ::testing::HasSubstr("dropout_mask = \"fp32\""));
  EXPECT_TRUE(p.has_master_weights());
  EXPECT_FALSE(Precision::preset_named("fp32")->has_master_weights());
}

}  // namespace
}  // namespace monet
