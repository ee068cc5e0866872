// `monet import zigzag-core` and `monet import zigzag-workload`: ZigZag's YAML accelerator, mapping and layer
// files converted to monet's TOML (docs/importing.md). YAML errors carry file:line:column.
#include "import_zigzag.hpp"

#include <yaml-cpp/yaml.h>

#include "yaml_reader.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "monet/config/params.hpp"
#include "monet/ir/tensor.hpp"
#include "monet/util/error.hpp"
#include "monet/util/strings.hpp"

namespace monet::cli {

namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) { return to_string(ParamValue(s)); }

/// "K, 32" -> ("K", 32); "K, *" -> ("K", 0).
std::pair<std::string, std::int64_t> dim_and_size(const Yaml& y, const YAML::Node& n) {
  std::string dim;
  std::string size;
  if (n.IsSequence() && n.size() == 2) {
    dim = y.as<std::string>(n[0], "a loop dimension");
    size = y.as<std::string>(n[1], "a size");
  } else {
    const std::string text = y.as<std::string>(n, "'DIM, size'");
    const auto comma = text.find(',');
    if (comma == std::string::npos) y.fail(n, "expected 'DIM, size', got '" + text + "'");
    dim = trim(text.substr(0, comma));
    size = trim(text.substr(comma + 1));
  }
  if (size == "*" || size == "all") return {dim, 0};
  try {
    return {dim, std::stoll(size)};
  } catch (const std::exception&) {
    y.fail(n, "expected an integer size, got '" + size + "'");
  }
}

/// A YAML list of "DIM, factor" (or one such entry) as the TOML inline table "{ K = 32, C = 4 }".
std::string unrolling_table(const Yaml& y, const YAML::Node& list) {
  std::vector<YAML::Node> items;
  if (list.IsSequence()) {
    for (const auto& item : list) items.push_back(item);
  } else {
    items.push_back(list);
  }
  std::string s = "{";
  bool first = true;
  for (const auto& item : items) {
    const auto [dim, size] = dim_and_size(y, item);
    if (size <= 0) y.fail(item, "a spatial unrolling needs a positive factor");
    s += (first ? " " : ", ") + dim + " = " + std::to_string(size);
    first = false;
  }
  return s + " }";
}

/// { D1: [K, 32], D2: [...] } as "{ D1 = { K = 32 }, D2 = { ... } }".
std::string spatial_table(const Yaml& y, const YAML::Node& sm) {
  if (!sm.IsMap()) y.fail(sm, "expected a mapping of array dimensions to unrollings");
  std::string s = "{";
  bool first = true;
  for (const auto& kv : sm) {
    s += (first ? " " : ", ") + kv.first.as<std::string>() + " = " + unrolling_table(y, kv.second);
    first = false;
  }
  return s + " }";
}

}  // namespace

static std::string zigzag_mapping_body(const fs::path& mapping) {
  std::ostringstream out;
  {
    const Yaml my(mapping);
    const YAML::Node& entries = my.root();
    if (!entries.IsSequence()) my.fail(entries, "expected a list of mapping entries");
    for (const YAML::Node& e : entries) {
      const std::string ename = my.as<std::string>(my.need(e, "name", "default, an operator type or a layer name"), "a name");
      out << "\n[mapping." << q(ename) << "]\n";
      if (const YAML::Node sm = e["spatial_mapping"]) out << "spatial_mapping = " << spatial_table(my, sm) << "\n";
      if (const YAML::Node hint = e["spatial_mapping_hint"]) {
        out << "spatial_mapping_hint = {";
        bool first = true;
        for (const auto& kv : hint) {
          out << (first ? " " : ", ") << kv.first.as<std::string>() << " = "
              << to_string(ParamValue(my.as<std::vector<std::string>>(kv.second, "a list of loop dims")));
          first = false;
        }
        out << " }\n";
      }
      if (const YAML::Node to = e["temporal_ordering"]) {
        out << "temporal_ordering = [";
        bool first = true;
        for (const YAML::Node& entry : to) {
          const auto [dim, size] = dim_and_size(my, entry);
          out << (first ? "" : ", ") << "[" << q(dim) << ", " << (size > 0 ? std::to_string(size) : q("*")) << "]";
          first = false;
        }
        out << "]  # innermost first\n";
      }
      if (const YAML::Node links = e["memory_operand_links"]) {
        const std::map<std::string, std::string> standard{{"O", "O"}, {"W", "I2"}, {"I", "I1"}};
        for (const auto& kv : links) {
          auto it = standard.find(kv.first.as<std::string>());
          if (it == standard.end() || it->second != kv.second.as<std::string>()) {
            my.fail(kv.second, "only the standard memory_operand_links {O: O, W: I2, I: I1} are supported");
          }
        }
      }
    }
  }
  return out.str();
}

