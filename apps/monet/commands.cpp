#include "commands.hpp"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <set>
#include <algorithm>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>

#include "monet/arch/estimation.hpp"
#include "monet/config/params_toml.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/cost/data_locality.hpp"
#include "monet/experiment/cost_cache.hpp"
#include "monet/experiment/plugin_folders.hpp"
#include "monet/experiment/runner.hpp"
#include "import_stream.hpp"
#include "import_zigzag.hpp"
#include "monet/ir/workload_toml.hpp"
#include "monet/report/cost_study.hpp"
#include "monet/report/inspect_workload.hpp"
#include "monet/system/system.hpp"
#include "monet/report/plots.hpp"
#include "monet/report/report.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"
#include "monet/util/version.hpp"

namespace monet::cli {

namespace fs = std::filesystem;

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

/// Energies and areas of a core and where each comes from (its file or its estimator).
std::string core_numbers_text(const Core& core) {
  std::ostringstream out;
  auto origin = [](ValueOrigin o) { return " (" + to_string(o) + ")"; };
  auto area = [&](const std::optional<double>& a, ValueOrigin o, const std::string& each) {
    return a ? number(*a) + " mm2" + each + origin(o) : std::string("unknown");
  };
  if (core.estimator) {
    out << "  estimator " << core.estimator->name << " at " << number(core.estimator->technology_nm) << " nm\n";
  }
  const OperationalArray& a = core.array;
  out << "  array: " << a.pe_count() << " x " << (a.implementation.empty() ? a.operation : a.implementation) << ", "
      << number(a.unit_energy_pj) << " pJ per op" << origin(a.unit_energy_origin) << ", area "
      << area(a.area_mm2, a.area_origin, "") << "\n";
  for (const MemoryLevel& m : core.memories) {
    out << "  memory " << m.name << ": " << core.memory_instances(m) << " x " << si_bytes(m.size_bits)
        << (m.implementation.empty() ? "" : " " + m.implementation) << ", read " << number(m.read_energy_pj)
        << " pJ per " << m.read_word_bits() << "-bit word" << origin(m.read_energy_origin) << ", write "
        << number(m.write_energy_pj) << " pJ per " << m.write_word_bits() << "-bit word"
        << origin(m.write_energy_origin);
    if (!m.offchip) out << ", area " << area(m.area_mm2, m.area_origin, " each");
    out << "\n";
  }
  if (const auto total = core.area_mm2()) out << "  core area " << number(*total) << " mm2\n";
  return out.str();
}

}  // namespace

namespace {
/// What a run checks of a core's cost model before costing anything: the plugin exists, takes the core's
/// [cost_model_params], and accepts the core (check_core).
void check_cost_model(const Core& core, const Registry& registry) {
  const PluginHandle& model = registry.require(PluginKind::cost_model, core.cost_model, core.cost_model_origin);
  const ParamValues values =
      core.cost_model_params ? core_cost_model_params(core, model)
                             : default_params(model.info.params, core.file + ": cost model '" + core.cost_model + "'");
  registry.create<CostModel>(model, values)->check_core(core);
}
}  // namespace

