#pragma once
// The optimizer-model plugin kind (`optimizer`): optimizer states and update operators added to a training graph.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/plugin/training_settings.hpp"

namespace monet {

/// Adds optimizer states and update operators for every trainable parameter of a training graph.
class MONET_API OptimizerModel : public Plugin {
 public:
  ~OptimizerModel() override;
  [[nodiscard]] virtual GraphPtr apply(const Graph& training_graph, const TrainingSettings& settings) const = 0;
};

}  // namespace monet
