#pragma once
// One number of a run with its key and unit (results.json, evaluations.csv, a [space]'s objectives).
#include <string>

namespace monet {

struct Metric {
  std::string key;   // results.json key ("latency_cycles", "energy_breakdown.offchip_energy_pj", a quality plugin's "accuracy")
  std::string unit;  // "cycles", "s", "pJ", "B", "mm2", "%", ""
  double value = 0;
};

}  // namespace monet