int validate_command(const std::string& file) {
  // Workloads in other formats (.onnx) go to the frontend that reads them, never to the TOML parser.
  if (fs::path(file).extension() != ".toml") {
    const Registry& registry = Registry::global();
    std::error_code ec;
    if (!fs::exists(file, ec)) throw UserError(SourceLocation{file}, "file not found");
    const PluginHandle* h = registry.frontend_for(file);
    if (!h) {
      throw UserError(SourceLocation{file}, "validate reads TOML files (experiment, accelerator, core, workload) and "
                                            "workloads of the frontends: " + registry.frontend_extensions() +
                                            "; this file is '" + fs::path(file).extension().string() + "'");
    }
    auto frontend = registry.create<WorkloadFrontend>(*h, default_params(h->info.params, file));
    const GraphPtr g = frontend->load(file);
    std::cout << file << ": valid workload '" << g->name() << "' with " << g->operators().size() << " operators\n";
    return 0;
  }
  const TomlDocument doc = TomlDocument::parse_file(file);
  const toml::table& root = doc.root();
  const auto has = [&](const char* k) { return root.contains(k); };
  // A generated workload (a generator frontend: gpt, dlrm) has a [workload] table with `generator` and no [[layers]].
  const auto* workload_table = root.get_as<toml::table>("workload");
  const bool generated = workload_table && workload_table->contains("generator") && !has("experiment") && !has("architecture");
  std::string what;
  std::string details;
  if (has("accelerator")) {
    const AcceleratorPtr acc = apply_estimators(load_accelerator(file), Registry::global());
    std::set<const Core*> checked;
    for (const CoreInstance& c : acc->cores) {
      if (checked.insert(c.core.get()).second) check_cost_model(*c.core, Registry::global());
    }
    what = "accelerator '" + acc->name + "' with " + std::to_string(acc->cores.size()) + " cores";
    if (const auto area = accelerator_area(*acc)) details = "  area " + number(area->total_mm2) + " mm2 (cores)\n";
    if (acc->idle_power_w > 0) details += "  idle power " + number(acc->idle_power_w) + " W (over every schedule's time)\n";
  } else if (has("core")) {
    const CorePtr core = apply_estimator(load_core(file), Registry::global());
    check_cost_model(*core, Registry::global());
    what = "core '" + core->name + "' (" + std::to_string(core->array.pe_count()) + " PEs, " +
           std::to_string(core->memories.size()) + " memory levels)";
    details = core_numbers_text(*core);
  } else if (has("system")) {
    const System s = read_system(file);
    const AcceleratorPtr chip = apply_estimators(load_accelerator(s.chip), Registry::global());
    what = "system '" + s.name + "' of " + std::to_string(s.chips()) + " chips (" + std::to_string(s.nodes) + " nodes of " +
           std::to_string(s.chips_per_node) + "), chip '" + chip->name + "'";
  } else if (has("layers") || has("inputs") || generated) {
    const Registry& registry = Registry::global();
    // toml, or the generator the file names; require() explains a missing toml plugin.
    const PluginHandle* found = registry.frontend_for(file);
    const PluginHandle& h = found ? *found : registry.require(PluginKind::frontend, "toml", SourceLocation{file});
    auto frontend = registry.create<WorkloadFrontend>(h, default_params(h.info.params, file));
    const GraphPtr g = frontend->load(file);
    what = "workload '" + g->name() + "' with " + std::to_string(g->operators().size()) + " operators";
  } else if (has("experiment") || has("workload") || has("architecture")) {
    const Registry& registry = registry_with(experiment_plugin_path(file));
    Experiment e = load_experiment(file, {}, registry);
    const std::string name = e.name;
    PreparedExperiment p = prepare(std::move(e), registry);
    what = "experiment '" + name + "' (" + std::to_string(p.graph->operators().size()) + " operators on " +
           std::to_string(p.experiment.accelerator->cores.size()) + " cores)";
  } else {
    throw UserError(SourceLocation{file}, "cannot tell what this file describes: expected [experiment] or [workload] "
                                          "(an experiment), [accelerator], [core], or [[layers]] or [workload] generator (a workload)");
  }
  std::cout << file << ": valid " << what << "\n" << details;
  return 0;
}

int inspect_command(const InspectOptions& o) {
  const InspectedWorkload inspected = inspect_workload(o, Registry::global());
  if (!o.emit_toml.empty()) write_file_atomically(o.emit_toml, workload_toml(*inspected.graph));
  std::cout << (o.json ? inspected_json(inspected, o) : inspected_text(inspected, o));
  return 0;
}

namespace {

/// The `table` cost model's CSV of the costed layers (one row per distinct loop nest), e.g. to replace the
/// numbers by measurements of a real core.
std::string cost_table_csv(const Graph& graph, const Core& core, const std::vector<const Operator*>& ops,
                           const std::vector<Cost>& costs, const std::string& model) {
  std::vector<std::string> dims;
  for (const Operator* op : ops) {
    for (const LoopDim& d : op->dims) {
      if (std::find(dims.begin(), dims.end(), d.name) == dims.end()) dims.push_back(d.name);
    }
  }
  std::ostringstream out;
  out << "# " << graph.name() << " on core " << core.name << " costed by " << model << " (monet " << kVersion
      << "). Units: cycles, pJ.\n# Loop dims an operator does not have are 1. energy_pj is the total; mac_energy_pj and\n"
      << "# offchip_energy_pj are its parts in the operational array and in off-chip memory.\nkind,type";
  for (const std::string& d : dims) out << "," << d;
  out << ",cycles,energy_pj,mac_energy_pj,offchip_energy_pj\n";
  std::set<std::string> seen;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Operator& op = *ops[i];
    std::ostringstream row;
    row << to_string(op.kind) << "," << op.type;
    for (const std::string& d : dims) {
      const int k = op.dim_index(d);
      row << "," << (k < 0 ? std::int64_t{1} : op.dims[static_cast<std::size_t>(k)].size);
    }
    if (!seen.insert(row.str()).second) continue;
    char buf[160];
    const double cycles = costs[i].exact_cycles > 0 ? costs[i].exact_cycles : static_cast<double>(costs[i].cycles);
    std::snprintf(buf, sizeof buf, ",%.17g,%.17g,%.17g,%.17g\n", cycles, costs[i].energy_pj, costs[i].compute_energy_pj,
                  costs[i].offchip_energy_pj);
    out << row.str() << buf;
  }
  return out.str();
}

}  // namespace

