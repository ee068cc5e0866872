#pragma once
// JSON fragments shared by results.json, search.json and `monet inspect --json` (kernel-internal).
#include <nlohmann/json.hpp>

#include "monet/experiment/experiment.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/memory.hpp"

namespace monet::detail {

/// The "training" object: work per phase and the memory table, every number with its unit in its key, the
/// checkpointed regions when there are any, and how the optimal policy was solved (`solve`) when it was.
nlohmann::ordered_json training_json(const Graph& graph, const TrainingSummary& s,
                                     const std::vector<CheckpointRegion>& regions = {},
                                     const CheckpointSolve* solve = nullptr);

/// training.checkpoint_solver: the optimal policy's solver, its status, objective, bound, gap and limits.
nlohmann::ordered_json checkpoint_solve_json(const CheckpointSolve& solve);

/// The "provenance" object of results.json and search.json: monet's version and git commit, the seed, and the
/// version of every plugin the experiment uses ("kind:name": version).
nlohmann::ordered_json provenance_json(const Experiment& experiment);

/// "kind:name": version of every plugin a registry found (a search's genes may choose any of them).
nlohmann::ordered_json plugins_found_json(const Registry& registry);

}  // namespace monet::detail
