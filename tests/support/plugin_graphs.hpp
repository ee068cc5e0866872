#pragma once
// Graphs made by the bundled plugins with their default parameters, for tests that build their own workloads.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/modules.hpp"

namespace monet::test {

/// The workload `file` read by the frontend plugin named `frontend`.
inline GraphPtr load(const std::string& frontend, const std::filesystem::path& file) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, frontend);
  return r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))->load(file);
}

/// The training step autodiff makes of a forward graph (default training settings: no optimizer).
inline GraphPtr training_graph(const GraphPtr& fwd) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
  return r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(*fwd, TrainingSettings{});
}

/// The checkpoint DP tests' chain (TOML workload): six blocks of unequal widths (linear, ReLU, linear) and a head,
/// 7 blocks of the chain.
inline std::string uneven_chain() {
  const auto layer = [](const std::string& name, const std::string& op, const std::string& module, const std::string& extra) {
    return "\n[[layers]]\nname = \"" + name + "\"\nop = \"" + op + "\"\nmodule = \"" + module + "\"\n" + extra;
  };
  std::string s = "[[inputs]]\nname = \"x\"\nshape = [4, 16]\n";
  const int widths[] = {64, 8, 48, 16, 96, 24};
  for (int b = 0; b < 6; ++b) {
    const std::string m = "b" + std::to_string(b);
    s += layer(m + "_fcA", "linear", m, "out_features = " + std::to_string(widths[b]) + "\nbias = false\n");
    s += layer(m + "_relu", "relu", m, "");
    s += layer(m + "_fcB", "linear", m, "out_features = 16\nbias = false\n");
  }
  return s + layer("fc", "linear", "head", "out_features = 10\n");
}

/// A graph's top-level module items as a chain of one-region blocks (the checkpoint DP and MILP tests' ResNet chain),
/// and their labels.
struct TopLevelChain {
  std::vector<std::vector<CheckpointRegion>> blocks;
  std::vector<std::string> names;
};
inline TopLevelChain top_level_chain(const Graph& g) {
  const ModuleTree tree = module_tree(g);
  TopLevelChain c;
  for (const ModuleItem& i : tree.root().items) {
    c.names.push_back(tree.label(g, i));
    CheckpointRegion r{c.names.back(), tree.operators_of(i)};
    std::sort(r.operators.begin(), r.operators.end());
    c.blocks.push_back({r});
  }
  return c;
}

}  // namespace monet::test
