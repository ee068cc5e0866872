#pragma once
// JSON fragments shared by results.json and `monet inspect --json` (kernel-internal).
#include <nlohmann/json.hpp>

#include "monet/training/checkpoint.hpp"
#include "monet/training/memory.hpp"

namespace monet::detail {

/// The "training" object: work per phase and the memory table, every number with its unit in its key, and the
/// checkpointed regions when there are any.
nlohmann::ordered_json training_json(const Graph& graph, const TrainingSummary& s,
                                     const std::vector<CheckpointRegion>& regions = {});

}  // namespace monet::detail
