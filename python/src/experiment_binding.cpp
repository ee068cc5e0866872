#include "experiment_binding.hpp"

#include <pybind11/stl.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <utility>

#include "monet/experiment/plugin_folders.hpp"
#include "monet/report/report.hpp"
#include "monet/report/search_output.hpp"
#include "monet/report/search_report.hpp"
#include "monet/search/search_run.hpp"

namespace monet::python {

namespace {

/// --threads: a cap on TBB's workers while a call runs (0: TBB's default, one per hardware thread).
std::unique_ptr<tbb::global_control> thread_limit(int threads) {
  if (threads < 0) throw UserError(SourceLocation{"threads"}, "expected a number >= 0, got " + std::to_string(threads));
  if (threads == 0) return nullptr;
  return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                               static_cast<std::size_t>(threads));
}

/// A pending Python signal (Ctrl-C), checked with the GIL held from code that runs without it; the exception
/// its handler raised is kept to be raised once the kernel has returned what it did.
class PendingSignal {
 public:
  PendingSignal() = default;
  PendingSignal(const PendingSignal&) = delete;
  PendingSignal& operator=(const PendingSignal&) = delete;
  /// With the GIL held (it outlives the GIL's release): an exception not handed over is dropped.
  ~PendingSignal() {
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
  }
  /// With the GIL released: true once a handler raised.
  bool check() {
    if (raised()) return true;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return false;
    PyErr_Fetch(&type_, &value_, &traceback_);
    PyErr_NormalizeException(&type_, &value_, &traceback_);
    if (traceback_) PyException_SetTraceback(value_, traceback_);
    return true;
  }
  [[nodiscard]] bool raised() const { return type_ != nullptr; }
  /// With the GIL held: the exception (KeyboardInterrupt) as an object, or None.
  py::object exception() {
    if (!raised()) return py::none();
    Py_XDECREF(type_);
    Py_XDECREF(traceback_);
    type_ = traceback_ = nullptr;
    return py::reinterpret_steal<py::object>(std::exchange(value_, nullptr));
  }
  /// With the GIL held: raises it.
  void rethrow() {
    if (!raised()) return;
    PyErr_Restore(type_, value_, traceback_);
    type_ = value_ = traceback_ = nullptr;
    throw py::error_already_set();
  }

