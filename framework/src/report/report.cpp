#include "monet/report/report.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "json_parts.hpp"
#include "monet/report/inspect.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"
#include "monet/util/version.hpp"

namespace monet {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string endpoint(const Accelerator& acc, int id) { return id == kNone ? "" : acc.endpoint_name(id); }

json provenance(const PreparedExperiment& p) {
  const Experiment& e = p.experiment;
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
  return json{{"monet_version", kVersion}, {"git_commit", git_commit()}, {"plugins", plugins}};
}

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
  j["energy_breakdown"] = json{{"mac_energy_pj", s.energy.mac_pj},
                               {"onchip_memory_energy_pj", s.energy.onchip_memory_pj},
                               {"offchip_energy_pj", s.energy.offchip_pj},
                               {"link_energy_pj", s.energy.link_pj},
                               {"spill_energy_pj", s.energy.spill_pj}};
  j["offchip_read_bytes"] = s.offchip_read_bits / 8;
  j["offchip_write_bytes"] = s.offchip_write_bits / 8;
  j["spilled_bytes"] = s.spilled_bits / 8;
  j["peak_offchip_bytes"] = (s.peak_offchip_bits + 7) / 8;
  j["over_capacity"] = s.over_capacity;

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

  json cores = json::array();
  for (const CoreInstance& c : acc.cores) {
    const auto id = static_cast<std::size_t>(c.id);
    cores.push_back(json{{"name", c.name},
                         {"type", c.core->name},
                         {"cost_model", e.core_cost_model[id].substr(0, e.core_cost_model[id].find('@'))},
                         {"pe_count", c.core->array.pe_count()},
                         {"capacity_bytes", c.core->resident_capacity_bits() / 8},
                         {"peak_memory_bytes", (s.peak_memory_bits[id] + 7) / 8}});
    if (id < r.best.peak_composition.size()) {
      const PeakComposition& pc = r.best.peak_composition[id];
      cores.back()["peak_composition"] = json{{"time_cycle", pc.time},
                                              {"activations_bytes", (pc.activations + 7) / 8},
                                              {"weights_bytes", (pc.weights + 7) / 8},
                                              {"gradients_bytes", (pc.gradients + 7) / 8},
                                              {"optimizer_states_bytes", (pc.optimizer_states + 7) / 8},
                                              {"other_bytes", (pc.other + 7) / 8}};
    }
  }
  j["architecture"] = json{{"name", acc.name}, {"file", e.architecture_file.string()}};
  if (acc.frequency_hz > 0) j["architecture"]["frequency_hz"] = acc.frequency_hz;
  j["architecture"]["cores"] = cores;

  json nodes = json::array();
  for (const ScheduledNode& n : r.best.nodes) {
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    std::int64_t macs = is_mac_kind(op.kind) ? 1 : 0;
    for (const Range& rg : cn.ranges) macs *= rg.size();
    nodes.push_back(json{{"name", cn_name(g, cn)},
                         {"operator", op.name},
                         {"kind", to_string(op.kind)},
                         {"phase", to_string(op.phase)},
                         {"core", endpoint(acc, n.core)},
                         {"start_cycle", n.start},
                         {"end_cycle", n.end},
                         {"latency_cycles", n.end - n.start},
                         {"energy_pj", n.cost.energy_pj},
                         {"macs", macs},
                         {"bound", n.cost.bound}});
    if (!n.cost.mapping.empty()) nodes.back()["mapping"] = n.cost.mapping;
    if (cns.nodes.size() > 1) {
      nodes.back()["stack"] = cn.stack;
      if (cn.groups > 1) nodes.back()["group"] = cn.group;
    }
    if (n.streamed.any()) {
      std::vector<std::string> streamed;
      for (int k = 0; k < 3; ++k) {
        if (n.streamed.slot[k]) streamed.push_back(to_string(static_cast<OperandSlot>(k)));
      }
      nodes.back()["streamed_operands"] = streamed;
    }
  }
  j["computation_nodes"] = nodes;

  json transfers = json::array();
  for (const Transfer& t : r.best.transfers) {
    transfers.push_back(json{{"tensor", t.tensor == kNone ? "" : g.tensor(t.tensor).name},
                             {"from", endpoint(acc, t.from)},
                             {"to", endpoint(acc, t.to)},
                             {"link", acc.links[static_cast<std::size_t>(t.link)].name},
                             {"for", t.cn < 0 ? "output" : cn_name(g, cns.nodes[static_cast<std::size_t>(t.cn)])},
                             {"start_cycle", t.start},
                             {"end_cycle", t.end},
                             {"bits", t.bits},
                             {"bandwidth_bits_per_cycle", t.bandwidth},
                             {"cause", to_string(t.cause)},
                             {"energy_pj", t.energy_pj}});
  }
  j["transfers"] = transfers;
  if (e.training_mode == "training") j["training"] = detail::training_json(g, training_summary(g));
  j["search"] = json{{"plugin", e.search.name()}, {"evaluations", r.evaluation_count}, {"reported_points", r.evaluations.size()}};
  j["provenance"] = provenance(p);
  return j.dump(1) + "\n";
}

