// Layer-by-layer execution: every operator runs as a whole (or split over cores, `inter`) before its
// consumers start; nothing is fused, so every intermediate tensor is complete before its consumer starts.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/fusion_strategy.hpp"
#include "monet/schedule/tiling.hpp"

namespace monet::plugins {
namespace {

class LayerByLayer final : public FusionStrategy {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::fusion;
    i.name = "layer_by_layer";
    i.version = "1.1.0";
    i.summary = "One computation node per operator (or per inter-core split), in graph order; no fusion";
    i.description =
        "Each operator runs as a whole; its outputs are complete before any consumer starts. `inter` splits "
        "operators over cores: rules KEY=DIM:N (KEY an operator name, type, kind or 'default'; DIM a loop "
        "dimension or axisN, the loop dim indexing output axis N; N a count or 'all'), e.g. \"conv=K:4\"; "
        "group g of a split runs on the g-th allowed core when an operator has exactly that many; a split along a "
        "reduction dimension (partial sums on every core) is an error. Views "
        "(reshape, flatten) become zero-time nodes that stay with their input. `stream_operands` keeps every "
        "operand in off-chip memory and streams it while the layer runs (the choice Stream makes for layers "
        "that are not fused).";
    i.params = {
        ParamSpec::string_list("inter", std::vector<std::string>{})
            .with_doc("inter-core splits, e.g. [\"conv=K:4\", \"gemm=K:4\"]"),
        ParamSpec::boolean("stream_operands", false)
            .with_doc("stream every operand from/to off-chip memory during the layer instead of loading it on chip"),
    };
    return i;
  }
  explicit LayerByLayer(const ParamValues& p)
      : inter_(parse_tiling_rules(p, "inter")), stream_(p.get_bool("stream_operands")) {}

  [[nodiscard]] std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& /*acc*/,
                                                       const std::vector<std::vector<int>>& allowed) const override {
    std::vector<ComputationNode> nodes;
    nodes.reserve(graph.operators().size());
    for (const Operator& op : graph.operators()) {
      std::vector<ComputationNode> tiles = tile_operator(graph, op, inter_splits(graph, op, inter_, allowed[static_cast<std::size_t>(op.id)].size()), {});
      for (ComputationNode& cn : tiles) {
        cn.stack = op.id;
        cn.streamed = stream_ && !op.is_view();
        nodes.push_back(std::move(cn));
      }
    }
    return nodes;
  }

 private:
  std::vector<TilingRule> inter_;
  bool stream_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::LayerByLayer)
