#pragma once
// A design space as a search plugin sees it: genes with stable keys, each index-coded over a finite list of
// values; a design point is one value index per gene; an evaluation is a point with its objectives (all
// minimised) and its feasibility. Infeasible points are values, never exceptions: they carry Deb's
// constraint violation so that constrained domination can rank them.
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

/// The preparation stage a gene changes, in stage order: a change re-runs its stage and every later one.
enum class GeneGroup : std::uint8_t { hardware, training, checkpoint, fusion, allocation };
MONET_API std::string to_string(GeneGroup g);

struct Gene {
  std::string key;                  // stable and unique, e.g. "architecture.cores.pe.array.rows", "alloc:/layer1/conv1#g2"
  std::string name;                 // the user's name for it: the column header in evaluations.csv
  GeneGroup group = GeneGroup::hardware;
  std::vector<std::string> labels;  // the value of each index, as TOML text ("2097152", "\"adam\"", "core3")
  /// Values are ordered (a numeric range or an ordered list): neighbouring indices are similar designs, so
  /// ordinal operators (creep, SBX on the index) make sense. Categorical genes (cores, plugin names) are not.
  bool ordinal = false;
  std::int32_t configured = 0;      // index of the experiment's own value (the point `fixed` evaluates)
  [[nodiscard]] std::int32_t size() const { return static_cast<std::int32_t>(labels.size()); }
};

struct DesignPoint {
  std::vector<std::int32_t> genes;  // value index per gene of the space
  auto operator<=>(const DesignPoint&) const = default;
  bool operator==(const DesignPoint&) const = default;
};

struct Objective {
  std::string key;   // results.json key (e.g. "latency_cycles", "energy_pj", "area_mm2", a quality plugin's "accuracy")
  std::string unit;  // "cycles", "pJ", "mm2", "B", "%"
  /// Higher is better (mfu, accuracy): Evaluation::objectives holds its negation, so that a search minimises every
  /// objective; the reports show value().
  bool maximise = false;
  /// The metric's value of a minimised objective value.
  [[nodiscard]] double value(double minimised) const { return maximise ? -minimised : minimised; }
};

struct DesignSpace {
  std::vector<Gene> genes;
  std::vector<Objective> objectives;     // at least one
  std::vector<std::string> constraints;  // human-readable, e.g. "peak_onchip_bytes <= capacity"
  /// Number of points (product of gene sizes), as a double: spaces can exceed 2^63.
  [[nodiscard]] MONET_API double size() const;
  /// The experiment's own point (every gene at its configured index).
  [[nodiscard]] MONET_API DesignPoint configured() const;
};

struct Evaluation {
  DesignPoint point;
  /// Objective values in DesignSpace::objectives order, minimised (a maximised objective's negated:
  /// Objective::value gives the metric). Meaningful only when feasible; an
  /// infeasible point that was scheduled still carries its numbers, one that could not be evaluated has NaNs.
  std::vector<double> objectives;
  /// Deb's constraint violation: 0 when feasible, else > 0 (sum of relative excesses, e.g. (peak - capacity) /
  /// capacity; +infinity when the point could not be evaluated at all, e.g. an operator that fits no core).
  double violation = 0;
  std::string reason;  // why infeasible ("" when feasible)
  /// The [quality] plugin's metrics of the point, in its order (empty without one, or when it could not assess
  /// the point): journalled, so that a resumed search does not ask the plugin again.
  std::vector<double> quality;
  [[nodiscard]] bool feasible() const { return violation == 0; }
};

}  // namespace monet
