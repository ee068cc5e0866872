#pragma once
// The distinct operators of a training step (forward, loss, dX, dW, optimizer update) as a cost model sees them,
// for the loopnest search tests and benchmarks.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "monet/experiment/cost_cache.hpp"
#include "monet/experiment/runner.hpp"
#include "monet/plugin/registry.hpp"

namespace monet::test {

/// One training step as experiments/resnet18_training_tpu_like.toml builds it (ResNet-18-CIFAR, batch 4,
/// cross-entropy, Adam, int8 streaming precision); `workload` (an ONNX file) replaces the model.
inline GraphPtr training_step(const std::filesystem::path& source_dir, const std::filesystem::path& workload = {}) {
  std::vector<std::string> overrides;
  if (!workload.empty()) overrides.push_back("workload.file=\"" + workload.string() + "\"");
  PreparedExperiment p = prepare(
      load_experiment(source_dir / "experiments/resnet18_training_tpu_like.toml", overrides, Registry::global()),
      Registry::global());
  return p.graph;
}

/// The operators whose whole-operator cost queries differ (by the cost cache's tile signature), views left out,
/// in graph order.
inline std::vector<const Operator*> distinct_operators(const Graph& graph) {
  std::vector<const Operator*> out;
  std::set<TileSignature> seen;
  for (const Operator& op : graph.operators()) {
    if (op.is_view()) continue;
    const auto ranges = op.full_ranges();
    if (seen.insert(tile_signature(graph, op, ranges)).second) out.push_back(&op);
  }
  return out;
}

}  // namespace monet::test
