// The autodiff backward plugin: its description, its class_axis parameter and the entry point. The generator
// (generator.hpp) builds the training step.
#include "generator.hpp"
#include "monet/plugin/backward_generator.hpp"
#include "monet/plugin/entry.hpp"

namespace monet::plugins {
namespace {

using autodiff::ClassAxis;
using autodiff::Generator;

class Autodiff final : public BackwardGenerator {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::backward;
    i.name = "autodiff";
    i.version = "1.0.0";
    i.summary = "Forward graph -> one training step: forward, loss (cross-entropy or binary cross-entropy), backward (dX and dW)";
    i.description =
        "Gradient loop nests per operator (PyTorch derivative conventions for what is saved): conv dX as a "
        "transposed convolution split into stride phases (no multiply on inserted zeros) and dW with the batch in "
        "the reduction, gemm/matmul/attention with dY in place of one operand, batch/layer norm as a reduction then "
        "an elementwise pass, softmax (masked too), pointwise ops, max pooling through saved indices, average "
        "pooling as a scatter, embedding dW as a scatter-add (EmbeddingBag with its sparse attribute: a row-sparse "
        "gradient, one row per lookup), views, gradient sums at fan-outs. No gradient flows "
        "to graph inputs or into paths that only reach frozen parameters. [training] micro_batches = k repeats "
        "forward and backward k times and accumulates the weight gradients.";
    i.params = {
        ParamSpec::choice("class_axis", {"auto", "channels", "last"}, "auto")
            .with_doc("the class axis of the logits for the cross-entropy loss: channels = axis 1 of [N, C, ...] "
                      "(PyTorch's CrossEntropyLoss, segmentation), last = [..., classes] (token logits); auto: "
                      "channels from rank 4 on, else last"),
    };
    return i;
  }
  explicit Autodiff(const ParamValues& params) {
    const std::string& axis = params.get_string("class_axis");
    class_axis_ = axis == "channels" ? ClassAxis::channels : axis == "last" ? ClassAxis::last : ClassAxis::automatic;
  }
  [[nodiscard]] GraphPtr generate(const Graph& forward, const TrainingSettings& settings) const override {
    return Generator(forward, settings, class_axis_).run();
  }

 private:
  ClassAxis class_axis_ = ClassAxis::automatic;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Autodiff)
