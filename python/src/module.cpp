// monet's Python extension module, _monet: the kernel library called in-process (no CLI underneath). The
// package python/monet/ wraps it with the documented API (monet.run, monet.Experiment, monet.inspect,
// monet.plugins); this file holds the functions that are not an experiment's, and the error mapping.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>

#include <memory>

#include "experiment_binding.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/report/inspect_workload.hpp"
#include "monet/util/error.hpp"
#include "monet/util/version.hpp"

namespace py = pybind11;

namespace {

py::list plugins() {
  const monet::Registry& registry = monet::Registry::global();
  py::list out;
  for (const monet::PluginHandle& p : registry.plugins()) {
    py::list params;
    for (const monet::ParamSpec& s : p.info.params) {
      py::dict d;
      d["name"] = s.name;
      d["type"] = monet::to_string(s.type);
      d["unit"] = s.unit;
      d["required"] = s.required();
      d["default"] = s.required() ? py::object(py::none()) : py::object(py::str(monet::to_string(*s.default_value)));
      d["bounds"] = s.bounds.describe();
      d["choices"] = s.choices;
      d["doc"] = s.doc;
      params.append(d);
    }
    py::dict d;
    d["kind"] = monet::to_string(p.info.kind);
    d["name"] = p.info.name;
    d["version"] = p.info.version;
    d["summary"] = p.info.summary;
    d["description"] = p.info.description;
    d["library"] = p.library.string();
    d["file_extensions"] = p.info.file_extensions;
    d["parameters"] = params;
    out.append(d);
  }
  return out;
}

std::string inspect(const monet::InspectRequest& request) {
  py::gil_scoped_release release;
  const monet::InspectedWorkload inspected = monet::inspect_workload(request, monet::Registry::global());
  return monet::inspected_json(inspected, request);
}

}  // namespace

PYBIND11_MODULE(_monet, m) {
  m.doc() = "monet's kernel, in-process; use the monet package, which documents and wraps it";
  // Messages the kernel logs (warnings: a plugin library skipped, a front point not kept) go to stderr, as the CLI's.
  if (!spdlog::get("monet")) {
    auto logger = spdlog::stderr_color_mt("monet");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("[%l] %v");
    spdlog::set_level(spdlog::level::warn);
  }

  static py::exception<monet::UserError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const monet::UserError& e) {
      PyErr_SetString(input_error.ptr(), e.what());  // "file:line:col: error: message", as the CLI prints it
    } catch (const monet::InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.attr("version") = std::string(monet::kVersion);
  m.def("git_commit", [] { return monet::git_commit(); });
  m.def("set_log_level", [](const std::string& level) {
    const auto l = spdlog::level::from_str(level);
    if (l == spdlog::level::off && level != "off") {
      throw monet::UserError(monet::SourceLocation{"log level"},
                             "'" + level + "' is not one of trace, debug, info, warn, error, off");
    }
    spdlog::set_level(l);
  });
  // A process-wide cap on the kernel's worker threads (TBB applies the smallest of the caps in force, so a call's
  // own `threads` can lower it, not raise it); 0 lifts it.
  m.def("set_threads", [](int threads) {
    static std::unique_ptr<tbb::global_control> cap;
    if (threads < 0) throw monet::UserError(monet::SourceLocation{"threads"}, "expected a number >= 0, got " + std::to_string(threads));
    cap.reset();
    if (threads > 0) {
      cap = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  static_cast<std::size_t>(threads));
    }
  });
  m.def("plugins", &plugins);
  m.def("plugin_search_path", [] {
    std::vector<std::string> out;
    for (const auto& d : monet::Registry::global().search_path()) out.push_back(d.string());
    return out;
  });

  py::class_<monet::InspectRequest>(m, "_InspectRequest")
      .def(py::init<>())
      .def_readwrite("workload", &monet::InspectRequest::workload)
      .def_readwrite("batch", &monet::InspectRequest::batch)
      .def_readwrite("sets", &monet::InspectRequest::sets)
      .def_readwrite("plugin", &monet::InspectRequest::plugin)
      .def_readwrite("training", &monet::InspectRequest::training)
      .def_readwrite("optimizer", &monet::InspectRequest::optimizer)
      .def_readwrite("loss", &monet::InspectRequest::loss)
      .def_readwrite("precision", &monet::InspectRequest::precision)
      .def_readwrite("micro_batches", &monet::InspectRequest::micro_batches)
      .def_readwrite("checkpoint", &monet::InspectRequest::checkpoint)
      .def_readwrite("offload", &monet::InspectRequest::offload)
      .def_readwrite("checkpoint_semantics", &monet::InspectRequest::checkpoint_semantics)
      .def_readwrite("checkpoint_solver", &monet::InspectRequest::checkpoint_solver);
  m.def("inspect_json", &inspect, py::arg("request"));

  monet::python::bind_experiment(m);
}
