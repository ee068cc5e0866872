// The native TOML workload format (plugins/frontend/toml): every op, shape inference, and error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/ir/workload_toml.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<WorkloadFrontend> frontend(std::int64_t batch = 0) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::frontend, "toml");
  EXPECT_NE(h, nullptr);
  ParamValues p = default_params(h->info.params, "test");
  p.set("batch", batch);
  return r.create<WorkloadFrontend>(*h, p);
}

class TomlFrontendTest : public ::testing::Test {
 protected:
  GraphPtr load(const std::string& text, std::int64_t batch = 0) {
    return frontend(batch)->load(dir_.write("w.toml", text));
  }
  std::string fail(const std::string& text) {
    try {
      load(text);
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  }
  std::string path() const { return (dir_.path() / "w.toml").string(); }
  test::ScratchDir dir_;
};

// A small residual CNN touching every op of the format.
const char* kNet = R"([workload]
name = "every_op"
dtype = "int8"
partial_sum_bits = 16

[[inputs]]
name = "x"
shape = [2, 3, 32, 32]

[[layers]]
name = "stem"
op = "conv"
out_channels = 16
kernel = 3
stride = 2
padding = 1

[[layers]]
name = "act"
op = "relu6"

[[layers]]
name = "dw"
op = "conv"
out_channels = 16
groups = 16
kernel = [3, 3]
padding = [1, 1]
bias = false

[[layers]]
name = "sum"
op = "add"
inputs = ["act", "dw"]

[[layers]]
name = "pool"
op = "maxpool"
kernel = 2

[[layers]]
name = "avg"
op = "avgpool"
kernel = 3
stride = 1
padding = [1, 1, 1, 1]

[[layers]]
name = "gap"
op = "global_avgpool"

[[layers]]
name = "flat"
op = "flatten"

[[layers]]
name = "fc"
op = "linear"
out_features = 10

[[layers]]
name = "gate"
op = "sigmoid"

[[layers]]
name = "scaled"
op = "mul"
inputs = ["fc", "gate"]

[[layers]]
name = "tokens"
op = "reshape"
input = "scaled"
shape = [2, 5, -1]

[[layers]]
name = "scores"
op = "matmul"
inputs = ["tokens", "tokens"]
transpose_b = true

[[layers]]
name = "probs"
op = "softmax"
)";