void reject_cost_extraction(const Yaml& y, const YAML::Node& memory) {
  // A YAML boolean as PyYAML reads it: ZigZag's files write "True"/"False", which a text comparison missed.
  if (const YAML::Node n = memory["auto_cost_extraction"]; n && y.as<bool>(n, "true or false")) {
    y.fail(n, "CACTI cost extraction is not available: monet needs explicit energies, give r_cost and w_cost (pJ per "
              "access)");
  }
}

static std::string zigzag_core_body(const fs::path& hardware, const std::optional<fs::path>& mapping,
                                const std::string& cost_model, const std::optional<std::string>& rename) {
  const Yaml y(hardware);
  const YAML::Node& r = y.root();
  std::ostringstream out;
  out << "# Imported from ZigZag: " << hardware.filename().string();
  if (mapping) out << " (mapping " << mapping->filename().string() << ")";
  out << "\n# Units: sizes and bandwidths in bits and bits/cycle, energies in pJ per access of one full-width word.\n";
  y.check_keys(r, {"name", "operational_array", "memories", "dataflows", "type"}, "an accelerator");
  if (r["type"] && r["type"].as<std::string>() == "memory") {
    y.fail(r["type"], "a memory-only core (Stream's off-chip core) is the off-chip memory of an accelerator: import the "
                      "accelerator with `monet import stream-accelerator`");
  }
  const std::string own_name = y.as<std::string>(y.need(r, "name", "the accelerator name"), "a name");
  const std::string name = rename.value_or(own_name);
  if (name != own_name) {
    out << "# Named after its file: the file's own name '" << own_name << "' is also another core's.\n";
  }
  const YAML::Node array = y.need(r, "operational_array", "dimensions, sizes, unit_energy");
  y.check_keys(array, {"dimensions", "sizes", "unit_energy", "unit_area", "is_imc", "imc_type", "input_precision",
                       "bit_serial_precision", "adc_resolution"},
               "operational_array");
  // A YAML boolean, as ZigZag's PyYAML reads it (true, True, yes, on...): comparing the text missed "True".
  if (array["is_imc"] && y.as<bool>(array["is_imc"], "true or false")) {
    y.fail(array["is_imc"], "in-memory-compute arrays are not supported");
  }
  // Two integers (I1, I2) in ZigZag's schema; monet costs MACs by unit_energy, so it only checks them.
  if (const YAML::Node p = array["input_precision"]) {
    if (!p.IsSequence() || p.size() != 2) y.fail(p, "input_precision: expected two precisions in bits, [I1, I2]");
    for (const YAML::Node& bits : p) {
      const auto b = y.as<std::int64_t>(bits, "an integer number of bits");
      if (b < 1 || b > 64) y.fail(bits, "input_precision: expected 1 to 64 bits, got " + std::to_string(b));
    }
  }
  const auto dims = y.as<std::vector<std::string>>(y.need(array, "dimensions", "array dimension names"), "a list of names");
  const auto sizes = y.as<std::vector<std::int64_t>>(y.need(array, "sizes", "array sizes"), "a list of sizes");
  if (dims.size() != sizes.size()) y.fail(array, "dimensions and sizes differ in length");
  for (std::int64_t s : sizes) {
    if (s <= 0) {
      y.fail(array["sizes"], "the operational array has a size-0 dimension (a memory-only core): import it as the "
                             "off-chip memory of an accelerator instead");
    }
  }
  out << "[core]\nname = " << q(name) << "\ncost_model = " << q(cost_model) << "\n";
  out << "\n[array]\ndims = " << to_string(ParamValue(dims)) << "\nsizes = " << to_string(ParamValue(sizes))
      << "\nunit_energy_pj = "
      << to_string(ParamValue(y.as<double>(y.need(array, "unit_energy", "energy per MAC, pJ"), "a number"))) << "\n";
  if (const YAML::Node df = r["dataflows"]) {
    if (!df.IsMap()) y.fail(df, "expected a mapping of array dimensions to unrollings");
    out << "\n[dataflow]\n";
    for (const auto& kv : df) out << kv.first.as<std::string>() << " = " << unrolling_table(y, kv.second) << "\n";
  }
  const YAML::Node memories = y.need(r, "memories", "the memory levels, bottom-up");
  if (!memories.IsMap()) y.fail(memories, "expected a mapping of memory names to memories (bottom-up)");
  std::size_t level = 0;
  for (const auto& kv : memories) {
    const std::string mname = kv.first.as<std::string>();
    const YAML::Node& m = kv.second;
    const bool last = ++level == memories.size();
    y.check_keys(m, {"size", "r_cost", "w_cost", "area", "latency", "operands", "ports", "served_dimensions",
                     "auto_cost_extraction", "force_double_buffering", "mem_type", "min_r_granularity",
                     "min_w_granularity", "r_bw", "w_bw", "r_port", "w_port", "rw_port"},
                 "memory '" + mname + "'");
    reject_cost_extraction(y, m);
    out << "\n[[memories]]\nname = " << q(mname) << "\nsize_bits = "
        << y.as<std::int64_t>(y.need(m, "size", "capacity in bits"), "an integer") << "\nread_energy_pj = "
        << to_string(ParamValue(y.as<double>(y.need(m, "r_cost", "pJ per read"), "a number")))
        << "\nwrite_energy_pj = " << to_string(ParamValue(y.as<double>(y.need(m, "w_cost", "pJ per write"), "a number")))
        << "\noperands = " << to_string(ParamValue(y.as<std::vector<std::string>>(y.need(m, "operands", "I1, I2, O"), "a list")))
        << "\nserved_dims = "
        << to_string(ParamValue(m["served_dimensions"] ? y.as<std::vector<std::string>>(m["served_dimensions"], "a list")
                                                       : std::vector<std::string>{}))
        << "\n";
    // ZigZag puts DRAM inside the core as its top level; it is the accelerator's off-chip memory.
    if (last && (mname == "dram" || mname == "DRAM")) out << "offchip = true\n";
    if (m["force_double_buffering"] && m["force_double_buffering"].as<bool>()) out << "double_buffering = true\n";
    const YAML::Node ports = y.need(m, "ports", "the memory's ports");
    if (!ports.IsSequence()) y.fail(ports, "expected a list of ports");
    for (const YAML::Node& p : ports) {
      y.check_keys(p, {"name", "type", "bandwidth_min", "bandwidth_max", "allocation"}, "a port of memory '" + mname + "'");
      if (!p["allocation"]) y.fail(p, "a port needs an allocation (a list of 'OPERAND, direction', e.g. 'I1, tl')");
      out << "  [[memories.ports]]\n  name = " << q(y.as<std::string>(y.need(p, "name", "port name"), "a name"))
          << "\n  type = " << q(y.as<std::string>(y.need(p, "type", "read, write or read_write"), "a type"))
          << "\n  bandwidth_min_bits = " << y.as<std::int64_t>(y.need(p, "bandwidth_min", "bits/cycle"), "an integer")
          << "\n  bandwidth_max_bits = " << y.as<std::int64_t>(y.need(p, "bandwidth_max", "bits/cycle"), "an integer")
          << "\n  allocation = {";
      std::map<std::string, std::vector<std::string>> alloc;
      std::vector<std::string> order;
      for (const YAML::Node& a : p["allocation"]) {
        const std::string text = y.as<std::string>(a, "'OPERAND, direction'");
        const auto comma = text.find(',');
        if (comma == std::string::npos) y.fail(a, "expected 'OPERAND, direction' (e.g. 'I1, tl'), got '" + text + "'");
        const std::string op = trim(text.substr(0, comma));
        if (!alloc.contains(op)) order.push_back(op);
        alloc[op].push_back(trim(text.substr(comma + 1)));
      }
      for (std::size_t i = 0; i < order.size(); ++i) {
        out << (i ? ", " : " ") << order[i] << " = " << to_string(ParamValue(alloc[order[i]]));
      }
      out << " }\n";
    }
  }
  if (mapping) out << zigzag_mapping_to_toml(*mapping);
  return out.str();
}

