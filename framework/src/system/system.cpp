#include "monet/system/system.hpp"

#include "monet/config/toml_reader.hpp"

namespace monet {
namespace {

// `joins`: the chips (or nodes) the tier joins, which a torus's dimensions must multiply to.
Fabric read_fabric(TableReader t, std::int64_t joins, const std::string& joined) {
  Fabric f;
  f.where = t.where();
  f.name = t.required_string("name");
  // A ring collective uses each chip's link to its two neighbours only, so it costs the same on a ring as
  // on a switch with the same bandwidth per chip; a torus runs its own algorithm (torus.hpp).
  f.topology = t.choice("topology", {"switch", "ring", "torus"}).value_or("switch");
  if (f.topology == "torus") {
    if (!t.has("torus")) t.fail_missing("torus", "a list of the chips along each dimension, x first (topology = \"torus\")");
    f.torus = *t.integer_list("torus", Bounds::at_least(2));
    f.torus_where = t.where("torus");
    if (f.torus.empty() || f.torus.size() > 3) t.fail("torus", "expected 1 to 3 dimensions");
    std::int64_t product = 1;
    for (const std::int64_t n : f.torus) product *= n;
    if (product != joins) {
      t.fail("torus", "the dimensions multiply to " + std::to_string(product) + " but the tier joins " +
                          std::to_string(joins) + " " + joined);
    }
  } else if (t.has("torus")) {
    t.fail("torus", "dimensions are for topology = \"torus\"");
  }
  f.bandwidth_bytes_per_s = t.required_number("bandwidth_bytes_per_s", Bounds::positive());
  f.latency_s = t.required_number("latency_s", Bounds::at_least(0));
  f.efficiency = t.number("efficiency", Bounds::fraction()).value_or(1.0);
  f.energy_pj_per_bit = t.required_number("energy_pj_per_bit", Bounds::at_least(0));
  f.compute_share = t.number("compute_share", Bounds{0.0, 1.0, false, true}).value_or(0.0);
  t.finish();
  return f;
}

}  // namespace

System read_system(const std::filesystem::path& file, const std::vector<SystemChange>& changes) {
  TomlDocument doc = TomlDocument::parse_file(file);
  for (const SystemChange& c : changes) {
    // Into [system], creating tables on the way; the value keeps its own place for the reader's messages.
    toml::table* table = doc.root().get_as<toml::table>("system");
    if (table == nullptr) break;  // the reader below reports the missing table
    std::vector<std::string> parts(1);
    for (char ch : c.path) {
      if (ch == '.') parts.emplace_back();
      else parts.back().push_back(ch);
    }
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].empty()) throw UserError(c.where, "empty segment in the path '" + c.path + "'");
      if (!table->contains(parts[i])) table->insert(parts[i], toml::table{});
      toml::node* n = table->get(parts[i]);
      if (!n->is_table()) throw UserError(c.where, "system." + parts[i] + " is not a table");
      table = n->as_table();
    }
    if (parts.back().empty()) throw UserError(c.where, "empty segment in the path '" + c.path + "'");
    table->insert_or_assign(parts.back(), std::move(*located_value(c.value, c.where)));
  }
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  TableReader t = root.required_table("system");
  System s;
  s.file = file;
  s.where = t.where();
  s.name = t.required_string("name");
  s.chip = t.required_path("chip");
  s.chips_per_node = t.required_integer("chips_per_node", Bounds::at_least(1));
  s.nodes = t.required_integer("nodes", Bounds::at_least(1));
  s.all_reduce = t.choice("all_reduce", {"ring", "tree", "fastest"}).value_or("ring");
  s.rings = t.choice("rings", {"hierarchical", "flat"}).value_or("hierarchical");
  const bool intra = t.has("intra_node"), inter = t.has("inter_node");
  if (s.chips_per_node > 1) {
    if (!intra) t.fail_missing("intra_node", "a table (the fabric joining the chips of a node)");
    s.intra_node = read_fabric(t.required_table("intra_node"), s.chips_per_node, "chips (chips_per_node)");
  } else if (intra) {
    t.fail("intra_node", "a node of one chip has no intra-node fabric (chips_per_node = 1)");
  }
  if (s.nodes > 1) {
    if (!inter) t.fail_missing("inter_node", "a table (the network joining the nodes)");
    s.inter_node = read_fabric(t.required_table("inter_node"), s.nodes, "nodes");
    if (s.inter_node.topology == "torus" && s.chips_per_node > 1) {
      // Which chip of a node owns which network link is not described; a slice joined by its torus is one node.
      throw UserError(s.inter_node.torus_where,
                      "a torus between nodes of several chips is not modelled: make the torus the intra_node tier "
                      "(chips_per_node = the torus's chips) or use nodes of one chip");
    }
  } else if (inter) {
    t.fail("inter_node", "a system of one node has no inter-node network (nodes = 1)");
  }
  t.finish();
  root.finish();
  return s;
}

}  // namespace monet