int cost_command(const CostOptions& o) {
  std::unique_ptr<tbb::global_control> threads;
  if (o.threads > 0) {
    threads = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    static_cast<std::size_t>(o.threads));
  }
  const Registry& registry = Registry::global();
  const fs::path file = o.workload;
  std::error_code ec;
  if (!fs::exists(file, ec)) throw UserError(SourceLocation{o.workload}, "file not found");
  const PluginHandle* frontend = registry.frontend_for(file);
  if (!frontend) {
    throw UserError(SourceLocation{o.workload}, "no workload frontend reads '" + file.extension().string() +
                                                    "' files; frontends: " + registry.frontend_extensions());
  }
  GraphPtr graph =
      registry.create<WorkloadFrontend>(*frontend, default_params(frontend->info.params, "frontend"))->load(file);
  if (!o.precision.empty()) {
    const auto p = Precision::preset_named(o.precision);
    if (!p) {
      throw UserError("--precision '" + o.precision + "' is not a preset; presets: " + join(Precision::preset_names()) +
                      did_you_mean(o.precision, Precision::preset_names()));
    }
    graph = apply_precision(*graph, *p);
  }
  Core core = *apply_estimator(load_core(o.core), registry);
  if (!o.mapping.empty()) {
    // A mapping file replaces the core's mapping entries.
    const fs::path mp = o.mapping;
    if (mp.extension() == ".yaml" || mp.extension() == ".yml") {
      core.mappings = parse_mappings(TomlDocument::parse_string(zigzag_mapping_to_toml(mp), mp.string()), core);
    } else {
      core.mappings = parse_mappings(TomlDocument::parse_file(mp), core);
    }
  }
  const std::string model_name = o.model.empty() ? core.cost_model : o.model;
  const PluginHandle& model = registry.require(PluginKind::cost_model, model_name, o.model.empty() ? core.cost_model_origin : SourceLocation{"--model"});
  toml::table params;
  for (const std::string& s : o.sets) apply_override(params, s);
  if (!o.objective.empty() && !params.contains("objective")) params.insert("objective", o.objective);
  if (!o.compat.empty() && !params.contains("compat")) {
    const bool has = std::any_of(model.info.params.begin(), model.info.params.end(), [](const ParamSpec& s) { return s.name == "compat"; });
    if (!has) throw UserError(SourceLocation{"--compat"}, "cost model '" + model_name + "' has no compatibility mode");
    params.insert("compat", o.compat);
  }
  ParamValues values;
  if (params.empty() && core.cost_model_params && model_name == core.cost_model) {
    values = core_cost_model_params(core, model);  // the core's own parameters (a measured core's table)
  } else {
    TableReader reader(params, "<command line>", "cost_model", fs::current_path());
    values = read_params(reader, model.info.params);
    reader.finish();
  }
  const auto cost_model = registry.create<CostModel>(model, values);
  cost_model->check_core(core);
  // ZigZag costs only Conv, Gemm and MatMul nodes of an ONNX model; everything else is free there.
  const bool zigzag_onnx = o.compat == "zigzag" && file.extension() == ".onnx";
  std::vector<const Operator*> ops;
  std::set<std::string> not_run;
  for (const Operator& op : graph->operators()) {
    if (op.is_view()) continue;
    if (zigzag_onnx && !is_mac_kind(op.kind)) continue;
    if (!core.runs(op.kind)) {
      not_run.insert(to_string(op.kind));
      continue;
    }
    ops.push_back(&op);
  }
  if (!not_run.empty()) {
    spdlog::warn("core '{}' does not run {} operators (its op_kinds); they are left out", core.name,
                 join(std::vector<std::string>(not_run.begin(), not_run.end())));
  }
  std::vector<Cost> costs(ops.size());
  std::vector<Residency> residency(ops.size());
  const auto t0 = std::chrono::steady_clock::now();
  if (o.data_locality) {
    std::vector<LocalityLayer> layers(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto ranges = ops[i]->full_ranges();
      layers[i] = LocalityLayer{ops[i], cost_model->footprint_bits(CostQuery{*graph, *ops[i], ranges, core})};
    }
    residency = data_locality(*graph, core, layers);
  }
  // Layers with the same signature (ResNet's repeated blocks) are costed once.
  CostCache cache;
  const std::uint64_t core_fp = core_fingerprint(core);
  const std::uint64_t model_fp = model_fingerprint(model.info, values);
  std::atomic<std::int64_t> evaluated{0};
  tbb::parallel_for(std::size_t{0}, ops.size(), [&](std::size_t i) {
    const auto ranges = ops[i]->full_ranges();
    const CostQuery query{*graph, *ops[i], ranges, core, residency[i]};
    costs[i] = cache.get(cost_key(query, core_fp, model_fp), [&] {
      Cost c = cost_model->evaluate(query);
      evaluated += c.mappings_evaluated;
      return c;
    });
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.emit_table.empty()) write_file_atomically(o.emit_table, cost_table_csv(*graph, core, ops, costs, model_name));
  CostStudy study;
  study.model = model_name;
  study.ops = std::move(ops);
  study.costs = std::move(costs);
  study.residency = std::move(residency);
  study.mappings_evaluated = evaluated.load();
  study.seconds = seconds;
  study.data_locality = o.data_locality;
  study.plugins = {{"frontend:" + frontend->info.name, frontend->info.version}, {"cost_model:" + model_name, model.info.version}};
  if (core.estimator && !core.estimator->version.empty()) {
    study.plugins.emplace_back("estimator:" + core.estimator->name, core.estimator->version);
  }
  std::cout << cost_report(*graph, core, study, o.json);
  return 0;
}

