#pragma once
// `monet cost`: a single-core, layer-by-layer study (what ZigZag does), as a table or JSON.
#include <string>
#include <utility>
#include <vector>

#include "monet/cost/cost.hpp"

namespace monet {

/// The result of costing a workload's operators one by one on one core.
struct CostStudy {
  std::string model;                     // cost-model plugin
  std::vector<const Operator*> ops;      // in execution order
  std::vector<Cost> costs;               // one per operator
  std::vector<Residency> residency;      // one per operator (all default without data locality)
  std::int64_t mappings_evaluated = 0;   // distinct work: identical layers are costed once
  double seconds = 0;
  bool data_locality = false;
  /// "kind:name" -> version of the plugins used (the frontend, the cost model, the core's estimator), for the
  /// JSON's provenance. The study makes no random choice: it has no seed.
  std::vector<std::pair<std::string, std::string>> plugins;
};

/// JSON: {"energy_pj", "latency_cycles", ..., "layers": [{"name", "energy_pj", "mac_energy_pj", "latency_cycles",
/// "ideal_cycles", "stall_cycles", "onloading_cycles", "offloading_cycles", "spatial_utilization",
/// "spatial_mapping", "temporal_mapping", "residency"...}]}; otherwise a table.
MONET_API std::string cost_report(const Graph& graph, const Core& core, const CostStudy& study, bool json);

}  // namespace monet
