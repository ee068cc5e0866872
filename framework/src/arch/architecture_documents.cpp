#include "monet/arch/architecture_documents.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "monet/config/toml_paths.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

namespace {

/// Keys a [[cores]] / [[core_arrays]] entry owns; any other key below an entry belongs to its core file.
const std::vector<std::string> kCoreKeys{"name", "file"};
const std::vector<std::string> kArrayKeys{"name", "file", "x", "y", "topology", "link_bandwidth_bits_per_cycle",
                                          "link_energy_pj_per_bit"};

/// Expands core-name globs ("pe_*") of a link's endpoints.
std::vector<std::string> expand_endpoints(const std::vector<std::string>& patterns, const std::vector<std::string>& names,
                                          TableReader& l) {
  std::vector<std::string> out;
  for (const std::string& p : patterns) {
    if (!is_glob(p)) {
      out.push_back(p);
      continue;
    }
    bool any = false;
    for (const std::string& n : names) {
      if (glob_match(p, n)) {
        out.push_back(n);
        any = true;
      }
    }
    if (!any) l.fail("endpoints", "the pattern '" + p + "' matches no core; endpoints: " + join(names));
  }
  return out;
}

/// A core file used by several accelerator entries is read once: entries share the parsed document.
std::shared_ptr<const TomlDocument> read_shared(const fs::path& path, std::map<fs::path, std::shared_ptr<const TomlDocument>>& cache) {
  const fs::path key = fs::weakly_canonical(path);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, std::make_shared<const TomlDocument>(TomlDocument::parse_file(path))).first;
  return it->second;
}

/// A core whose top level is the off-chip memory (ZigZag-style cores) describes the same memory as [offchip]:
/// one memory, one set of numbers.
void check_offchip_levels(const Accelerator& acc) {
  const OffChipMemory& off = acc.offchip;
  auto differs = [](double a, double b) { return std::abs(a - b) > 1e-9 * std::max(std::abs(a), std::abs(b)); };
  std::set<const Core*> seen;
  for (const CoreInstance& ci : acc.cores) {
    if (!seen.insert(ci.core.get()).second) continue;
    for (const MemoryLevel& m : ci.core->memories) {
      if (!m.offchip) continue;
      std::string what;
      if (m.size_bits != off.size_bits) {
        what = "size_bits " + std::to_string(m.size_bits) + " but [offchip] has " + std::to_string(off.size_bits);
      } else if (m.read_energy_origin != ValueOrigin::pending &&  // pending: take_offchip_energies() sets it
                 differs(m.read_energy_per_bit(), off.read_energy_pj_per_bit)) {
        what = "a read energy of " + format_number(m.read_energy_per_bit()) + " pJ/bit but [offchip] has " +
               format_number(off.read_energy_pj_per_bit);
      } else if (m.write_energy_origin != ValueOrigin::pending &&
                 differs(m.write_energy_per_bit(), off.write_energy_pj_per_bit)) {
        what = "a write energy of " + format_number(m.write_energy_per_bit()) + " pJ/bit but [offchip] has " +
               format_number(off.write_energy_pj_per_bit);
      }
      if (!what.empty()) {
        throw UserError(m.origin, "memory '" + m.name + "' of core '" + ci.core->name +
                                      "' is the off-chip memory (offchip = true) and has " + what + " (" +
                                      off.origin.str() + "): one memory has one set of numbers");
      }
    }
  }
}

/// Off-chip levels of cores that leave their energies to an estimator take [offchip]'s: within an accelerator the
/// off-chip memory is the accelerator's, with one set of numbers.
void take_offchip_energies(Accelerator& acc) {
  std::map<const Core*, CorePtr> done;
  for (CoreInstance& ci : acc.cores) {
    auto it = done.find(ci.core.get());
    if (it == done.end()) {
      auto core = std::make_shared<Core>(*ci.core);
      bool changed = false;
      for (MemoryLevel& m : core->memories) {
        if (!m.offchip) continue;
        if (m.read_energy_origin == ValueOrigin::pending) {
          m.read_energy_pj = acc.offchip.read_energy_pj_per_bit * static_cast<double>(m.read_word_bits());
          m.read_energy_origin = ValueOrigin::pinned;
          changed = true;
        }
        if (m.write_energy_origin == ValueOrigin::pending) {
          m.write_energy_pj = acc.offchip.write_energy_pj_per_bit * static_cast<double>(m.write_word_bits());
          m.write_energy_origin = ValueOrigin::pinned;
          changed = true;
        }
      }
      it = done.emplace(ci.core.get(), changed ? CorePtr(core) : ci.core).first;
    }
    ci.core = it->second;
  }
}

}  // namespace

