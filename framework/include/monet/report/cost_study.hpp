#pragma once
// `monet cost`: a single-core, layer-by-layer study (what ZigZag does), as a table or JSON.
#include <string>
#include <vector>

#include "monet/cost/cost.hpp"

namespace monet {

/// Costs of the given operators (in order) on one core. JSON: {"energy_pj", "latency_cycles", "layers": [{"name",
/// "energy_pj", "mac_energy_pj", "latency_cycles", "ideal_cycles", "stall_cycles", "onloading_cycles",
/// "offloading_cycles", "spatial_utilization", "spatial_mapping", "temporal_mapping", ...}]}.
MONET_API std::string cost_report(const Graph& graph, const Core& core, const std::string& model,
                                  const std::vector<const Operator*>& ops, const std::vector<Cost>& costs,
                                  double seconds, bool json);

}  // namespace monet
