#include "monet/report/cost_study.hpp"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "monet/util/strings.hpp"
#include "monet/util/version.hpp"

namespace monet {

using json = nlohmann::ordered_json;

namespace {

/// Where each operand lives for a layer: the memory names (the operand's top memory when not restricted).
json residency_json(const Core& core, const Residency& r) {
  json j = json::object();
  for (int s = 0; s < kSlotCount; ++s) {
    const auto slot = static_cast<OperandSlot>(s);
    int top = r.top[s];
    if (top < 0) {
      for (std::size_t m = 0; m < core.memories.size(); ++m) {
        if (core.memories[m].serves(slot)) top = static_cast<int>(m);
      }
    }
    j[to_string(slot)] = top >= 0 ? core.memories[static_cast<std::size_t>(top)].name : "";
  }
  return j;
}

}  // namespace

std::string cost_report(const Graph& graph, const Core& core, const CostStudy& study, bool as_json) {
  const auto& ops = study.ops;
  const auto& costs = study.costs;
  const std::string& model = study.model;
  double energy = 0, mac = 0, latency = 0, ideal = 0, stall = 0, onload = 0, offload = 0;
  const std::int64_t mappings = study.mappings_evaluated;
  for (const Cost& c : costs) {
    energy += c.energy_pj;
    mac += c.compute_energy_pj;
    latency += c.exact_cycles > 0 ? c.exact_cycles : static_cast<double>(c.cycles);
    ideal += static_cast<double>(c.ideal_cycles);
    stall += c.stall_cycles;
    onload += c.onloading_cycles;
    offload += c.offloading_cycles;
  }
  if (as_json) {
    json j;
    j["workload"] = graph.name();
    j["core"] = core.name;
    j["cost_model"] = model;
    j["monet_version"] = kVersion;
    j["units"] = json{{"energy", "pJ"}, {"latency", "cycles"}};
    j["data_locality"] = study.data_locality;
    j["energy_pj"] = energy;
    j["mac_energy_pj"] = mac;
    j["latency_cycles"] = latency;
    j["ideal_cycles"] = ideal;
    j["stall_cycles"] = stall;
    j["onloading_cycles"] = onload;
    j["offloading_cycles"] = offload;
    j["mappings_evaluated"] = mappings;
    j["seconds"] = study.seconds;
    json layers = json::array();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Cost& c = costs[i];
      layers.push_back(json{{"name", ops[i]->name},
                            {"type", ops[i]->type},
                            {"macs", ops[i]->iterations()},
                            {"energy_pj", c.energy_pj},
                            {"mac_energy_pj", c.compute_energy_pj},
                            {"memory_energy_pj", c.memory_energy_pj},
                            {"latency_cycles", c.exact_cycles > 0 ? c.exact_cycles : static_cast<double>(c.cycles)},
                            {"ideal_cycles", c.ideal_cycles},
                            {"stall_cycles", c.stall_cycles},
                            {"onloading_cycles", c.onloading_cycles},
                            {"offloading_cycles", c.offloading_cycles},
                            {"spatial_utilization", c.spatial_utilization},
                            {"spatial_mapping", c.spatial_mapping},
                            {"temporal_mapping", c.temporal_mapping},
                            {"mappings_evaluated", c.mappings_evaluated}});
      if (i < study.residency.size()) layers.back()["residency"] = residency_json(core, study.residency[i]);
    }
    j["layers"] = layers;
    json plugins = json::object();
    for (const auto& [key, version] : study.plugins) plugins[key] = version;
    j["provenance"] = json{{"monet_version", kVersion}, {"git_commit", git_commit()}, {"plugins", plugins}};
    return j.dump(1) + "\n";
  }
  std::ostringstream out;
  out << std::left << std::setw(36) << "operator" << std::right << std::setw(18) << "energy pJ" << std::setw(14)
      << "latency cyc" << std::setw(12) << "ideal" << std::setw(12) << "stall" << std::setw(10) << "onload"
      << std::setw(9) << "offload" << std::setw(7) << "util" << "  mapping\n";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Cost& c = costs[i];
    std::string name = ops[i]->name;
    if (name.size() > 35) name = name.substr(0, 34) + "~";
    out << std::left << std::setw(36) << name << std::right << std::setw(18) << std::fixed << std::setprecision(1)
        << c.energy_pj << std::setw(14) << (c.exact_cycles > 0 ? c.exact_cycles : static_cast<double>(c.cycles))
        << std::setw(12) << c.ideal_cycles << std::setw(12) << c.stall_cycles << std::setw(10) << c.onloading_cycles
        << std::setw(9) << c.offloading_cycles << std::setw(7) << std::setprecision(2) << c.spatial_utilization << "  "
        << c.mapping << "\n";
  }
  out << std::defaultfloat << std::setprecision(12) << "\ncore " << core.name << " (" << model << "), " << ops.size()
      << " operators: energy " << energy << " pJ (MAC " << mac << "), latency " << latency << " cycles (ideal "
      << ideal << ", stall " << stall << ", on-loading " << onload << ", off-loading " << offload << "), "
      << mappings << " mappings in " << std::setprecision(3) << study.seconds << " s"
      << (study.data_locality ? ", data kept on chip between layers where it fits" : "") << "\n";
  return out.str();
}

}  // namespace monet
