#pragma once
// JSON fragments shared by results.json and `monet inspect --json` (kernel-internal).
#include <nlohmann/json.hpp>

#include "monet/training/memory.hpp"

namespace monet::detail {

/// The "training" object: work per phase and the memory table, every number with its unit in its key.
nlohmann::ordered_json training_json(const Graph& graph, const TrainingSummary& s);

}  // namespace monet::detail