TEST_F(TomlFrontendTest, EveryOpWithInferredShapes) {
  const GraphPtr g = load(kNet);
  EXPECT_EQ(g->name(), "every_op");
  auto shape = [&](const char* t) { return g->find_tensor(t)->shape; };
  EXPECT_EQ(shape("stem"), (Shape{2, 16, 16, 16}));   // (32 + 2 − 3) / 2 + 1 = 16
  EXPECT_EQ(shape("dw"), (Shape{2, 16, 16, 16}));
  EXPECT_EQ(shape("pool"), (Shape{2, 16, 8, 8}));     // stride defaults to the kernel
  EXPECT_EQ(shape("avg"), (Shape{2, 16, 8, 8}));
  EXPECT_EQ(shape("gap"), (Shape{2, 16, 1, 1}));
  EXPECT_EQ(shape("flat"), (Shape{2, 16}));
  EXPECT_EQ(shape("fc"), (Shape{2, 10}));
  EXPECT_EQ(shape("tokens"), (Shape{2, 5, 2}));
  EXPECT_EQ(shape("scores"), (Shape{2, 5, 5}));
  EXPECT_EQ(shape("probs"), (Shape{2, 5, 5}));
  // MACs: stem 2·16·3·16·16·3·3 = 221,184; dw 2·16·16·16·9 = 73,728; fc 2·10·16 = 320; scores 2·5·5·2 = 100.
  EXPECT_EQ(g->find_operator("stem")->macs(), 221'184);
  EXPECT_EQ(g->find_operator("dw")->macs(), 73'728);
  EXPECT_EQ(g->find_operator("fc")->macs(), 320);
  EXPECT_EQ(g->find_operator("scores")->macs(), 100);
  EXPECT_EQ(g->total_macs(), 221'184 + 73'728 + 320 + 100);
  // Parameters: stem 16·3·9 + 16; dw 16·1·9 (no bias); fc 10·16 + 10.
  EXPECT_EQ(g->parameter_count(), 448 + 144 + 170);
  EXPECT_EQ(g->find_tensor("stem.weight")->dtype, ElementType::int8);
  EXPECT_EQ(g->find_operator("act")->type, "Clip");
  EXPECT_DOUBLE_EQ(g->find_operator("act")->ops_per_iteration, 2);
  EXPECT_EQ(g->find_operator("gap")->type, "GlobalAveragePool");
  EXPECT_TRUE(g->find_operator("flat")->is_view());
  EXPECT_EQ(g->find_operator("probs")->kind, OpKind::softmax);
  // Partial sums of 16 bits on every output; 8-bit storage.
  EXPECT_EQ(g->find_operator("stem")->operands[0].partial_sum_bits, 16);
  EXPECT_EQ(g->find_operator("stem")->operands[0].precision_bits, 8);
  EXPECT_EQ(g->outputs(), std::vector<TensorId>{g->find_tensor("probs")->id});
}

TEST_F(TomlFrontendTest, BatchOverride) {
  const GraphPtr g = load(kNet, 8);
  EXPECT_EQ(g->find_tensor("x")->shape, (Shape{8, 3, 32, 32}));
  EXPECT_EQ(g->find_operator("stem")->macs(), 4 * 221'184);
}

TEST_F(TomlFrontendTest, ProjectWorkloadLoads) {
  const GraphPtr g = frontend()->load(test::source_dir() / "workloads/tiny_cnn.toml");
  EXPECT_EQ(g->operators().size(), 4u);
  EXPECT_EQ(g->total_macs(), 23'552);
}

const std::string kHead = "[[inputs]]\nname = \"x\"\nshape = [1, 4, 8, 8]\n\n";

TEST_F(TomlFrontendTest, MistakesNameTheLayerKey) {
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"c\"\nop = \"convv\"\n"),
            path() + ":7:6: error: layers[0].op: unknown operator 'convv' (did you mean 'conv'?); supported: conv, "
                     "linear, gemm, matmul, maxpool, avgpool, global_avgpool, softmax, flatten, reshape, loopnest, relu, relu6, "
                     "clip, sigmoid, tanh, gelu, silu, identity, add, sub, mul, div");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"c\"\nop = \"conv\"\n"),
            path() + ":5:1: error: [layers[0]]: missing required key 'out_channels' (an integer)");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"c\"\nop = \"conv\"\nout_channels = 4\nkernal = 3\n"),
            path() + ":9:1: error: unknown key 'layers[0].kernal' (did you mean 'kernel'?); valid keys here: after, bias, "
                     "dilation, dtype, groups, input, inputs, kernel, module, name, op, out_channels, padding, partial_sum_bits, "
                     "stride");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"a\"\nop = \"add\"\ninputs = [\"x\"]\n"),
            path() + ":8:10: error: layers[0].inputs: this operator takes 2 input(s), got 1");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"c\"\nop = \"conv\"\nout_channels = 4\nkernel = 9\n"),
            path() + ":5:1: error: operator 'c': the 9x9 window does not fit the input [1, 4, 8, 8] with the given padding");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"x\"\nop = \"relu\"\n"), path() + ":6:8: error: layers[0].name: 'x' is defined twice");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"r\"\nop = \"reshape\"\nshape = [3, -1]\n"),
            path() + ":8:9: error: layers[0].shape: reshaping [1, 4, 8, 8] to [3, -1] changes the element count");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"r\"\nop = \"relu\"\ndtype = \"int7\"\n"),
            path() + ":8:9: error: layers[0].dtype: 'int7' is not an element type; expected one of 'fp64', 'fp32', "
                     "'fp16', 'bf16', 'fp8', 'int64', 'int32', 'int16', 'int8', 'int4', 'uint8', 'bool' (did you mean "
                     "'int8', 'int4' or 'int64'?)");
  EXPECT_EQ(fail("[[layers]]\nname = \"r\"\nop = \"relu\"\n"),
            path() + ":1:1: error: a workload needs at least one [[inputs]] entry (name, shape)");
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"f\"\nop = \"flatten\"\n\n[[layers]]\nname = \"m\"\nop = \"matmul\"\n"
                         "inputs = [\"x\", \"f\"]\n"),
            path() + ":9:1: error: operator 'm': inner dimensions differ: [1, 4, 8, 8] x [1, 256] (8 vs 1)");
  EXPECT_EQ(fail("[[inputs]]\nname = \"a\"\nshape = [4]\n[[inputs]]\nname = \"b\"\nshape = [4]\n[[layers]]\nname = \"r\"\nop = \"relu\"\n"),
            path() + ":7:1: error: [layers[0]]: missing 'input': the workload has several inputs (a, b)");
}