ArchitectureDocuments ArchitectureDocuments::read(const fs::path& file) {
  ArchitectureDocuments d;
  d.file_ = file;
  d.doc_ = Edited(std::make_shared<const TomlDocument>(TomlDocument::parse_file(file)));
  const TomlDocument& doc = d.doc_.get();
  std::map<fs::path, std::shared_ptr<const TomlDocument>> cache;
  for (const char* table : {"cores", "core_arrays"}) {
    const toml::array* arr = doc.root().get(table) ? doc.root().get(table)->as_array() : nullptr;
    if (!arr) continue;  // build() reports a malformed accelerator
    for (const toml::node& n : *arr) {
      const toml::table* t = n.as_table();
      if (!t) continue;
      Entry e{table, toml_entry_name(*t), Edited{}};
      const toml::node* f = t->get("file");
      if (f && f->is_string()) {
        const fs::path path = doc.base_dir() / f->as_string()->get();
        std::error_code ec;
        if (fs::is_regular_file(path, ec)) e.core = Edited(read_shared(path, cache));
      }
      d.entries_.push_back(std::move(e));
    }
  }
  return d;
}

ArchitectureDocuments::Edited::Edited(std::shared_ptr<const TomlDocument> original)
    : original_(std::move(original)), result_(original_) {}

const TomlDocument& ArchitectureDocuments::Edited::get() const {
  if (!result_) {
    auto doc = std::make_shared<TomlDocument>(original_->clone());
    for (const Change& c : changes_) {
      if (c.value) {
        set_toml_path(doc->root(), c.segments, *c.value, c.where);
      } else {
        unset_toml_path(doc->root(), c.segments, c.where);
      }
    }
    result_ = std::move(doc);
  }
  return *result_;
}

void ArchitectureDocuments::Edited::apply(Change c) {
  // Applied at once, so that a path that does not fit is reported where it was written.
  changes_.push_back(std::move(c));
  result_ = nullptr;
  try {
    (void)get();
  } catch (...) {
    changes_.pop_back();
    result_ = nullptr;
    throw;
  }
}

void ArchitectureDocuments::Edited::set(const std::vector<std::string>& segments, const toml::node& value,
                                        const SourceLocation& where) {
  SourceLocation at = location_of(value, where.file);
  if (at.line == 0) at = where;
  apply(Change{segments, std::shared_ptr<const toml::node>(located_value(toml_text(value), at)), where});
}

void ArchitectureDocuments::Edited::unset(const std::vector<std::string>& segments, const SourceLocation& where) {
  apply(Change{segments, nullptr, where});
}

void ArchitectureDocuments::read_core(Entry& e, const toml::table& entry, const SourceLocation& where) {
  const toml::node* f = entry.get("file");
  if (!f || !f->is_string()) throw UserError(where, "the [[" + e.table + "]] entry '" + e.name + "' names no core file");
  const fs::path path = doc_.get().base_dir() / f->as_string()->get();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw UserError(location_of(*f, doc_.get().file()), "core file not found: " + path.string());
  e.core = Edited(std::make_shared<const TomlDocument>(TomlDocument::parse_file(path)));
}

namespace {
/// A path below a [[cores]] / [[core_arrays]] entry that names a key of its core file (not of the entry).
bool into_core_file(const std::vector<std::string>& segments, const SourceLocation& where) {
  const std::string& head = segments.front();
  if ((head != "cores" && head != "core_arrays") || segments.size() < 3) return false;
  const std::vector<std::string>& own = head == "cores" ? kCoreKeys : kArrayKeys;
  return std::find(own.begin(), own.end(), toml_path_subscript(segments[2], where).first) == own.end();
}
}  // namespace

