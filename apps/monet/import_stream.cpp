// `monet import stream-accelerator` and `monet import stream-mapping`: Stream's multi-core YAML inputs converted
// to monet's TOML (docs/importing.md). YAML errors carry file:line:column.
#include "import_stream.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "import_zigzag.hpp"
#include "monet/config/params.hpp"
#include "yaml_reader.hpp"

namespace monet::cli {

namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) { return to_string(ParamValue(s)); }

std::string number(double v) { return to_string(ParamValue(v)); }

/// Stream resolves a core file next to the accelerator file, or (as its examples are laid out) in cores/.
fs::path core_file(const Yaml& y, const YAML::Node& node, const fs::path& dir) {
  const std::string name = y.as<std::string>(node, "a core file name");
  for (const fs::path& p : {dir / name, dir / "cores" / name}) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p;
  }
  y.fail(node, "core file '" + name + "' not found next to the accelerator file or in its cores/ folder");
}

std::string instance(std::int64_t id) { return "core" + std::to_string(id); }

}  // namespace

static StreamAcceleratorImport stream_accelerator_body(const fs::path& accelerator, const fs::path& output,
                                                   const fs::path& cores_dir, const std::string& cost_model,
                                                   const LinkEnergies& energies) {
  const Yaml y(accelerator);
  const YAML::Node& r = y.root();
  y.check_keys(r, {"name", "cores", "offchip_core_id", "unit_energy_cost", "core_connectivity", "core_memory_sharing",
                   "core_coordinates", "max_object_fifo_depth"},
               "a Stream accelerator");
  const std::string name = y.as<std::string>(y.need(r, "name", "the accelerator name"), "a name");
  const YAML::Node cores = y.need(r, "cores", "core id -> core file");
  if (!cores.IsMap()) y.fail(cores, "expected a mapping of core ids to core files");
  const auto offchip_id = y.as<std::int64_t>(y.need(r, "offchip_core_id", "the id of the DRAM core"), "a core id");
  if (const YAML::Node share = r["core_memory_sharing"]; share && share.size() > 0) {
    y.fail(share, "core_memory_sharing (cores sharing one memory) is not supported");
  }
  const double default_link_energy = r["unit_energy_cost"] ? y.as<double>(r["unit_energy_cost"], "a number") : 0.0;
  const fs::path dir = accelerator.parent_path();

  StreamAcceleratorImport out;
  std::ostringstream text;
  text << "# Imported from Stream: " << accelerator.filename().string() << " (monet import stream-accelerator).\n"
       << "# Core instances keep Stream's ids (core<id>); the off-chip core becomes [offchip]. Units: bits, bits/cycle,\n"
       << "# pJ. Stream gives no clock frequency.\n";
  if (energies.link >= 0 || energies.bus >= 0) {
    text << "# Link energies replaced on import (--link-energy " << number(energies.link) << " --bus-energy "
         << number(energies.bus) << " pJ/bit): Stream's examples model none; docs/architectures.md gives the source.\n";
  }
  text << "[accelerator]\nname = " << q(name) << "\n";
  std::map<std::int64_t, std::string> names;
  std::map<fs::path, fs::path> converted;  // yaml -> toml
  std::string offchip_name = "dram";
  std::ostringstream offchip;
  // A core's name must say which core it is: Stream's files may share one (its simd.yaml is `name: pooling`,
  // copied from pooling.yaml), so a core whose name another core file also has is named after its file.
  std::map<std::string, std::set<fs::path>> files_named;
  for (const auto& kv : cores) {
    if (kv.first.IsScalar() && kv.first.as<std::string>() == std::to_string(offchip_id)) continue;
    const fs::path file = core_file(y, kv.second, dir);
    const Yaml c(file);
    if (const YAML::Node n = Yaml::get(c.root(), "name"); n && n.IsScalar()) files_named[n.as<std::string>()].insert(file);
  }
  auto own_name = [&](const fs::path& file) -> std::optional<std::string> {
    for (const auto& [n, files] : files_named) {
      if (files.size() > 1 && files.contains(file)) return file.stem().string();
    }
    return std::nullopt;
  };
  std::int64_t expected = 0;
  std::int64_t compute_cores = 0;
  for (const auto& kv : cores) {
    const auto id = y.as<std::int64_t>(kv.first, "a core id (0, 1, ...)");
    if (id != expected) y.fail(kv.first, "core ids must be 0, 1, 2, ... in order; expected " + std::to_string(expected));
    ++expected;
    const fs::path file = core_file(y, kv.second, dir);
    if (id == offchip_id) {
      const Yaml c(file);
      const YAML::Node mems = c.need(c.root(), "memories", "the DRAM memory");
      if (!mems.IsMap() || mems.size() != 1) c.fail(mems, "the off-chip core must have exactly one memory");
      const auto m = *mems.begin();
      offchip_name = m.first.as<std::string>();
      const YAML::Node& mem = m.second;
      reject_cost_extraction(c, mem);
      const YAML::Node ports = c.need(mem, "ports", "the DRAM port");
      if (!ports.IsSequence() || ports.size() == 0) c.fail(mem, "the off-chip memory needs a port");
      const auto bw = c.as<double>(c.need(ports[0], "bandwidth_max", "bits/cycle"), "a number");
      const auto rc = c.as<double>(c.need(mem, "r_cost", "pJ per access"), "a number");
      const auto wc = c.as<double>(c.need(mem, "w_cost", "pJ per access"), "a number");
      offchip << "\n[offchip]\nname = " << q(offchip_name)
              << "\nsize_bits = " << c.as<std::int64_t>(c.need(mem, "size", "bits"), "an integer")
              << "\nread_energy_pj_per_bit = " << number(rc / bw) << "   # " << number(rc) << " pJ per " << number(bw)
              << "-bit access\nwrite_energy_pj_per_bit = " << number(wc / bw) << "\nbandwidth_bits_per_cycle = " << number(bw)
              << "\n# The DRAM's own ports, shared by every core. Stream does not schedule them: each core streams at the\n"
              << "# full port bandwidth however many stream at once (ZigZag's view of one core); ports = @CORES@\n"
              << "# reproduces that.\nports = " << ports.size() << "\n";
      names[id] = offchip_name;
      continue;
    }
    ++compute_cores;
    auto it = converted.find(file);
    if (it == converted.end()) {
      const fs::path target = cores_dir / (file.stem().string() + ".toml");
      out.cores.emplace_back(fs::absolute(target), zigzag_core_to_toml(file, std::nullopt, cost_model, own_name(file)));
      it = converted.emplace(file, target).first;
    }
    names[id] = instance(id);
    const fs::path rel = fs::relative(fs::absolute(it->second), fs::absolute(output).parent_path());
    text << "\n[[cores]]\nname = " << q(instance(id)) << "\nfile = " << q(rel.generic_string()) << "\n";
  }
  if (!names.contains(offchip_id)) y.fail(r["offchip_core_id"], "no core has the id " + std::to_string(offchip_id));
  std::string off = offchip.str();
  off.replace(off.find("@CORES@"), 7, std::to_string(compute_cores));
  text << off;

  // Links. Stream keeps one link per core pair: a later entry for a pair replaces the earlier one. monet uses
  // the widest link between two endpoints; say when that differs.
  const YAML::Node conn = y.need(r, "core_connectivity", "links and buses");
  if (!conn.IsSequence()) y.fail(conn, "expected a list of links and buses");
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::size_t, double>> last;  // pair -> (entry, bw)
  std::map<std::pair<std::int64_t, std::int64_t>, double> widest;
  std::size_t index = 0;
  for (const YAML::Node& l : conn) {
    y.check_keys(l, {"type", "cores", "bandwidth", "unit_energy_cost"}, "a core_connectivity entry");
    const std::string type = y.as<std::string>(y.need(l, "type", "link or bus"), "link or bus");
    if (type != "link" && type != "bus") y.fail(l["type"], "expected 'link' or 'bus', got '" + type + "'");
    const auto ids = y.as<std::vector<std::int64_t>>(y.need(l, "cores", "the core ids it joins"), "a list of core ids");
    const auto bw = y.as<double>(y.need(l, "bandwidth", "bits/cycle"), "a number");
    const double energy = l["unit_energy_cost"] ? y.as<double>(l["unit_energy_cost"], "a number") : default_link_energy;
    std::vector<std::string> ends;
    for (std::int64_t id : ids) {
      if (!names.contains(id)) y.fail(l["cores"], "core id " + std::to_string(id) + " is not in `cores`");
      ends.push_back(names[id]);
    }
    if (type == "link" && ids.size() != 2) y.fail(l["cores"], "a link joins exactly two cores");
    for (std::size_t a = 0; a < ids.size(); ++a) {
      for (std::size_t b = a + 1; b < ids.size(); ++b) {
        const auto key = std::minmax(ids[a], ids[b]);
        last[key] = {index, bw};
        widest[key] = std::max(widest[key], bw);
      }
    }
    text << "\n[[links]]\nname = " << q((type == "bus" ? "bus" : "link") + std::to_string(index)) << "\nkind = "
         << q(type == "bus" ? "bus" : "point_to_point") << "\nendpoints = " << to_string(ParamValue(ends))
         << "\nbandwidth_bits_per_cycle = " << number(bw) << "\nenergy_pj_per_bit = ";
    const double replaced = type == "bus" ? energies.bus : energies.link;
    if (replaced >= 0) {
      text << number(replaced) << "   # Stream: " << number(energy) << " pJ per cycle of activity (replaced on import)\n";
    } else {
      text << number(energy / bw) << "   # Stream: " << number(energy) << " pJ per cycle of activity\n";
    }
    ++index;
  }
  std::size_t overridden = 0;
  std::size_t differs = 0;
  for (const auto& [pair, lb] : last) {
    if (widest[pair] > lb.second) ++differs;
  }
  std::map<std::pair<std::int64_t, std::int64_t>, int> count;
  index = 0;
  for (const YAML::Node& l : conn) {
    const auto ids = l["cores"].as<std::vector<std::int64_t>>();
    for (std::size_t a = 0; a < ids.size(); ++a) {
      for (std::size_t b = a + 1; b < ids.size(); ++b) ++count[std::minmax(ids[a], ids[b])];
    }
  }
  for (const auto& [pair, n] : count) overridden += n > 1 ? 1 : 0;
  if (overridden > 0) {
    text << "\n# " << overridden << " core pairs are joined by several entries. Stream uses only the last entry of each "
         << "pair; monet uses the widest link.\n";
    if (differs == 0) {
      text << "# Here the last entry is also the widest for every pair, so both use the same links (in Stream's\n"
           << "# examples the final bus: the point-to-point links above it carry nothing).\n";
    } else {
      text << "# For " << differs << " pairs the last entry is narrower than an earlier one: monet and Stream differ there.\n";
      spdlog::warn("{}: for {} core pairs Stream would use a narrower, later link than monet", accelerator.string(), differs);
    }
  }
  out.accelerator = text.str();
  return out;
}