namespace {

struct Term {
  std::string dim;
  std::int64_t coeff = 1;
};

/// "2*ox+1*fx" -> terms over upper-cased loop dims.
std::vector<Term> parse_relation_rhs(const Yaml& y, const YAML::Node& where, const std::string& rhs) {
  std::vector<Term> out;
  std::stringstream s(rhs);
  std::string part;
  while (std::getline(s, part, '+')) {
    part = trim(part);
    Term t;
    const auto star = part.find('*');
    if (star != std::string::npos) {
      try {
        t.coeff = std::stoll(trim(part.substr(0, star)));
      } catch (const std::exception&) {
        y.fail(where, "cannot read the coefficient in '" + part + "'");
      }
      part = trim(part.substr(star + 1));
    }
    std::transform(part.begin(), part.end(), part.begin(), ::toupper);
    t.dim = part;
    out.push_back(t);
  }
  return out;
}

/// Distinct values of sa·a + sb·b for a < A, b < B (ZigZag's partially-relevant dimension size).
std::int64_t pr_size(std::int64_t A, std::int64_t sa, std::int64_t B, std::int64_t sb) {
  const std::int64_t g = std::gcd(sa, sb);
  return A * B - std::max<std::int64_t>(0, B - sa / g) * (A - sb / g);
}

}  // namespace