void ArchitectureDocuments::set(std::string_view path, const toml::node& value, const SourceLocation& where) {
  const std::vector<std::string> segments = split_toml_path(path, where);
  const std::string& head = segments.front();
  if (into_core_file(segments, where)) {
    // Into the core files of the selected entries only (each entry keeps its own list of changes).
    std::vector<Entry*> chosen;
    std::vector<std::string> names;
    for (Entry& e : entries_) {
      if (e.table != head) continue;
      names.push_back(e.name);
      if (segments[1] == "*" || e.name == segments[1]) chosen.push_back(&e);
    }
    if (chosen.empty()) {
      throw UserError(where, "no [[" + head + "]] entry named '" + segments[1] + "'" + did_you_mean(segments[1], names) +
                                 "; entries: " + join(names));
    }
    const std::vector<std::string> rest(segments.begin() + 2, segments.end());
    for (Entry* e : chosen) {
      if (e->core.empty()) throw UserError(where, "the [[" + head + "]] entry '" + e->name + "' has no readable core file");
      e->core.set(rest, value, where);
    }
    return;
  }
  doc_.set(segments, value, where);
  if ((head == "cores" || head == "core_arrays") && segments.size() == 3 && segments[2] == "file") {
    // A new core file for the selected entries (changes made to the old one are dropped).
    const toml::array* arr = doc_.get().root().get(head)->as_array();
    std::size_t k = 0;
    for (Entry& e : entries_) {
      if (e.table != head) continue;
      const toml::table* t = (*arr)[k++].as_table();
      if (t && (segments[1] == "*" || e.name == segments[1])) read_core(e, *t, where);
    }
  }
}

