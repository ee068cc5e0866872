#pragma once
// The quality plugin kind (`quality`): how good the network of a design point is — its accuracy, a loss, an exit
// rate — beside what the kernel measures of its cost. A [space] may name these metrics as objectives and
// constraints (`accuracy = { min = 93 }`); a maximised one is negated for the search, which minimises.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

/// A metric a quality plugin gives: its key (a results.json key, the column in evaluations.csv), unit and sense.
struct QualityMetric {
  std::string key;        // "accuracy"
  std::string unit;       // "%", "" for dimensionless
  bool maximise = false;  // higher is better
  std::string doc;        // one line for --describe and the reports
};

/// One design point as a quality plugin sees it.
struct QualityQuery {
  /// The point's genes (the [space]'s names, each value as TOML text: "3", "\"nor_conv_3x3\""), in space order;
  /// empty for a run without a [space].
  std::vector<std::pair<std::string, std::string>> genes;
  /// The forward graph of the point's workload, as its frontend built it.
  const Graph* forward = nullptr;
  /// The value (as TOML text) of a key named as --set names it — "workload.set.PATH" (the workload file's key after
  /// [workload.set]), "workload.KEY" (the experiment's [workload] key) — or of a gene by its name; nullopt when the
  /// point has no such key.
  std::function<std::optional<std::string>(const std::string& key)> value;
};

/// Gives the quality metrics of design points.
class MONET_API QualityModel : public Plugin {
 public:
  ~QualityModel() override;
  /// The metrics assess() returns, in its order; fixed once the plugin is configured.
  [[nodiscard]] virtual std::vector<QualityMetric> metrics() const = 0;
  /// The point's values, in metrics() order. A point the plugin cannot assess (a key missing from a table, a
  /// command that failed) throws UserError with a located message: the point is infeasible with that reason
  /// (and a run of the experiment's own point fails with it). Called concurrently; must be deterministic.
  [[nodiscard]] virtual std::vector<double> assess(const QualityQuery& query) const = 0;
};

}  // namespace monet
