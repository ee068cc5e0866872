// Layer-by-layer execution: every operator is one computation node over its whole loop nest, in graph
// order; nothing is fused, so every intermediate tensor is complete before its consumer starts.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/interfaces.hpp"

namespace monet::plugins {
namespace {

class LayerByLayer final : public FusionStrategy {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::fusion;
    i.name = "layer_by_layer";
    i.version = "1.0.0";
    i.summary = "One computation node per operator, in graph order (no fusion, no tiling)";
    i.description = "Each operator runs as a whole on one core; its outputs are complete before any consumer "
                    "starts. Views (reshape, flatten) become zero-time nodes that stay with their input.";
    return i;
  }
  explicit LayerByLayer(const ParamValues& /*params*/) {}

  [[nodiscard]] std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& /*acc*/) const override {
    std::vector<ComputationNode> nodes;
    nodes.reserve(graph.operators().size());
    for (const Operator& op : graph.operators()) {
      ComputationNode cn;
      cn.op = op.id;
      cn.ranges = op.full_ranges();
      cn.stack = op.id;
      nodes.push_back(std::move(cn));
    }
    return nodes;
  }
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::LayerByLayer)