static std::string stream_mapping_body(const fs::path& mapping, const std::string& fusion_plugin) {
  const Yaml y(mapping);
  const YAML::Node& r = y.root();
  if (!r.IsSequence()) y.fail(r, "expected a list of mapping entries");
  // Operator types Stream parses with its elementwise parsers, whose loop dims are named by position (B, H, D, K for
  // the output's axes); monet names those by axis.
  const std::set<std::string> positional{"Add", "Mul", "Relu", "Gelu", "Silu", "Sigmoid", "Exp", "Div", "Sqrt", "Pow",
                                         "Reciprocal", "default"};
  const std::set<std::string> onnx_types{"Conv", "QLinearConv", "Gemm", "MatMul", "Einsum", "MaxPool", "AveragePool",
                                         "GlobalAveragePool", "Add", "Mul", "Relu", "Gelu", "Silu", "Sigmoid", "Exp", "Div",
                                         "Sqrt", "Pow", "Reciprocal", "Softmax", "ReduceMean", "Pool"};
  std::ostringstream alloc_default, alloc_type, alloc_op;
  std::vector<std::string> intra, inter;
  for (const YAML::Node& e : r) {
    y.check_keys(e, {"name", "core_allocation", "intra_core_tiling", "inter_core_tiling", "spatial_mapping",
                     "spatial_mapping_hint", "temporal_ordering", "layer_dimension_names", "memory_operand_links", "kernel"},
                 "a Stream mapping entry");
    const std::string name = y.as<std::string>(y.need(e, "name", "default, an operator type or a node name"), "a name");
    const bool by_axis = positional.contains(name);
    auto splits = [&](const char* key) {
      std::vector<std::string> parts;
      if (!e[key]) return std::string();
      for (const YAML::Node& t : e[key]) {
        const std::string s = y.as<std::string>(t, "'DIM, n' (n a count, 'all' or '*')");
        const auto comma = s.find(',');
        if (comma == std::string::npos) y.fail(t, "expected 'DIM, n', got '" + s + "'");
        std::string dim = trim(s.substr(0, comma));
        const std::string n = trim(s.substr(comma + 1));
        if (n == "*") y.fail(t, "'*' (let Stream's MILP choose) has no equivalent: give a count");
        // What the fusion plugins accept: a positive count or 'all' (checked here, where the user can fix it).
        const bool count = !n.empty() && n.size() < 10 && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (n != "all" && !(count && std::stoll(n) > 0)) {
          y.fail(t, "expected 'DIM, n' with n a positive count or 'all', got '" + s + "'");
        }
        if (by_axis) {
          const std::map<std::string, std::string> axis{{"B", "axis0"}, {"H", "axis1"}, {"D", "axis2"}, {"K", "axis3"}};
          if (auto it = axis.find(dim); it != axis.end()) dim = it->second;
        }
        parts.push_back(dim + ":" + n);
      }
      return join(parts, ",");
    };
    const std::string in = splits("intra_core_tiling");
    const std::string out = splits("inter_core_tiling");
    if (!in.empty()) intra.push_back(name + "=" + in);
    if (!out.empty()) inter.push_back(name + "=" + out);
    if (const YAML::Node ca = e["core_allocation"]) {
      std::vector<std::string> cores;
      for (std::int64_t id : y.as<std::vector<std::int64_t>>(ca, "a list of core ids")) cores.push_back(instance(id));
      const std::string list = to_string(ParamValue(cores));
      if (name == "default") {
        alloc_default << "default = " << list << "\n";
      } else if (onnx_types.contains(name)) {
        alloc_type << q(name) << " = " << list << "\n";
      } else {
        alloc_op << q(name) << " = " << list << "\n";
      }
    }
  }
  std::ostringstream t;
  t << "# Imported from the Stream mapping " << mapping.filename().string()
    << " (monet import stream-mapping): paste into an experiment.\n"
    << "# Cores are Stream's ids (core<id>, as `monet import stream-accelerator` names them). Tiling: Stream's\n"
    << "# elementwise loop dims B, H, D, K are the output's axes (axis0..axis3); convolution dims keep their names.\n"
    << "\n[allocation]\n" << alloc_default.str();
  if (!alloc_type.str().empty()) t << "\n[allocation.type]\n" << alloc_type.str();
  if (!alloc_op.str().empty()) t << "\n[allocation.operator]\n" << alloc_op.str();
  t << "\n[fusion]\nplugin = " << q(fusion_plugin) << "\n";
  if (fusion_plugin == "fused_stacks") t << "intra = " << to_string(ParamValue(intra)) << "\n";
  t << "inter = " << to_string(ParamValue(inter)) << "\n";
  return t.str();
}

StreamAcceleratorImport stream_accelerator_to_toml(const fs::path& accelerator, const fs::path& output,
                                                   const fs::path& cores_dir, const std::string& cost_model,
                                                   const LinkEnergies& energies) {
  return located_yaml_errors(accelerator, [&] { return stream_accelerator_body(accelerator, output, cores_dir, cost_model, energies); });
}

std::string stream_mapping_to_toml(const fs::path& mapping, const std::string& fusion_plugin) {
  return located_yaml_errors(mapping, [&] { return stream_mapping_body(mapping, fusion_plugin); });
}

}  // namespace monet::cli