 private:
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

py::tuple evaluation_tuple(const DesignSpace& space, const Evaluation& e) {
  py::list values;
  for (std::size_t k = 0; k < e.objectives.size(); ++k) values.append(space.objectives[k].value(e.objectives[k]));
  return py::make_tuple(values, e.violation, e.reason);
}

py::dict run_files(const PreparedExperiment& prepared, const RunResult& result, const std::filesystem::path& dir) {
  py::dict d;
  d["results_json"] = results_json(prepared, result);
  d["schedule_csv"] = schedule_csv(prepared, result);
  d["transfers_csv"] = transfers_csv(prepared, result);
  d["text"] = summary_text(prepared, result, dir);
  return d;
}

}  // namespace

LoadedExperiment::LoadedExperiment(const std::string& file, const std::vector<std::string>& sets)
    : file_(file), registry_(&registry_with(experiment_plugin_path(file, sets))) {
  source_ = std::make_unique<ExperimentSource>(file, sets, *registry_);
  experiment_ = source_->build();
  spec_ = read_space_spec(*source_);
  evaluator_ = std::make_unique<DesignEvaluator>(*source_, spec_, *registry_);
}

py::list LoadedExperiment::genes() const {
  py::list out;
  for (const Gene& g : evaluator_->space().genes) {
    py::dict d;
    d["key"] = g.key;
    d["name"] = g.name;
    d["group"] = to_string(g.group);
    d["labels"] = g.labels;
    d["ordinal"] = g.ordinal;
    d["configured"] = g.configured;
    out.append(d);
  }
  return out;
}

py::list LoadedExperiment::objectives() const {
  py::list out;
  for (const Objective& o : evaluator_->space().objectives) {
    py::dict d;
    d["key"] = o.key;
    d["unit"] = o.unit;
    d["maximise"] = o.maximise;
    out.append(d);
  }
  return out;
}

std::vector<std::string> LoadedExperiment::constraints() const { return evaluator_->space().constraints; }

DesignPoint LoadedExperiment::point(const std::vector<std::int32_t>& genes) const {
  const DesignSpace& space = evaluator_->space();
  if (genes.size() != space.genes.size()) {
    throw UserError(SourceLocation{file_}, "a point of this space has " + std::to_string(space.genes.size()) +
                                               " genes, got " + std::to_string(genes.size()));
  }
  for (std::size_t g = 0; g < genes.size(); ++g) {
    if (genes[g] < 0 || genes[g] >= space.genes[g].size()) {
      throw UserError(SourceLocation{file_}, "gene '" + space.genes[g].name + "' has " +
                                                 std::to_string(space.genes[g].size()) + " values, got index " +
                                                 std::to_string(genes[g]));
    }
  }
  return DesignPoint{genes};
}

py::tuple LoadedExperiment::evaluate(const std::vector<std::int32_t>& genes) const {
  const DesignPoint p = point(genes);
  Evaluation e;
  {
    py::gil_scoped_release release;
    e = evaluator_->evaluate(p);
  }
  return evaluation_tuple(evaluator_->space(), e);
}

py::list LoadedExperiment::evaluate_many(const std::vector<std::vector<std::int32_t>>& points, int threads) const {
  std::vector<DesignPoint> asked;
  asked.reserve(points.size());
  for (const auto& genes : points) asked.push_back(point(genes));
  std::vector<Evaluation> got(asked.size());
  PendingSignal signal;
  {
    py::gil_scoped_release release;
    const auto limit = thread_limit(threads);
    // Chunks of a few points per worker: Ctrl-C is seen within a chunk's time.
    const std::size_t chunk = 4 * static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
    for (std::size_t start = 0; start < asked.size() && !signal.check(); start += chunk) {
      const std::size_t end = std::min(asked.size(), start + chunk);
      tbb::parallel_for(start, end, [&](std::size_t i) { got[i] = evaluator_->evaluate(asked[i]); });
    }
  }
  signal.rethrow();
  py::list out;
  for (const Evaluation& e : got) out.append(evaluation_tuple(evaluator_->space(), e));
  return out;
}

std::string LoadedExperiment::output_dir(const std::string& out) const {
  if (!out.empty()) check_output_folder(out, experiment_.overwrite);  // before any work, as the CLI
  return out;
}

py::dict LoadedExperiment::run(const std::string& out, int threads) const {
  if (spec_) throw UserError(SourceLocation{file_}, "the experiment has a [space]: Experiment.search() searches it");
  const std::filesystem::path dir = output_dir(out);
  std::shared_ptr<const PreparedExperiment> prepared;
  RunResult result;
  {
    py::gil_scoped_release release;
    const auto limit = thread_limit(threads);
    auto plugin = registry_->create<SearchAlgorithm>(*experiment_.search.plugin, experiment_.search.params);
    const SearchResult r = run_search(*evaluator_, *plugin, experiment_.seed);
    const std::optional<DesignPoint> best = best_point(r);
    ensure(best.has_value(), "search plugin '" + experiment_.search.name() + "' returned no evaluation");
    const DesignEvaluator::Detail detail = evaluator_->detail(*best);
    result = run_result(r, *best, detail);
    prepared = detail.prepared;
    check_schedule_fits(experiment_, result.best.summary, file_);
    if (!out.empty()) write_folder_atomically(dir, experiment_.overwrite, output_files(*prepared, result, dir));
  }
  py::dict d = run_files(*prepared, result, dir);
  d["out"] = out;
  return d;
}

py::dict LoadedExperiment::search(const std::string& out, int threads, bool best) const {
  const std::filesystem::path dir = output_dir(out);
  PendingSignal signal;
  std::atomic<bool> stop{false};
  SearchResult r;
  std::optional<SearchOutput> written;
  std::shared_ptr<const PreparedExperiment> best_prepared;
  RunResult best_result;
  {
    py::gil_scoped_release release;
    const auto limit = thread_limit(threads);
    auto plugin = registry_->create<SearchAlgorithm>(*experiment_.search.plugin, experiment_.search.params);
    SearchOptions options;
    options.stop = &stop;
    options.progress = [&](const SearchProgress&) {
      if (signal.check()) stop.store(true);  // the kernel stops after this batch and returns what was done
    };
    try {
      r = run_search(*evaluator_, *plugin, experiment_.seed, options);
    } catch (const UserError& err) {
      if (err.where().known()) throw;
      throw UserError(experiment_.search.where, err.message());  // the kernel's refusal of a plan: the [search] chose it
    }
    if (!out.empty()) {
      written = search_output(experiment_, *source_, *evaluator_, r, registry_, dir);
      write_folder_atomically(dir, experiment_.overwrite, written->files);
      if (written->detail) {
        best_prepared = written->detail->prepared;
        best_result = written->result;
      }
    } else if (best) {
      if (const std::optional<DesignPoint> p = best_point(r)) {
        try {
          const DesignEvaluator::Detail detail = evaluator_->detail(*p);
          best_prepared = detail.prepared;
          best_result = run_result(r, *p, detail);
        } catch (const UserError&) {  // no point of the search can be evaluated: no best point
        }
      }
    }
  }
  const DesignSpace& space = evaluator_->space();
  py::dict d;
  d["evaluations_csv"] = evaluations_csv(space, r);
  d["pareto_csv"] = pareto_csv(space, r);
  d["search_json"] = search_json(experiment_, space, r, evaluator_->stats(), registry_);
  d["stopped"] = r.stopped;
  d["failure"] = r.failure;
  d["out"] = out;
  d["best"] = py::none();
  if (best_prepared) {
    py::dict b = run_files(*best_prepared, best_result, dir / "best");
    b["genes"] = best_result.best_point.genes;
    d["best"] = b;
  }
  d["interrupt"] = signal.exception();
  return d;
}

void bind_experiment(py::module_& m) {
  py::class_<LoadedExperiment>(m, "_LoadedExperiment")
      .def(py::init<const std::string&, const std::vector<std::string>&>(), py::arg("file"), py::arg("sets"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("has_space", &LoadedExperiment::has_space)
      .def("genes", &LoadedExperiment::genes)
      .def("objectives", &LoadedExperiment::objectives)
      .def("constraints", &LoadedExperiment::constraints)
      .def("evaluate", &LoadedExperiment::evaluate, py::arg("genes"))
      .def("evaluate_many", &LoadedExperiment::evaluate_many, py::arg("points"), py::arg("threads"))
      .def("run", &LoadedExperiment::run, py::arg("out"), py::arg("threads"))
      .def("search", &LoadedExperiment::search, py::arg("out"), py::arg("threads"), py::arg("best"));
}

}  // namespace monet::python