int import_files(const ImportOptions& o);

namespace {
/// Reads back a converted file before it is kept; on failure it is removed, and an error inside it names the
/// input file (the user fixes the input; the converted file, a temporary, never exists for them).
template <class Read>
void read_back(const fs::path& converted, const std::string& input, Read&& read) {
  try {
    read();
  } catch (const UserError& e) {
    std::error_code ec;
    fs::remove(converted, ec);
    if (e.where().file != converted.string()) throw;
    throw UserError(SourceLocation{input}, "converts to an invalid monet file (not written): " + e.message() +
                                               (e.where().line ? " (line " + std::to_string(e.where().line) + " of the conversion)" : ""));
  } catch (...) {
    std::error_code ec;
    fs::remove(converted, ec);
    throw;
  }
}
}  // namespace

int import_command(const ImportOptions& o) {
  try {
    return import_files(o);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's own exceptions (a node of an unexpected shape): still the input's fault.
    const SourceLocation where = e.mark.is_null() ? SourceLocation{o.input}
                                                  : SourceLocation{o.input, static_cast<std::uint32_t>(e.mark.line + 1),
                                                                   static_cast<std::uint32_t>(e.mark.column + 1)};
    throw UserError(where, "unexpected YAML structure: " + e.msg);
  }
}

int import_files(const ImportOptions& o) {
  std::string text;
  if (o.format == "stream-accelerator") {
    const fs::path out = fs::absolute(o.output);
    const fs::path cores = o.cores_dir.empty() ? out.parent_path() / "cores" / out.stem() : fs::absolute(o.cores_dir);
    const StreamAcceleratorImport imp =
        stream_accelerator_to_toml(o.input, out, cores, o.cost_model, LinkEnergies{o.link_energy, o.bus_energy});
    fs::create_directories(cores);
    for (const auto& [path, core_text] : imp.cores) {
      const fs::path check = path.parent_path() / ("." + path.filename().string() + ".check");
      write_file_atomically(check, core_text);
      read_back(check, o.input, [&] { (void)load_core(check); });
      fs::rename(check, path);
      std::cout << "wrote " << path.string() << "\n";
    }
    fs::create_directories(out.parent_path());
    write_file_atomically(out, imp.accelerator);
    read_back(out, o.input, [&] { (void)load_accelerator(out); });
    std::cout << "wrote " << o.output << "\n";
    return 0;
  }
  if (o.format == "stream-mapping") {
    text = stream_mapping_to_toml(o.input, o.fusion);
  } else if (o.format == "zigzag-core") {
    text = zigzag_core_to_toml(o.input, o.mapping.empty() ? std::nullopt : std::optional<fs::path>(o.mapping), o.cost_model);
  } else if (o.format == "zigzag-mapping") {
    text = "# Imported from the ZigZag mapping " + fs::path(o.input).filename().string() +
           "; use with: monet cost WORKLOAD --core CORE.toml --mapping this file\n" + zigzag_mapping_to_toml(o.input);
  } else {
    text = zigzag_workload_to_toml(o.input);
  }
  // Check what was written reads back as a valid monet file before keeping it.
  const fs::path out = fs::absolute(o.output);
  const fs::path check = out.parent_path() / ("." + out.filename().string() + ".check");
  fs::create_directories(out.parent_path());
  write_file_atomically(check, text);
  read_back(check, o.input, [&] {
    if (o.format == "zigzag-core") {
      (void)load_core(check);
    } else if (o.format == "zigzag-mapping" || o.format == "stream-mapping") {
      (void)TomlDocument::parse_file(check);  // checked against a core / in an experiment when used
    } else {
      const Registry& registry = Registry::global();
      const PluginHandle& h = registry.require(PluginKind::frontend, "toml", SourceLocation{o.output});
      (void)registry.create<WorkloadFrontend>(h, default_params(h.info.params, "toml"))->load(check);
    }
  });
  fs::rename(check, out);
  std::cout << "wrote " << o.output << "\n";
  return 0;
}

