#pragma once
// The numbers of a run that searches can rank designs by: the numeric summary of results.json, flat, with
// their units. One definition for results.json, evaluations.csv and the objectives a [space] may name.
#include <string>
#include <vector>

#include "monet/experiment/runner.hpp"
#include "monet/report/metric.hpp"

namespace monet {

/// Every metric of a schedule of a prepared experiment, in a fixed order.
MONET_API std::vector<Metric> summary_metrics(const PreparedExperiment& p, const ScheduleSummary& s);
/// How busy the accelerator's PEs are over the step, Megatron-style (Korthikanti et al. 2022): `hfu` counts every
/// MAC the step executes, recomputation included; `mfu` only the model's (recomputed MACs left out), so checkpointing
/// lowers mfu but not hfu. Both are MACs / (latency cycles x every PE of the accelerator), 0 for an empty schedule.
struct Utilisation {
  double mfu = 0;
  double hfu = 0;
};
MONET_API Utilisation utilisation(const PreparedExperiment& p, const ScheduleSummary& s);
/// The keys summary_metrics() gives (for validating objective names before any evaluation), with units.
MONET_API std::vector<std::pair<std::string, std::string>> metric_keys();
/// Whether a higher value of the metric is the better design (mfu, hfu, TFLOP/s): a search maximises it.
MONET_API bool higher_is_better(const std::string& metric);

}  // namespace monet
