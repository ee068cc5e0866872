#pragma once
// The experiment's [quality] plugin on the kernel's side: created once per run (a plugin may keep a cache across
// the points of a search), its metrics checked against the run's own, and the query of a prepared point built:
// the point's genes and the lookup of its workload keys as --set names them.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "monet/experiment/runner.hpp"
#include "monet/plugin/quality_model.hpp"
#include "monet/report/metrics.hpp"

namespace monet {

struct QualityPlugin {
  std::shared_ptr<const QualityModel> model;
  std::vector<QualityMetric> metrics;
};

/// The experiment's quality plugin, or none without [quality]. A metric named like one of a run's own
/// (latency_cycles, ...) or listed twice is a UserError at [quality].
MONET_API std::optional<QualityPlugin> make_quality_plugin(const Experiment& e);

/// The point's quality values (metrics order). `genes`: (name, TOML text) of the point's genes. Throws UserError
/// when the plugin cannot assess the point.
MONET_API std::vector<double> assess_quality(const QualityPlugin& q, const PreparedExperiment& p,
                                             const std::vector<std::pair<std::string, std::string>>& genes);

/// The same as metrics of the run (key, unit, value), for results.json and a search's objectives.
MONET_API std::vector<Metric> quality_metrics(const QualityPlugin& q, const PreparedExperiment& p,
                                              const std::vector<std::pair<std::string, std::string>>& genes);

/// The value (TOML text) of `key` at a prepared point: "workload.set.PATH" (the workload file's key after
/// [workload.set]), "workload.KEY" (a [workload] key: the frontend's parameter or `file`), else a gene's name.
MONET_API std::optional<std::string> point_key_value(const PreparedExperiment& p,
                                                     const std::vector<std::pair<std::string, std::string>>& genes,
                                                     const std::string& key);

}  // namespace monet