// A generic layer: any loop nest, spelled out.
const char* kLoopnest = R"([workload]
name = "generic"

[[inputs]]
name = "x"
shape = [1, 3, 16, 16]

[[tensors]]
name = "w"
shape = [8, 3, 3, 3]

[[tensors]]
name = "mask"
shape = [8]
role = "buffer"

[[layers]]
name = "strided_conv"
op = "loopnest"
kind = "conv"
dims = ["B", "K", "C", "OY", "OX", "FY", "FX"]
sizes = [1, 8, 3, 7, 7, 3, 3]
outputs = [{ tensor = "y", shape = [1, 8, 7, 7], index = ["B", "K", "OY", "OX"], partial_sum_bits = 48 }]
inputs = [{ tensor = "x", index = ["B", "C", "2*OY + FY", "2*OX + FX"] },
          { tensor = "w", index = ["K", "C", "FY", "FX"] }]
attributes = { strides = [2, 2] }

[[layers]]
name = "flat"
op = "loopnest"
kind = "view"
outputs = [{ tensor = "f", shape = [1, 392] }]
inputs = [{ tensor = "y" }]
)";

TEST_F(TomlFrontendTest, AfterOrdersLayersWithoutATensor) {
  const std::string net = kHead + "[[layers]]\nname = \"a\"\nop = \"relu\"\ninput = \"x\"\n\n[[layers]]\nname = \"b\"\n"
                                  "op = \"relu\"\ninput = \"x\"\nafter = [\"a\"]\n";
  const GraphPtr g = load(net);
  const Operator* b = g->find_operator("b");
  ASSERT_EQ(b->after.size(), 1u);
  EXPECT_EQ(g->op(b->after[0]).name, "a");
  EXPECT_THAT(workload_toml(*g), HasSubstr("after = [\"a\"]"));
  EXPECT_EQ(fail(kHead + "[[layers]]\nname = \"a\"\nop = \"relu\"\ninput = \"x\"\nafter = [\"aa\"]\n"),
            path() + ":9:9: error: layers[0].after: 'aa' is not an earlier layer");
}

TEST_F(TomlFrontendTest, GenericLoopNests) {
  const GraphPtr g = load(kLoopnest);
  const Operator* c = g->find_operator("strided_conv");
  EXPECT_EQ(c->macs(), 8 * 3 * 7 * 7 * 9);
  EXPECT_EQ(c->operands[1].access[2].str(c->dim_names()), "2*OY + FY");
  EXPECT_EQ(c->operands[0].partial_sum_bits, 48);
  EXPECT_EQ(c->attributes.at("strides"), (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(g->find_operator("flat")->is_view());
  EXPECT_EQ(g->find_tensor("mask")->role, TensorRole::buffer);
  EXPECT_EQ(g->parameter_count(), 8 * 27);
}

TEST_F(TomlFrontendTest, GenericLoopNestMistakes) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kLoopnest;
    const auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return s.replace(pos, from.size(), to);
  };
  EXPECT_EQ(fail(with("\"2*OY + FY\"", "\"2*OY + FZ\"")),
            path() + ":24:35: error: layers[0].inputs[0].index: not an index expression over the loop dims (B, K, "
                     "C, OY, OX, FY, FX): '2*OY + FZ': 'FZ' is not a loop dimension");
  EXPECT_EQ(fail(with("tensor = \"w\", index", "tensor = \"ww\", index")),
            path() + ":25:22: error: layers[0].inputs[1].tensor: 'ww' is not an input, a [[tensors]] entry or an "
                     "earlier layer's output (did you mean 'w'?)");
  EXPECT_EQ(fail(with("sizes = [1, 8, 3, 7, 7, 3, 3]", "sizes = [1, 8, 3, 7, 7, 3]")),
            path() + ":22:9: error: layers[0].sizes: expected 7 sizes (one per entry of 'dims'), got 6");
  EXPECT_THAT(fail(with("sizes = [1, 8, 3, 7, 7, 3, 3]", "sizes = [1, 8, 3, 9, 7, 3, 3]")),
              HasSubstr("operator 'strided_conv' (conv): axis 2 of 'y' [1, 8, 7, 7] indexed by OY spans [0, 9): an "
                        "output must be covered exactly"));
}

}  // namespace
}  // namespace monet