std::string schedule_csv(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  std::ostringstream out;
  out << "cn,operator,kind,phase,core,start_cycle,end_cycle,latency_cycles,energy_pj,bound\n";
  auto csv = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  out.precision(17);
  for (const ScheduledNode& n : r.best.nodes) {
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    out << n.cn << "," << csv(op.name) << "," << to_string(op.kind) << "," << to_string(op.phase) << ","
        << csv(endpoint(acc, n.core)) << "," << n.start << "," << n.end << "," << (n.end - n.start) << ","
        << n.cost.energy_pj << "," << csv(n.cost.bound) << "\n";
  }
  return out.str();
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

  out << "\n[workload]\nplugin = " << toml_string(e.frontend.name()) << "\nfile = "
      << toml_string(relative_to(e.workload_file, dir)) << "\n";
  write_params(out, e.frontend, dir);

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

  if (e.precision) out << "\n[precision]\n" << precision_toml(*e.precision);

  out << "\n[architecture]\nfile = " << toml_string(relative_to(e.architecture_file, dir)) << "\n";

  out << "\n[cost_model]\n";
  std::string override_name;
  if (e.cost_model_overridden) {
    override_name = e.core_cost_model.front();
    out << "plugin = " << toml_string(override_name) << "\n";
    write_params(out, e.cost_models.at(override_name), dir);
  }
  for (const auto& [name, c] : e.cost_models) {
    if (name == override_name) continue;
    if (name.find('@') != std::string::npos) continue;  // a core's own [cost_model_params], read again from it
    out << "\n[cost_model." << name << "]\n";
    write_params(out, c, dir);
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

  out << "\n[fusion]\nplugin = " << toml_string(e.fusion.name()) << "\n";
  write_params(out, e.fusion, dir);
  out << "\n[schedule]\noffchip_bandwidth = " << (e.schedule.peak_offchip_bandwidth ? "\"peak\"" : "\"average\"")
      << "\nlayer_barrier = " << (e.schedule.layer_barrier ? "true" : "false")
      << "\ntransfers = " << (e.schedule.whole_tile_transfers ? "\"whole_tile\"" : "\"exact\"") << "\n";

  out << "\n[search]\nplugin = " << toml_string(e.search.name()) << "\n";
  write_params(out, e.search, dir);
  out << "\n[output]\ndir = " << toml_string(e.output_dir.string()) << "\noverwrite = " << (e.overwrite ? "true" : "false")
      << "\n";

  const json prov = provenance(p);
  out << "\n# For the record; not read back.\n[provenance]\nmonet_version = " << toml_string(kVersion)
      << "\ngit_commit = " << toml_string(git_commit()) << "\nseed = " << e.seed
      << "\nsource = " << toml_string(fs::absolute(e.file).lexically_normal().string())
      << "\noverrides = " << string_list(e.overrides) << "\n\n[provenance.plugins]\n";
  for (const auto& [key, version] : prov["plugins"].items()) {
    out << toml_string(key) << " = " << toml_string(version.get<std::string>()) << "\n";
  }
  return out.str();
}

// --------------------------------------------------------------------------------------------- summary

namespace {
std::string si(double v, const std::string& unit) {
  static const char* up[] = {"", "k", "M", "G", "T", "P"};
  static const char* down[] = {"", "m", "u", "n", "p", "f"};
  const char* prefix = "";
  int i = 0;
  if (v != 0.0) {
    while (std::fabs(v) >= 1000.0 && i < 5) {
      v /= 1000.0;
      prefix = up[++i];
    }
    while (std::fabs(v) < 1.0 && i > -5) {
      v *= 1000.0;
      prefix = down[-(--i)];
    }
  }
  std::ostringstream s;
  s.precision(4);
  s << v << " " << prefix << unit;
  return s.str();
}
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
  out << "\n";
  out << "peak memory   ";
  for (std::size_t c = 0; c < acc.cores.size(); ++c) {
    if (c) out << ", ";
    out << acc.cores[c].name << " " << si(static_cast<double>((s.peak_memory_bits[c] + 7) / 8), "B");
  }
  out << ", " << acc.offchip.name << " " << si(static_cast<double>((s.peak_offchip_bits + 7) / 8), "B");
  if (s.spilled_bits > 0) out << " (" << si(static_cast<double>(s.spilled_bits / 8), "B") << " spilled)";
  if (s.over_capacity) out << " -- a core exceeded its capacity";
  out << "\n";
  out << "search        " << e.search.name() << ": " << r.evaluation_count << " evaluation(s) in "
      << seconds(r.wall_seconds) << "\n";
  out << "results       " << (output_dir / "results.json").string() << " (+ schedule.csv, trace.json, memory.svg, schedule.svg)\n";
  return out.str();
}

}  // namespace monet
