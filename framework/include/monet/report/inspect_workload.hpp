#pragma once
// `monet inspect` as a function (the CLI and the Python module share it): read a workload with its frontend and,
// when asked, build the training step (autodiff, an optimizer, checkpointing, precision, offloading) without an
// accelerator, then show it as text or as JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monet/plugin/registry.hpp"
#include "monet/report/inspect.hpp"
#include "monet/training/checkpoint_optimal.hpp"

namespace monet {

struct InspectRequest {
  std::string workload;
  std::int64_t batch = 0;
  std::vector<std::string> sets;  // frontend parameters, key=value
  std::string plugin;             // "" = by extension
  bool training = false;          // show the training step (autodiff + optimizer)
  std::string optimizer = "sgd";
  std::string loss = "cross_entropy";
  std::string precision;          // a precision preset ("" = the workload's element types)
  std::int64_t micro_batches = 1;
  std::string checkpoint;         // a checkpoint policy ("segments=4", "modules=layer*")
  std::string offload;            // GLOB[,GLOB]: modules whose saved activations are offloaded
  std::string checkpoint_semantics;  // pytorch | minimal: what a region runs again
  std::string checkpoint_solver;  // dp | segments | rotor | milp[,SECONDS[,NODES]]: how optimal=BUDGET is solved
};

struct InspectedWorkload {
  GraphPtr graph;  // the forward graph, or the training step
  std::vector<CheckpointRegion> regions;  // by operator ids of `graph`
  std::optional<CheckpointSolve> solve;   // how optimal=BUDGET was solved
  std::string offload_json;  // "offload": {...} member of "training" (empty without offloading)
  std::string offload_text;
};

/// Throws UserError (located at the file or at the option, "--checkpoint", ...) for bad input.
MONET_API InspectedWorkload inspect_workload(const InspectRequest& request, const Registry& registry);
/// What `monet inspect --json` prints.
MONET_API std::string inspected_json(const InspectedWorkload& inspected, const InspectRequest& request);
/// What `monet inspect` prints.
MONET_API std::string inspected_text(const InspectedWorkload& inspected, const InspectRequest& request);

}  // namespace monet
