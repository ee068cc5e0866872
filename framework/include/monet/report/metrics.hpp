#pragma once
// The numbers of a run that searches can rank designs by: the numeric summary of results.json, flat, with
// their units. One definition for results.json, evaluations.csv and the objectives a [space] may name.
#include <string>
#include <vector>

#include "monet/experiment/runner.hpp"

namespace monet {

struct Metric {
  std::string key;   // results.json key ("latency_cycles", "energy_breakdown.offchip_energy_pj")
  std::string unit;  // "cycles", "s", "pJ", "B", "mm2", ""
  double value = 0;
};

/// Every metric of a schedule of a prepared experiment, in a fixed order.
MONET_API std::vector<Metric> summary_metrics(const PreparedExperiment& p, const ScheduleSummary& s);
/// The keys summary_metrics() gives (for validating objective names before any evaluation), with units.
MONET_API std::vector<std::pair<std::string, std::string>> metric_keys();

}  // namespace monet
