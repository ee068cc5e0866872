#pragma once
// The compiled side of monet.Experiment (python/monet/__init__.py wraps it): an experiment loaded and validated
// once, with the DesignEvaluator a search uses, so that points evaluated from Python share its caches.
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monet/experiment/experiment.hpp"
#include "monet/search/design_evaluator.hpp"
#include "monet/search/space_spec.hpp"

namespace monet::python {

namespace py = pybind11;

class LoadedExperiment {
 public:
  /// What `monet run FILE --set S...` reads: the experiment's [plugins] path extends the registry first.
  LoadedExperiment(const std::string& file, const std::vector<std::string>& sets);

  [[nodiscard]] bool has_space() const { return spec_.has_value(); }
  [[nodiscard]] py::list genes() const;
  [[nodiscard]] py::list objectives() const;
  [[nodiscard]] std::vector<std::string> constraints() const;
  /// One point (a value index per gene): (objective values as the reports show them, violation, reason).
  [[nodiscard]] py::tuple evaluate(const std::vector<std::int32_t>& genes) const;
  /// Points in parallel, results in point order; Ctrl-C is checked between chunks of points.
  [[nodiscard]] py::list evaluate_many(const std::vector<std::vector<std::int32_t>>& points, int threads) const;
  /// The experiment without a [space]: results.json, schedule.csv, transfers.csv (and the folder, with `out`).
  [[nodiscard]] py::dict run(const std::string& out, int threads) const;
  /// The experiment's search plugin over its space; with `best`, the best point's results too.
  [[nodiscard]] py::dict search(const std::string& out, int threads, bool best) const;

 private:
  [[nodiscard]] DesignPoint point(const std::vector<std::int32_t>& genes) const;
  [[nodiscard]] std::string output_dir(const std::string& out) const;

  std::string file_;
  const Registry* registry_;
  std::unique_ptr<ExperimentSource> source_;
  Experiment experiment_;
  std::optional<SpaceSpec> spec_;
  std::unique_ptr<DesignEvaluator> evaluator_;
};

void bind_experiment(py::module_& m);

}  // namespace monet::python
