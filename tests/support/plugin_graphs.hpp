#pragma once
// Graphs made by the bundled plugins with their default parameters, for tests that build their own workloads.
#include <filesystem>
#include <string>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"

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

}  // namespace monet::test