std::optional<std::string> ArchitectureDocuments::value_text(std::string_view path) const {
  const SourceLocation nowhere{"<value_text>"};
  try {
    const std::vector<std::string> segments = split_toml_path(path, nowhere);
    // The same path logic as set(): both agree on what a path names.
    if (into_core_file(segments, nowhere)) {
      for (const Entry& e : entries_) {
        if (e.table != segments.front() || !(segments[1] == "*" || e.name == segments[1]) || e.core.empty()) continue;
        return toml_path_text(e.core.get(), std::vector<std::string>(segments.begin() + 2, segments.end()));
      }
      return std::nullopt;
    }
    return toml_path_text(doc_.get(), segments);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

void ArchitectureDocuments::unset(std::string_view path, const SourceLocation& where) {
  const std::vector<std::string> segments = split_toml_path(path, where);
  if (into_core_file(segments, where)) {
    const std::vector<std::string> rest(segments.begin() + 2, segments.end());
    bool any = false;
    for (Entry& e : entries_) {
      if (e.table != segments.front() || !(segments[1] == "*" || e.name == segments[1]) || e.core.empty()) continue;
      e.core.unset(rest, where);
      any = true;
    }
    if (!any) throw UserError(where, "no [[" + segments.front() + "]] entry named '" + segments[1] + "'");
    return;
  }
  doc_.unset(segments, where);
}

bool ArchitectureDocuments::has_top_level(std::string_view key) const { return doc_.get().root().contains(key); }

AcceleratorPtr ArchitectureDocuments::build() const {
  const TomlDocument& doc = doc_.get();
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto acc = std::make_shared<Accelerator>();
  acc->file = file_.string();

  TableReader head = root.required_table("accelerator");
  acc->name = head.required_string("name");
  acc->frequency_hz = head.number("frequency_hz", Bounds::positive()).value_or(0.0);
  acc->idle_power_w = head.number("idle_power_w", Bounds::non_negative()).value_or(0.0);
  if (acc->idle_power_w > 0 && acc->frequency_hz == 0) {
    throw UserError(head.where("idle_power_w"), "accelerator.idle_power_w: needs accelerator.frequency_hz: the idle "
                                                "power is charged over the schedule's time, and cycles are seconds "
                                                "only at a frequency");
  }
  head.finish();

  // Cores: each entry refers to a core file; entries sharing a document share the core.
  std::map<const TomlDocument*, CorePtr> built;
  auto core_of = [&](std::size_t k, const std::string& name, TableReader& t) -> CorePtr {
    const fs::path path = t.required_path("file");  // located errors for a missing or unreadable file
    if (k >= entries_.size() || entries_[k].name != name || entries_[k].core.empty()) {
      return core_from_document(TomlDocument::parse_file(path));  // an entry an override added
    }
    const TomlDocument& core = entries_[k].core.get();
    auto it = built.find(&core);
    if (it == built.end()) it = built.emplace(&core, core_from_document(core)).first;
    return it->second;
  };
  auto add_instance = [&](const std::string& name, CorePtr core, const SourceLocation& origin, TableReader& t) {
    if (acc->core_index(name) >= 0) t.fail("name", "core '" + name + "' is defined twice");
    CoreInstance inst;
    inst.id = static_cast<int>(acc->cores.size());
    inst.name = name;
    inst.core = std::move(core);
    inst.origin = origin;
    acc->cores.push_back(std::move(inst));
  };
  std::size_t entry = 0;
  auto cores = root.table_array("cores");
  for (TableReader& c : cores) {
    const std::string name = c.required_string("name");
    add_instance(name, core_of(entry++, name, c), c.where(), c);
    c.finish();
  }
  struct ArrayLinks {
    std::vector<int> ids;
    std::int64_t x = 1, y = 1;
    std::string topology;
    double bandwidth = 0, energy = 0;
    SourceLocation origin;
  };
  std::vector<ArrayLinks> generated;
  for (TableReader& a : root.table_array("core_arrays")) {
    const std::string name = a.required_string("name");
    const CorePtr core = core_of(entry++, name, a);
    ArrayLinks g;
    g.origin = a.where();
    g.x = a.required_integer("x", Bounds{1, 1024});
    g.y = a.integer("y", Bounds{1, 1024}).value_or(1);
    g.topology = a.choice("topology", {"mesh", "ring", "none"}).value_or("mesh");
    if (g.topology != "none" && g.x * g.y > 1) {
      g.bandwidth = a.required_number("link_bandwidth_bits_per_cycle", Bounds::positive());
      g.energy = a.required_number("link_energy_pj_per_bit", Bounds::non_negative());
    } else {
      a.mark_used("link_bandwidth_bits_per_cycle");
      a.mark_used("link_energy_pj_per_bit");
    }
    for (std::int64_t i = 0; i < g.x; ++i) {
      for (std::int64_t j = 0; j < g.y; ++j) {
        g.ids.push_back(static_cast<int>(acc->cores.size()));
        add_instance(name + "_" + std::to_string(i) + "_" + std::to_string(j), core, a.where(), a);
      }
    }
    a.finish();
    generated.push_back(std::move(g));
  }
  if (acc->cores.empty()) root.fail_table("an accelerator needs at least one [[cores]] or [[core_arrays]] entry");

  TableReader off = root.required_table("offchip");
  acc->offchip.name = off.string("name").value_or("dram");
  if (acc->core_index(acc->offchip.name) >= 0) off.fail("name", "'" + acc->offchip.name + "' is also a core name");
  acc->offchip.size_bits = off.required_integer("size_bits", Bounds::positive());
  acc->offchip.read_energy_pj_per_bit = off.required_number("read_energy_pj_per_bit", Bounds::non_negative());
  acc->offchip.write_energy_pj_per_bit = off.required_number("write_energy_pj_per_bit", Bounds::non_negative());
  acc->offchip.bandwidth_bits_per_cycle = off.required_number("bandwidth_bits_per_cycle", Bounds::positive());
  acc->offchip.ports = static_cast<int>(off.integer("ports", Bounds::at_least(1)).value_or(1));
  acc->offchip.origin = off.where();
  off.finish();
  check_offchip_levels(*acc);
  take_offchip_energies(*acc);

  // Links between the cores of an array: neighbours in x and y (mesh), or one ring through them in order.
  for (const ArrayLinks& g : generated) {
    if (g.topology == "none" || g.ids.size() < 2) continue;
    auto id = [&](std::int64_t i, std::int64_t j) { return g.ids[static_cast<std::size_t>(i * g.y + j)]; };
    auto add = [&](int a, int b) {
      Link l;
      l.name = acc->cores[static_cast<std::size_t>(a)].name + "-" + acc->cores[static_cast<std::size_t>(b)].name;
      l.endpoints = {a, b};
      l.bandwidth_bits_per_cycle = g.bandwidth;
      l.energy_pj_per_bit = g.energy;
      l.origin = g.origin;
      acc->links.push_back(std::move(l));
    };
    if (g.topology == "mesh") {
      for (std::int64_t i = 0; i < g.x; ++i) {
        for (std::int64_t j = 0; j < g.y; ++j) {
          if (i + 1 < g.x) add(id(i, j), id(i + 1, j));
          if (j + 1 < g.y) add(id(i, j), id(i, j + 1));
        }
      }
    } else {  // ring
      for (std::size_t k = 0; k < g.ids.size(); ++k) {
        if (g.ids.size() == 2 && k == 1) break;
        add(g.ids[k], g.ids[(k + 1) % g.ids.size()]);
      }
    }
  }

  std::vector<std::string> endpoint_names = acc->core_names();
  endpoint_names.push_back(acc->offchip.name);
  auto links = root.table_array("links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    TableReader& l = links[i];
    Link link;
    link.origin = l.where();
    link.name = l.string("name").value_or("link" + std::to_string(i));
    const std::string kind = l.choice("kind", {"point_to_point", "bus"}).value_or("point_to_point");
    link.kind = kind == "bus" ? LinkKind::bus : LinkKind::point_to_point;
    auto ends = l.string_list("endpoints");
    if (!ends) l.fail_table("missing required key 'endpoints' (names of cores, or '" + acc->offchip.name + "')");
    for (const std::string& e : expand_endpoints(*ends, endpoint_names, l)) {
      int id = e == acc->offchip.name ? Accelerator::kOffChip : acc->core_index(e);
      if (e != acc->offchip.name && id < 0) {
        l.fail("endpoints", "'" + e + "' is neither a core nor the off-chip memory" + did_you_mean(e, endpoint_names));
      }
      if (std::find(link.endpoints.begin(), link.endpoints.end(), id) != link.endpoints.end()) {
        l.fail("endpoints", "'" + e + "' is listed twice");
      }
      link.endpoints.push_back(id);
    }
    if (link.kind == LinkKind::point_to_point && link.endpoints.size() != 2) {
      l.fail("endpoints", "a point_to_point link joins exactly 2 endpoints, got " + std::to_string(link.endpoints.size()));
    }
    if (link.kind == LinkKind::bus && link.endpoints.size() < 2) {
      l.fail("endpoints", "a bus joins at least 2 endpoints");
    }
    link.bandwidth_bits_per_cycle = l.required_number("bandwidth_bits_per_cycle", Bounds::positive());
    link.energy_pj_per_bit = l.number("energy_pj_per_bit", Bounds::non_negative()).value_or(0.0);
    link.offchip_only = l.boolean("offchip_only").value_or(false);
    if (link.offchip_only &&
        std::find(link.endpoints.begin(), link.endpoints.end(), Accelerator::kOffChip) == link.endpoints.end()) {
      l.fail("offchip_only", "a link that carries only off-chip traffic needs '" + acc->offchip.name + "' among its endpoints");
    }
    l.finish();
    acc->links.push_back(std::move(link));
  }
  root.finish();

  for (const CoreInstance& c : acc->cores) {
    if (!acc->link_between(c.id, Accelerator::kOffChip)) {
      throw UserError(c.origin, "core '" + c.name + "' has no link to the off-chip memory '" + acc->offchip.name +
                                    "': add a [[links]] entry whose endpoints include both");
    }
  }
  return acc;
}

}  // namespace monet