static std::string zigzag_workload_body(const fs::path& layers) {
  const Yaml y(layers);
  const YAML::Node& list = y.root();
  if (!list.IsSequence()) y.fail(list, "expected a list of layers");
  std::ostringstream out;
  std::ostringstream tensors;
  std::ostringstream body;
  out << "# Imported from a ZigZag layer list: " << layers.filename().string()
      << ".\n# Every layer reads its own operand tensors (sized as ZigZag sizes them, halo included); `after`\n"
         "# keeps the layer order of ZigZag's operand_source.\n[workload]\nname = "
      << q(layers.stem().string()) << "\ndtype = \"int8\"\n";
  std::map<std::int64_t, std::string> name_of_id;
  for (const YAML::Node& L : list) {
    const std::int64_t id = y.as<std::int64_t>(y.need(L, "id", "the layer id"), "an integer");
    const std::string name = L["name"] ? y.as<std::string>(L["name"], "a name") : "Layer" + std::to_string(id);
    if (name_of_id.contains(id)) y.fail(L["id"], "layer id " + std::to_string(id) + " is used twice");
    const std::string type = y.as<std::string>(y.need(L, "operator_type", "Conv, Gemm, Pooling, Add, ..."), "a name");
    const auto dims = y.as<std::vector<std::string>>(y.need(L, "loop_dims", "loop dimension names"), "a list");
    const auto sizes = y.as<std::vector<std::int64_t>>(y.need(L, "loop_sizes", "loop sizes"), "a list");
    if (dims.size() != sizes.size()) y.fail(L["loop_sizes"], "loop_dims and loop_sizes differ in length");
    for (std::int64_t n : sizes) {
      if (n <= 0) y.fail(L["loop_sizes"], "every loop size must be positive, got " + std::to_string(n));
    }
    std::map<std::string, std::int64_t> size_of;
    for (std::size_t i = 0; i < dims.size(); ++i) size_of[dims[i]] = sizes[i];
    // Partially relevant dims: ix = sa*ox + sb*fx, with padding and explicit sizes when given.
    std::map<std::string, std::vector<Term>> relations;
    std::vector<std::string> relation_order;
    if (const YAML::Node rel = L["dimension_relations"]) {
      for (const YAML::Node& r : rel) {
        const std::string text = y.as<std::string>(r, "'ix=1*ox+1*fx'");
        const auto eq = text.find('=');
        if (eq == std::string::npos) y.fail(r, "expected 'ix=s*ox+d*fx', got '" + text + "'");
        std::string lhs = trim(text.substr(0, eq));
        std::transform(lhs.begin(), lhs.end(), lhs.begin(), ::toupper);
        auto terms = parse_relation_rhs(y, r, text.substr(eq + 1));
        if (terms.size() != 2) y.fail(r, "a dimension relation needs exactly two terms, got '" + text + "'");
        for (const Term& t : terms) {
          if (!size_of.contains(t.dim)) y.fail(r, "'" + t.dim + "' is not one of the loop_dims");
        }
        relations[lhs] = terms;
        relation_order.push_back(lhs);
      }
    }
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> padding;  // pr dim -> (pre, post)
    if (const YAML::Node pad = L["padding"]) {
      std::size_t k = 0;
      for (const YAML::Node& p : pad) {
        if (k >= relation_order.size()) y.fail(p, "more padding entries than dimension relations");
        const auto pp = y.as<std::vector<std::int64_t>>(p, "[pre, post]");
        padding[relation_order[k++]] = {pp.at(0), pp.size() > 1 ? pp[1] : pp[0]};
      }
    }
    std::map<std::string, std::int64_t> explicit_pr;
    if (L["pr_loop_dims"] && L["pr_loop_sizes"]) {
      const auto pd = y.as<std::vector<std::string>>(L["pr_loop_dims"], "a list");
      const auto ps = y.as<std::vector<std::int64_t>>(L["pr_loop_sizes"], "a list");
      for (std::size_t k = 0; k < pd.size() && k < ps.size(); ++k) explicit_pr[pd[k]] = ps[k];
    }
    // Operands from the equation: the first is the output.
    const std::string eq = y.as<std::string>(y.need(L, "equation", "O[..]+=W[..]*I[..]"), "an equation");
    std::vector<std::pair<std::string, std::vector<std::string>>> operands;
    for (std::size_t i = 0; i < eq.size();) {
      if (std::isalpha(static_cast<unsigned char>(eq[i])) && i + 1 < eq.size() && eq[i + 1] == '[') {
        std::pair<std::string, std::vector<std::string>> op{std::string(1, eq[i]), {}};
        ++i;
        while (i < eq.size() && eq[i] == '[') {
          const auto close = eq.find(']', i);
          // Without it the scan would restart at 0 (npos + 1) and never end.
          if (close == std::string::npos) y.fail(L["equation"], "'" + eq + "' has a '[' without its ']'");
          std::string idx = eq.substr(i + 1, close - i - 1);
          std::transform(idx.begin(), idx.end(), idx.begin(), ::toupper);
          op.second.push_back(idx);
          i = close + 1;
        }
        operands.push_back(op);
      } else {
        ++i;
      }
    }
    if (operands.size() < 2) y.fail(L["equation"], "cannot read the operands of '" + eq + "'");
    const YAML::Node prec = y.need(L, "operand_precision", "bits per operand: W, I, O, O_final");
    auto precision = [&](const std::string& op) -> std::int64_t {
      if (!prec[op]) y.fail(prec, "missing the precision of operand " + op);
      const auto bits = y.as<std::int64_t>(prec[op], "an integer number of bits");
      // W may be 0 bits: ZigZag's pooling "weights", never stored or moved. Everything else is data.
      const std::int64_t least = op == "W" ? 0 : 1;
      if (bits < least || bits > 64) {
        y.fail(prec[op], "the precision of operand " + op + " must be " + std::to_string(least) + " to 64 bits, got " +
                             std::to_string(bits));
      }
      return bits;
    };
    std::map<std::string, std::int64_t> source;
    std::vector<std::string> after;  // the layers this one reads from, in operand_source order
    if (const YAML::Node src = L["operand_source"]) {
      for (const auto& kv : src) {
        const auto from = y.as<std::int64_t>(kv.second, "a layer id");
        source[kv.first.as<std::string>()] = from;
        if (from == id) continue;
        if (!name_of_id.contains(from)) y.fail(kv.second, "layer id " + std::to_string(from) + " is not an earlier layer");
        if (std::find(after.begin(), after.end(), name_of_id[from]) == after.end()) after.push_back(name_of_id[from]);
      }
    }
    const std::map<std::string, std::string> slot{{"O", "O"}, {"W", "I2"}, {"I", "I1"}};
    std::string kind = "elementwise";
    if (type == "Conv" || type == "Conv_downsample") kind = "conv";
    else if (type == "Gemm") kind = "gemm";
    else if (type == "MatMul") kind = "matmul";
    else if (type == "Pooling" || type == "MaxPool" || type == "AveragePool" || type == "GlobalAveragePool" || type == "Pool" || type == "Max") kind = "pooling";
    std::vector<std::string> outs;
    std::vector<std::string> ins;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      const auto& [op, idx] = operands[k];
      if (!slot.contains(op)) y.fail(L["equation"], "operand '" + op + "' is not O, W or I");
      Shape shape;
      std::vector<std::string> index;
      for (const std::string& i : idx) {
        if (size_of.contains(i)) {
          shape.push_back(size_of[i]);
          index.push_back(i);
        } else if (relations.contains(i)) {
          const auto& t = relations[i];
          std::int64_t extent = pr_size(size_of[t[0].dim], t[0].coeff, size_of[t[1].dim], t[1].coeff);
          auto pad = padding.contains(i) ? padding[i] : std::pair<std::int64_t, std::int64_t>{0, 0};
          if (explicit_pr.contains(i)) {
            extent = explicit_pr[i];
          } else {
            extent -= pad.first + pad.second;
          }
          shape.push_back(extent);
          std::string e = std::to_string(t[0].coeff) + "*" + t[0].dim + " + " + std::to_string(t[1].coeff) + "*" + t[1].dim;
          if (pad.first) e += " - " + std::to_string(pad.first);
          index.push_back(e);
        } else {
          y.fail(L["equation"], "index '" + i + "' is neither a loop dimension nor defined by a dimension relation");
        }
      }
      const std::string tensor = name + "." + op;
      if (k == 0) {
        outs.push_back("{ tensor = " + q(tensor) + ", shape = " + to_string(ParamValue(shape)) + ", index = " +
                       to_string(ParamValue(index)) + ", precision_bits = " + std::to_string(precision("O_final")) +
                       ", partial_sum_bits = " + std::to_string(precision("O")) + " }");
        continue;
      }
      // Weights read from the layer itself (a constant operand) are stored tensors; everything else is an input.
      const bool constant = op == "W" && source.contains(op) && source[op] == id;
      tensors << (constant ? "\n[[tensors]]\nname = " : "\n[[inputs]]\nname = ") << q(tensor)
              << "\nshape = " << to_string(ParamValue(shape)) << "\ndtype = \"int8\"\n";
      ins.push_back("{ tensor = " + q(tensor) + ", index = " + to_string(ParamValue(index)) + ", slot = " +
                    q(slot.at(op)) + ", precision_bits = " + std::to_string(precision(op)) + " }");
    }
    body << "\n[[layers]]\nname = " << q(name) << "\nop = \"loopnest\"\nkind = " << q(kind) << "\ntype = " << q(type)
         << "\ndims = " << to_string(ParamValue(dims)) << "\nsizes = " << to_string(ParamValue(sizes))
         << "\noutputs = [" << outs[0] << "]\ninputs = [\n  " << join(ins, ",\n  ") << ",\n]\n";
    if (!after.empty()) body << "after = " << to_string(ParamValue(after)) << "\n";
    name_of_id[id] = name;
  }
  return out.str() + tensors.str() + body.str();
}

std::string zigzag_mapping_to_toml(const fs::path& mapping) {
  return located_yaml_errors(mapping, [&] { return zigzag_mapping_body(mapping); });
}

std::string zigzag_core_to_toml(const fs::path& hardware, const std::optional<fs::path>& mapping,
                                const std::string& cost_model, const std::optional<std::string>& rename) {
  return located_yaml_errors(hardware, [&] { return zigzag_core_body(hardware, mapping, cost_model, rename); });
}

std::string zigzag_workload_to_toml(const fs::path& layers) {
  return located_yaml_errors(layers, [&] { return zigzag_workload_body(layers); });
}

}  // namespace monet::cli