namespace {

std::string describe_default(const ParamSpec& s) {
  if (s.required()) return "required";
  return "default " + to_string(*s.default_value);
}

void print_plugin(const PluginHandle& p) {
  const PluginInfo& i = p.info;
  std::cout << i.name << " (" << to_string(i.kind) << " plugin, version " << i.version << ")\n"
            << "  " << i.summary << "\n"
            << "  library: " << p.library.string() << "\n";
  if (!i.file_extensions.empty()) std::cout << "  reads: " << join(i.file_extensions) << "\n";
  if (!i.description.empty()) std::cout << "\n  " << i.description << "\n";
  std::cout << "\n  parameters";
  if (i.params.empty()) {
    std::cout << ": none\n";
    return;
  }
  std::cout << ":\n";
  for (const ParamSpec& s : i.params) {
    std::cout << "    " << s.name << " (" << to_string(s.type);
    if (!s.unit.empty()) std::cout << ", " << s.unit;
    std::cout << "; " << describe_default(s);
    if (!s.bounds.describe().empty()) std::cout << "; " << s.bounds.describe();
    if (!s.choices.empty()) std::cout << "; one of " << join(s.choices, ", ", true);
    std::cout << ")\n      " << s.doc << "\n";
  }
}

}  // namespace

int plugins_command(const PluginsOptions& o) {
  const Registry& registry = Registry::global();
  std::optional<PluginKind> kind;
  if (!o.kind.empty()) {
    std::vector<std::string> kinds;
    for (PluginKind k : all_plugin_kinds()) {
      kinds.push_back(to_string(k));
      if (to_string(k) == o.kind) kind = k;
    }
    if (!kind) throw UserError("--kind '" + o.kind + "' is not a plugin kind" + did_you_mean(o.kind, kinds) + "; kinds: " + join(kinds));
  }
  if (!o.describe.empty()) {
    std::vector<std::string> all;
    bool found = false;
    for (const PluginHandle& p : registry.plugins()) {
      all.push_back(p.info.name);
      if (p.info.name == o.describe && (!kind || p.info.kind == *kind)) {
        if (found) std::cout << "\n";
        print_plugin(p);
        found = true;
      }
    }
    if (!found) throw UserError("no plugin named '" + o.describe + "'" + did_you_mean(o.describe, all) + "; plugins: " + join(all));
    return 0;
  }
  for (PluginKind k : all_plugin_kinds()) {
    if (kind && k != *kind) continue;
    std::cout << to_string(k) << ":\n";
    bool any = false;
    for (const PluginHandle& p : registry.plugins()) {
      if (p.info.kind != k) continue;
      any = true;
      std::cout << "  " << p.info.name << " " << p.info.version << " — " << p.info.summary << "\n";
      for (const ParamSpec& s : p.info.params) {
        std::cout << "      " << s.name << " (" << to_string(s.type) << (s.unit.empty() ? "" : ", " + s.unit) << "; "
                  << describe_default(s) << ")\n";
      }
    }
    if (!any) std::cout << "  (none)\n";
  }
  for (const PluginLoadFailure& f : registry.failures()) {
    std::cout << "not loaded: " << f.library.string() << ": " << f.reason << "\n";
  }
  std::cout << "search path: ";
  std::vector<std::string> dirs;
  for (const auto& d : registry.search_path()) dirs.push_back(d.string());
  std::cout << join(dirs, ":") << "\n";
  return 0;
}

}  // namespace monet::cli
