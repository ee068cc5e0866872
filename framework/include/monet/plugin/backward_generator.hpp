#pragma once
// The backward-generator plugin kind (`backward`): a forward graph in, the graph of a training step out.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/plugin/training_settings.hpp"

namespace monet {

/// Turns a forward graph into the graph of one training step: forward, loss, backward.
class MONET_API BackwardGenerator : public Plugin {
 public:
  ~BackwardGenerator() override;
  [[nodiscard]] virtual GraphPtr generate(const Graph& forward, const TrainingSettings& settings) const = 0;
};

}  // namespace monet
