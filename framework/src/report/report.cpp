#include "monet/report/report.hpp"

#include "monet/system/parallel_step.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "json_parts.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/report/inspect.hpp"
#include "monet/report/metrics.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/offload.hpp"
#include "monet/util/strings.hpp"
#include "monet/util/version.hpp"

namespace monet {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

json detail::provenance_json(const Experiment& e) {
  json plugins = json::object();
  auto add = [&](const PluginChoice& c) {
    plugins[to_string(c.info().kind) + ":" + c.name()] = c.info().version;
  };
  add(e.frontend);
  if (e.backward) add(*e.backward);
  if (e.optimizer) add(*e.optimizer);
  for (const auto& [name, c] : e.cost_models) add(c);
  add(e.fusion);
  add(e.search);
  if (e.quality) add(*e.quality);
  for (const CoreInstance& c : e.accelerator->cores) {
    if (c.core->estimator && !c.core->estimator->version.empty()) plugins["estimator:" + c.core->estimator->name] = c.core->estimator->version;
  }
  return json{{"monet_version", kVersion}, {"git_commit", git_commit()}, {"seed", e.seed}, {"plugins", plugins}};
}

json detail::plugins_found_json(const Registry& registry) {
  json found = json::object();
  for (const PluginHandle& h : registry.plugins()) found[to_string(h.info.kind) + ":" + h.info.name] = h.info.version;
  return found;
}

namespace {
json provenance(const PreparedExperiment& p) { return detail::provenance_json(p.experiment); }
}  // namespace

std::string results_json(const PreparedExperiment& p, const RunResult& r) {
  const Experiment& e = p.experiment;
  const Graph& g = *p.graph;
  const Accelerator& acc = *e.accelerator;
  const ScheduleSummary& s = r.best.summary;
  const CNGraph& cns = p.evaluator->cns();

  json j;
  j["schema"] = "monet.results/1";
  j["experiment"] = e.name;
  j["seed"] = e.seed;
  j["latency_cycles"] = s.latency_cycles;
  if (acc.frequency_hz > 0) j["latency_s"] = static_cast<double>(s.latency_cycles) / acc.frequency_hz;
  j["energy_pj"] = s.energy_pj();
  j["edp_pj_cycles"] = s.edp();
  // The [quality] plugin's metrics (accuracy, ...), each under its key as an objective names it.
  if (e.quality) {
    json units = json::object();
    for (const Metric& m : r.quality) {
      j[m.key] = m.value;
      units[m.key] = m.unit;
    }
    j["quality"] = json{{"plugin", e.quality->name()}, {"units", units}};
  }
  // The model's MACs over every PE's slots of the step (recomputation left out), and every executed MAC; on a
  // system, the system's (docs/datacenter.md).
  const Utilisation busy = s.parallel ? Utilisation{s.parallel->mfu, s.parallel->hfu} : utilisation(p, s);
  j["mfu"] = busy.mfu;
  j["hfu"] = busy.hfu;
  if (s.parallel) {
    // The system's step; the fields above and below are one rank's whole-depth step on one chip.
    const ParallelStep& ps = *s.parallel;
    j["step_time_s"] = ps.step_time_s;
    j["model_tflops_per_chip"] = ps.model_tflops_per_chip;
    j["hardware_tflops_per_chip"] = ps.hardware_tflops_per_chip;
    const Parallelism& par = e.parallelism;
    j["system"] = json{
        {"name", e.system->name},
        {"file", e.system->file.string()},
        {"chips", ps.chips},
        {"chips_in_system", e.system->chips()},
        {"tensor", par.tensor},
        {"pipeline", par.pipeline},
        {"data", par.data},
        {"context", par.context},
        {"virtual_pipeline", par.virtual_pipeline},
        {"zero_stage", par.zero_stage},
        {"num_distributed_optimizer_instances", par.optimizer_instances},
        {"global_batch", ps.global_batch},
        {"micro_batch", ps.micro_batch},
        {"micro_batches", ps.micro_batches},
        {"peak_tflops_per_chip", ps.peak_tflops_per_chip},
        {"model_flops", ps.model_flops},
        {"hardware_flops", ps.hardware_flops},
        {"time_s", json{{"step", ps.step_time_s},
                        {"compute", ps.compute_s},
                        {"recompute_in_compute", ps.recompute_s},
                        {"tensor_parallel_communication", ps.tensor_comm_s},
                        {"context_parallel_communication", ps.context_comm_s},
                        {"sharded_parameters_communication", ps.sharded_comm_s},
                        {"pipeline_communication", ps.pipeline_comm_s},
                        {"pipeline_bubble", ps.bubble_s},
                        {"data_parallel_communication", ps.data_comm_s},
                        {"optimizer", ps.optimizer_s},
                        {"pipeline_send_per_micro_batch", ps.pipeline_send_s}}},
        // Collectives' time beside computation (not part of the step's split above).
        {"hidden_communication_s", json{{"tensor_parallel", ps.tensor_comm_hidden_s},
                                        {"context_parallel", ps.context_comm_hidden_s},
                                        {"data_parallel", ps.data_comm_hidden_s},
                                        {"sharded_parameters", ps.sharded_comm_hidden_s}}},
        {"energy_j", json{{"step", ps.energy_j},
                          {"compute", ps.compute_energy_j},
                          {"communication", ps.communication_energy_j},
                          {"idle", ps.idle_energy_j},
                          {"per_sample", ps.energy_j / static_cast<double>(ps.global_batch)}}},
        {"memory_per_chip_bytes", json{{"total", ps.memory_bytes},
                                       {"weights", ps.weight_bytes},
                                       {"gradients", ps.gradient_bytes},
                                       {"optimizer_states", ps.optimizer_bytes},
                                       {"activations", ps.activation_bytes},
                                       {"gathered_weights", ps.gathered_weight_bytes},
                                       {"capacity", ps.memory_capacity_bytes},
                                       {"stage", ps.memory_stage}}}};
  }
  j["energy_breakdown"] = json{{"mac_energy_pj", s.energy.mac_pj},
                               {"onchip_memory_energy_pj", s.energy.onchip_memory_pj},
                               {"offchip_energy_pj", s.energy.offchip_pj},
                               {"link_energy_pj", s.energy.link_pj},
                               {"spill_energy_pj", s.energy.spill_pj},
                               {"idle_energy_pj", s.energy.idle_pj}};
  j["offchip_read_bytes"] = s.offchip_read_bits / 8;
  j["offchip_write_bytes"] = s.offchip_write_bits / 8;
  j["spilled_bytes"] = s.spilled_bits / 8;
  j["peak_offchip_bytes"] = (s.peak_offchip_bits + 7) / 8;
  j["over_capacity"] = s.over_capacity;
  j["offchip_capacity_bytes"] = acc.offchip.size_bits / 8;
  j["offchip_over_capacity"] = s.offchip_over_capacity;
  j["feasible"] = s.capacity_violation == 0;
  j["capacity_violation"] = s.capacity_violation;
  if (!s.capacity_reason.empty()) j["infeasible_reason"] = s.capacity_reason;

  std::int64_t param_bytes = 0;
  for (const Tensor& t : g.tensors()) {
    if (t.role == TensorRole::weight && t.producer == kNone) param_bytes += t.bytes();
  }
  j["workload"] = json{{"name", g.name()},
                       {"file", e.workload_file.string()},
                       {"mode", e.training_mode},
                       {"operators", g.operators().size()},
                       {"macs", g.total_macs()},
                       {"vector_ops", g.total_vector_ops()},
                       {"parameters", g.parameter_count()},
                       {"parameter_bytes", param_bytes}};
  if (const auto passthrough = workload_totals(g).passthrough; !passthrough.empty()) {
    j["workload"]["passthrough_operators"] = passthrough;  // not modelled: zero-cost views on request
  }

  const std::optional<AcceleratorArea> area = accelerator_area(acc);  // null: a core's area is unknown
  j["area_mm2"] = area ? json(area->total_mm2) : json(nullptr);
  json cores = json::array();
  for (const CoreInstance& c : acc.cores) {
    const auto id = static_cast<std::size_t>(c.id);
    cores.push_back(json{{"name", c.name},
                         {"type", c.core->name},
                         {"cost_model", e.core_cost_model[id].substr(0, e.core_cost_model[id].find('@'))},
                         {"pe_count", c.core->array.pe_count()},
                         {"capacity_bytes", c.core->resident_capacity_bits() / 8},
                         {"peak_memory_bytes", (s.peak_memory_bits[id] + 7) / 8},
                         {"area_mm2", area ? json(area->core_mm2[id]) : json(nullptr)}});
    if (id < r.best.peak_composition.size()) {
      const PeakComposition& pc = r.best.peak_composition[id];
      cores.back()["peak_composition"] = json{{"time_cycle", pc.time},
                                              {"activations_bytes", (pc.activations + 7) / 8},
                                              {"recomputed_activations_bytes", (pc.recomputed + 7) / 8},
                                              {"weights_bytes", (pc.weights + 7) / 8},
                                              {"gradients_bytes", (pc.gradients + 7) / 8},
                                              {"optimizer_states_bytes", (pc.optimizer_states + 7) / 8},
                                              {"streaming_bytes", (pc.streaming + 7) / 8},
                                              {"other_bytes", (pc.other + 7) / 8}};
    }
  }
  j["architecture"] = json{{"name", acc.name}, {"file", e.architecture_file.string()}};
  if (acc.frequency_hz > 0) j["architecture"]["frequency_hz"] = acc.frequency_hz;
  j["architecture"]["cores"] = cores;

  // Per-CN and per-transfer data are in schedule.csv and transfers.csv: results.json stays a summary.
  struct CauseTotals {
    std::int64_t count = 0;
    std::int64_t bits = 0;
    double energy_pj = 0;
  };
  std::map<TransferCause, CauseTotals> by_cause;
  for (const Transfer& t : r.best.transfers) {
    CauseTotals& c = by_cause[t.cause];
    ++c.count;
    c.bits += t.bits;
    c.energy_pj += t.energy_pj;
  }
  json causes = json::object();
  for (const auto& [cause, c] : by_cause) {
    causes[to_string(cause)] = json{{"count", c.count}, {"bits", c.bits}, {"energy_pj", c.energy_pj}};
  }
  j["computation_node_count"] = cns.nodes.size();
  j["transfer_count"] = r.best.transfers.size();
  j["transfers_by_cause"] = causes;
  if (e.training_mode == "training") {
    // The optimal policy's regions come from its solve on the uncheckpointed step (re-solving on the rewritten
    // graph would be wrong): prepare() kept them, with how they were found.
    const OptimalCheckpoint* optimal = p.optimal_checkpoint.get();
    j["training"] = detail::training_json(g, training_summary(g),
                                          optimal ? optimal->regions : checkpoint_regions(g, e.training.checkpoint),
                                          optimal ? &optimal->solve : nullptr);
    // What recomputation costs on this accelerator: its computation nodes' busy cycles (summed over cores, so
    // not the step's latency increase, which depends on overlap) and their energy.
    std::int64_t recompute_cycles = 0;
    double recompute_energy = 0;
    for (const ScheduledNode& n : r.best.nodes) {
      if (g.op(cns.nodes[static_cast<std::size_t>(n.cn)].op).phase != Phase::recompute) continue;
      recompute_cycles += n.end - n.start;
      recompute_energy += n.cost.energy_pj;
    }
    j["training"]["recompute_busy_cycles"] = recompute_cycles;
    j["training"]["recompute_energy_pj"] = recompute_energy;
    if (e.offload.active()) {
      // Offloading: what the policy selects (the saved activations of the modules), what the scheduler moved out
      // and back (with the energy of those transfers: core memory, link, off-chip memory), and how long CNs
      // waited for data coming back.
      const std::vector<bool>& mask = p.evaluator->offloaded();
      std::int64_t saved = 0, out_bits = 0, back_bits = 0;
      double out_pj = 0, back_pj = 0;
      std::vector<TensorId> tensors;
      for (std::size_t t = 0; t < mask.size(); ++t) {
        if (!mask[t]) continue;
        tensors.push_back(static_cast<TensorId>(t));
        saved += g.tensor(static_cast<TensorId>(t)).bits();
      }
      for (const Transfer& t : r.best.transfers) {
        if (t.cause == TransferCause::offload) {
          out_bits += t.bits;
          out_pj += t.energy_pj;
        } else if (t.cause == TransferCause::prefetch) {
          back_bits += t.bits;
          back_pj += t.energy_pj;
        }
      }
      j["training"]["offload"] = json{{"modules", e.offload.modules},
                                      {"tensors", tensors.size()},
                                      {"saved_bytes", (saved + 7) / 8},
                                      {"peak_activation_bytes", offloaded_peak_activation_bytes(g, tensors)},
                                      {"offloaded_bytes", (s.offloaded_bits + 7) / 8},
                                      {"written_bytes", (out_bits + 7) / 8},
                                      {"fetched_back_bytes", (back_bits + 7) / 8},
                                      {"offload_energy_pj", out_pj},
                                      {"fetch_back_energy_pj", back_pj},
                                      {"energy_pj", out_pj + back_pj},
                                      {"stall_cycles", s.offload_stall_cycles}};
    }
  }
  j["search"] = json{{"plugin", e.search.name()}, {"evaluations", r.evaluation_count}, {"reported_points", r.evaluations.size()}};
  j["provenance"] = provenance(p);
  return j.dump(1) + "\n";
}

// -------------------------------------------------------------------------------------------- resolved

namespace {

std::string toml_string(const std::string& s) { return to_string(ParamValue(s)); }

std::string relative_to(const fs::path& file, const fs::path& dir) {
  const fs::path abs_file = fs::absolute(file).lexically_normal();
  const fs::path abs_dir = fs::absolute(dir).lexically_normal();
  const fs::path rel = abs_file.lexically_relative(abs_dir);
  // Relative only when the file and the folder share more than the root (a copied project stays valid).
  const auto first = [](const fs::path& p) { return std::next(p.begin()) == p.end() ? fs::path() : *std::next(p.begin()); };
  if (rel.empty() || first(abs_file) != first(abs_dir)) return abs_file.string();
  return rel.generic_string();
}

void write_params(std::ostringstream& out, const PluginChoice& c, const fs::path& dir) {
  for (const ParamSpec& spec : c.info().params) {
    if (!c.params.has(spec.name)) continue;
    const ParamValue& v = c.params.get(spec.name);
    out << spec.name << " = ";
    if (spec.type == ParamType::path) {
      out << toml_string(relative_to(std::get<std::string>(v), dir));
    } else {
      out << to_string(v);
    }
    if (!spec.unit.empty()) out << "  # " << spec.unit;
    out << "\n";
  }
}

std::string string_list(const std::vector<std::string>& v) { return to_string(ParamValue(v)); }

}  // namespace

std::string resolved_toml(const PreparedExperiment& p, const fs::path& output_dir) {
  const Experiment& e = p.experiment;
  const fs::path dir = fs::absolute(output_dir);
  std::ostringstream out;
  out << "# Resolved configuration written by monet " << kVersion << ": every default filled in.\n"
      << "# `monet run` on this file reproduces results.json. Paths are relative to this folder.\n\n";
  out << "[experiment]\nname = " << toml_string(e.name) << "\nseed = " << e.seed << "\n";
  if (!e.description.empty()) out << "description = " << toml_string(e.description) << "\n";
  if (!e.plugin_path.empty()) {
    std::vector<std::string> folders;
    for (const fs::path& f : e.plugin_path) folders.push_back(relative_to(f, dir));
    out << "\n[plugins]\npath = " << string_list(folders) << "\n";
  }

  out << "\n[workload]\nplugin = " << toml_string(e.frontend.name()) << "\nfile = "
      << toml_string(relative_to(e.workload_file, dir)) << "\n";
  write_params(out, e.frontend, dir);
  if (!e.workload_set.empty()) {
    out << "\n[workload.set]\n";
    for (const auto& [path, value] : e.workload_set) out << toml_string(path) << " = " << value << "\n";
  }

  out << "\n[training]\nmode = " << toml_string(e.training_mode) << "\nloss = " << toml_string(e.training.loss)
      << "\nmicro_batches = " << e.training.micro_batches << "\n";
  if (e.backward) {
    out << "\n[training.backward]\nplugin = " << toml_string(e.backward->name()) << "\n";
    write_params(out, *e.backward, dir);
  }
  if (e.optimizer) {
    out << "\n[training.optimizer]\nplugin = " << toml_string(e.optimizer->name()) << "\n";
    write_params(out, *e.optimizer, dir);
  }
  // A policy that came from [parallelism] recompute is written there (both at once would be an error).
  out << "\n[training.checkpoint]\n"
      << (e.parallelism.recompute != "none"
              ? "semantics = \"" + std::string(to_string(e.training.checkpoint.semantics)) + "\"\n"  // of the recompute
              : checkpoint_toml(e.training.checkpoint));
  if (e.training.checkpoint.kind == CheckpointPolicy::Kind::optimal && (e.checkpoint_solver.name == "segments" || e.checkpoint_solver.name == "rotor")) {
    out << "solver = \"" << e.checkpoint_solver.name << "\"\n";
  }
  if (e.training.checkpoint.kind == CheckpointPolicy::Kind::optimal && e.checkpoint_solver.name == "milp") {
    out << "solver = \"milp\"\ntime_limit_s = " << format_number(e.checkpoint_solver.time_limit_s) << "\n";
    if (e.checkpoint_solver.node_limit >= 0) out << "node_limit = " << e.checkpoint_solver.node_limit << "\n";
  }
  if (e.offload.active()) out << "offload = " << string_list(e.offload.modules) << "\n";
  if (e.parallelism.given) {
    out << "\n[parallelism]\n" << parallelism_toml(e.parallelism);
    if (e.parallelism_model) {
      out << "plugin = " << toml_string(e.parallelism_model->name()) << "\n";
      write_params(out, *e.parallelism_model, dir);
    }
  }

  if (e.precision) out << "\n[precision]\n" << precision_toml(*e.precision);

  if (e.system) {
    out << "\n[architecture]\nsystem = " << toml_string(relative_to(e.system->file, dir)) << "  # chip: "
        << relative_to(e.architecture_file, dir) << "\n";
  } else {
    out << "\n[architecture]\nfile = " << toml_string(relative_to(e.architecture_file, dir)) << "\n";
  }
  if (!e.architecture_unset.empty()) out << "unset = " << string_list(e.architecture_unset) << "\n";
  if (!e.system_set.empty()) {
    out << "\n[architecture.system_set]\n";
    for (const SystemChange& c : e.system_set) out << toml_string(c.path) << " = " << c.value << "\n";
  }
  if (!e.architecture_set.empty()) {
    out << "\n[architecture.set]\n";
    for (const auto& [path, value] : e.architecture_set) out << toml_string(path) << " = " << value << "\n";
  }

  out << "\n[cost_model]\n";
  // Every parameter of the models cores use as they are; for a model used only with cores' own
  // [cost_model_params] (read again from the core files), the keys the experiment sets.
  std::set<std::string> names;
  for (const auto& [name, c] : e.cost_model_settings) names.insert(name);
  for (const auto& [name, c] : e.cost_models) {
    if (name.find('@') == std::string::npos) names.insert(name);
  }
  auto params_of = [&](const std::string& name) -> const PluginChoice& {
    auto it = e.cost_models.find(name);
    return it != e.cost_models.end() ? it->second : e.cost_model_settings.at(name);
  };
  std::string override_name;
  if (e.cost_model_overridden) {
    override_name = e.core_cost_model.front().substr(0, e.core_cost_model.front().find('@'));
    out << "plugin = " << toml_string(override_name) << "\n";
    write_params(out, params_of(override_name), dir);
  }
  for (const std::string& name : names) {
    if (name == override_name) continue;
    out << "\n[cost_model." << name << "]\n";
    write_params(out, params_of(name), dir);
  }

  out << "\n[allocation]\n";
  if (e.allocation.default_rule) out << "default = " << string_list(e.allocation.default_rule->cores) << "\n";
  if (!e.allocation.by_kind.empty()) {
    out << "\n[allocation.kind]\n";
    for (const AllocationRule& r : e.allocation.by_kind) out << r.key << " = " << string_list(r.cores) << "\n";
  }
  if (!e.allocation.by_type.empty()) {
    out << "\n[allocation.type]\n";
    for (const AllocationRule& r : e.allocation.by_type) out << toml_string(r.key) << " = " << string_list(r.cores) << "\n";
  }
  if (!e.allocation.by_operator.empty()) {
    out << "\n[allocation.operator]\n";
    for (const AllocationRule& r : e.allocation.by_operator) {
      out << toml_string(r.key) << " = " << string_list(r.cores) << "\n";
    }
  }
  if (!e.allocation.by_group.empty()) {
    out << "\n[allocation.group]\n";
    for (const AllocationRule& r : e.allocation.by_group) out << toml_string(r.key) << " = " << toml_string(r.cores.front()) << "\n";
  }

  out << "\n[fusion]\nplugin = " << toml_string(e.fusion.name()) << "\n";
  write_params(out, e.fusion, dir);
  out << "\n[schedule]\noffchip_bandwidth = " << (e.schedule.peak_offchip_bandwidth ? "\"peak\"" : "\"average\"")
      << "\nlayer_barrier = " << (e.schedule.layer_barrier ? "true" : "false")
      << "\ntransfers = " << (e.schedule.whole_tile_transfers ? "\"whole_tile\"" : "\"exact\"")
      << "\nsources = " << (e.schedule.sources_from_offchip ? "\"offchip\"" : "\"nearest\"")
      << "\npadded_tiles = " << (e.schedule.padded_tiles ? "true" : "false")
      << "\nallow_over_capacity = " << (e.allow_over_capacity ? "true" : "false") << "\n";

  out << "\n[search]\nplugin = " << toml_string(e.search.name()) << "\n";
  write_params(out, e.search, dir);
  if (e.quality) {
    out << "\n[quality]\nplugin = " << toml_string(e.quality->name()) << "\n";
    write_params(out, *e.quality, dir);
  }
  std::vector<std::string> artifacts{"summary"};
  if (e.artifacts.csv) artifacts.emplace_back("csv");
  if (e.artifacts.trace) artifacts.emplace_back("trace");
  if (e.artifacts.plots) artifacts.emplace_back("plots");
  if (e.artifacts.report) artifacts.emplace_back("report");
  out << "\n[output]\ndir = " << toml_string(e.output_dir.string()) << "\noverwrite = " << (e.overwrite ? "true" : "false")
      << "\nartifacts = " << string_list(artifacts) << "\nfront_points = " << e.artifacts.front_points << "\n";

  const json prov = provenance(p);
  out << "\n# For the record; not read back.\n[provenance]\nmonet_version = " << toml_string(kVersion)
      << "\ngit_commit = " << toml_string(git_commit()) << "\nseed = " << e.seed
      << "\nsource = " << toml_string(fs::absolute(e.file).lexically_normal().string())
      << "\noverrides = " << string_list(e.overrides) << "\nunsets = " << string_list(e.unsets)
      << "\n\n[provenance.plugins]\n";
  for (const auto& [key, version] : prov["plugins"].items()) {
    out << toml_string(key) << " = " << toml_string(version.get<std::string>()) << "\n";
  }
  return out.str();
}

// --------------------------------------------------------------------------------------------- summary

namespace {
std::string seconds(double v) {
  std::ostringstream s;
  s.precision(4);
  if (v < 1e-6) {
    s << v * 1e9 << " ns";
  } else if (v < 1e-3) {
    s << v * 1e6 << " us";
  } else if (v < 1) {
    s << v * 1e3 << " ms";
  } else {
    s << v << " s";
  }
  return s.str();
}
}  // namespace

std::string summary_text(const PreparedExperiment& p, const RunResult& r, const fs::path& output_dir) {
  const Experiment& e = p.experiment;
  const Graph& g = *p.graph;
  const Accelerator& acc = *e.accelerator;
  const ScheduleSummary& s = r.best.summary;
  std::ostringstream out;
  out << "experiment    " << e.name << " (seed " << e.seed << ", " << e.training_mode << ")\n";
  out << "workload      " << g.name() << ": " << g.operators().size() << " operators, "
      << with_thousands(g.total_macs()) << " MACs, " << with_thousands(g.parameter_count()) << " parameters\n";
  std::vector<std::string> cores;
  for (const CoreInstance& c : acc.cores) cores.push_back(c.name + " (" + c.core->name + ")");
  out << "architecture  " << acc.name << ": " << join(cores) << ", off-chip " << acc.offchip.name << "\n";
  if (s.parallel) {
    // A system of chips: its step first; the lines after it are one rank's whole-depth step on one chip.
    const ParallelStep& ps = *s.parallel;
    std::ostringstream tf;
    tf.precision(4);
    tf << ps.model_tflops_per_chip << " model TFLOP/s per chip (MFU " << ps.mfu * 100 << " %)";
    out << "system        " << with_thousands(ps.chips) << " chips: step " << seconds(ps.step_time_s) << ", " << tf.str()
        << ", " << si(ps.energy_j, "J") << " per step, most loaded chip " << si(static_cast<double>(ps.memory_bytes), "B")
        << " of " << si(static_cast<double>(ps.memory_capacity_bytes), "B") << "\n";
    out << "one rank      the whole depth of one rank's step on one chip (not a chip of the system):\n";
  }
  out << "latency       " << with_thousands(s.latency_cycles) << " cycles";
  if (acc.frequency_hz > 0) {
    out << " = " << seconds(static_cast<double>(s.latency_cycles) / acc.frequency_hz) << " at "
        << si(acc.frequency_hz, "Hz");
  }
  out << "\n";
  out << "energy        " << si(s.energy_pj() * 1e-12, "J") << " (" << s.energy_pj() << " pJ): MAC "
      << si(s.energy.mac_pj * 1e-12, "J") << ", on-chip memory " << si(s.energy.onchip_memory_pj * 1e-12, "J")
      << ", off-chip " << si(s.energy.offchip_pj * 1e-12, "J") << ", links " << si(s.energy.link_pj * 1e-12, "J");
  if (s.energy.spill_pj > 0) out << ", spills " << si(s.energy.spill_pj * 1e-12, "J");
  if (s.energy.idle_pj > 0) {
    out << ", idle " << si(s.energy.idle_pj * 1e-12, "J") << " (" << si(acc.idle_power_w, "W") << ")";
  }
  out << "\n";
  out << "peak memory   on chip: ";
  for (std::size_t c = 0; c < acc.cores.size(); ++c) {
    if (c) out << ", ";
    out << acc.cores[c].name << " " << si(static_cast<double>((s.peak_memory_bits[c] + 7) / 8), "B");
  }
  out << "; off chip: " << acc.offchip.name << " " << si(static_cast<double>((s.peak_offchip_bits + 7) / 8), "B");
  // A system's capacity check is the most loaded chip's (its line above), not the whole-depth rank graph's.
  if (!s.parallel) out << " of " << si(static_cast<double>(acc.offchip.size_bits / 8), "B");
  if (s.spilled_bits > 0) out << " (" << si(static_cast<double>(s.spilled_bits / 8), "B") << " spilled)";
  out << "\n";
  if (e.training_mode == "training") {
    // What the step keeps in memory, by cause: what a training study asks first (results.json: memory).
    const std::shared_ptr<const TrainingMemory> m = p.training_memory_shared();
    const auto b = [](std::int64_t bytes) { return si(static_cast<double>(bytes), "B"); };
    out << "step memory   parameters " << b(m->parameter_bytes) << ", saved activations " << b(m->saved_activation_bytes)
        << ", gradients " << b(m->gradient_bytes) << ", optimizer states " << b(m->optimizer_state_bytes);
    if (m->master_weight_bytes > 0) out << ", master weights " << b(m->master_weight_bytes);
    out << " (live at once, in operator order: at most " << b(m->peak_bytes) << ")\n";
  }
  if (const auto area = accelerator_area(acc)) {
    out << "area          " << area->total_mm2 << " mm2 (cores";
    for (std::size_t c = 0; c < acc.cores.size(); ++c) out << (c ? ", " : ": ") << acc.cores[c].name << " " << area->core_mm2[c];
    out << ")\n";
  }
  if (!r.quality.empty()) {
    out << "quality       " << e.quality->name() << ":";
    for (const Metric& m : r.quality) out << " " << m.key << " " << format_number(m.value) << (m.unit.empty() ? "" : " " + m.unit);
    out << "\n";
  }
  if (s.capacity_violation > 0) out << "INFEASIBLE    " << s.capacity_reason << "\n";
  out << "search        " << e.search.name() << ": " << r.evaluation_count << " evaluation(s) in "
      << seconds(r.wall_seconds) << "\n";
  std::vector<std::string> others;
  for (const std::string& file : output_file_names(e)) {
    if (file != "results.json") others.push_back(file);
  }
  out << "results       " << (output_dir / "results.json").string() << " (+ " << join(others) << ")\n";
  return out.str();
}

}  // namespace monet
