// [architecture]: the accelerator file (or a system of chips and its chip) with the experiment's changes to them
// (set, unset, system_set, and --set architecture.PATH); [allocation]: which of the accelerator's cores run what.
#include <algorithm>

#include "experiment_readers.hpp"
#include "monet/arch/architecture_documents.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/config/toml_paths.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

/// Core names, or globs over them ("pe_*"), expanded.
std::vector<std::string> core_list(TableReader& t, const std::string& key, const Accelerator& acc) {
  auto names = *t.string_list(key);
  if (names.empty()) t.fail(key, "expected at least one core name; cores: " + join(acc.core_names()));
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (is_glob(n)) {
      const std::size_t before = out.size();
      for (const std::string& c : acc.core_names()) {
        if (glob_match(n, c)) out.push_back(c);
      }
      if (out.size() == before) t.fail(key, "the pattern '" + n + "' matches no core; cores: " + join(acc.core_names()));
      continue;
    }
    if (acc.core_index(n) < 0) {
      t.fail(key, "'" + n + "' is not a core of accelerator '" + acc.name + "'" + did_you_mean(n, acc.core_names()) +
                      "; cores: " + join(acc.core_names()));
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

namespace detail {

/// [architecture], read into the experiment's architecture documents and its accelerator.
void read_architecture(TableReader& root, Experiment& e, const std::vector<const Change*>& arch_changes,
                       const CompatSettings& compat, const ExperimentSource& source, const Registry& registry) {
  TableReader a = root.required_table("architecture");
  // [architecture.system_set]: changes to the system file, by path below its [system] table (a search gene or a
  // --set reaches the system's tiers this way: "intra_node.bandwidth_bytes_per_s").
  std::vector<SystemChange> system_changes;
  if (auto set = a.table("system_set")) {
    if (!a.has("system")) a.fail("system_set", "changes a system file: give [architecture] system");
    auto leaves = [&](auto&& self, const toml::table& t, const std::string& prefix) -> void {
      for (const auto& [key, node] : t) {
        const std::string path = prefix + std::string(key.str());
        if (const toml::table* inner = node.as_table()) {
          self(self, *inner, path + ".");
        } else {
          system_changes.push_back({path, toml_text(node), location_of(node, set->file())});
        }
      }
    };
    leaves(leaves, set->raw(), "");
  }
  if (auto system = a.path("system")) {
    if (a.has("file")) a.fail("file", "give `file` or `system`, not both: the system names its chip");
    e.system = read_system(*system, system_changes);
    e.system_set = std::move(system_changes);
    e.architecture_file = e.system->chip;
  } else {
    e.architecture_file = a.required_path("file");
  }
  ArchitectureDocuments docs = source.architecture(e.architecture_file);
  // Another kind of file named here by mistake: said at this key, not as a missing table of that file.
  if (!docs.has_top_level("accelerator")) {
    std::string kind;
    if (docs.has_top_level("workload") || docs.has_top_level("layers")) {
      kind = " (it is a workload: give it as [workload] file)";
    } else if (docs.has_top_level("core")) {
      kind = " (it is a core file: an accelerator lists its cores in [[cores]])";
    } else if (docs.has_top_level("system")) {
      kind = " (it is a system of chips: give it as [architecture] system)";
    } else if (docs.has_top_level("experiment")) {
      kind = " (it is an experiment)";
    }
    a.fail(e.system ? "system" : "file", (e.system ? "the system's chip '" : "'") + e.architecture_file.string() +
                                              "' is not an accelerator file: it has no [accelerator] table" + kind);
  }
  if (a.has("unset")) {
    const std::vector<std::string> paths = *a.string_list("unset");
    for (const std::string& path : paths) {
      docs.unset(path, a.where("unset"));
      e.architecture_unset.push_back(path);
    }
  }
  // A path set twice (the file's [architecture.set], then a --set) is recorded once, with the value that won:
  // resolved.toml writes these as one table, where a key given twice would not parse.
  auto record = [&](const std::string& path, std::string value) {
    std::erase_if(e.architecture_set, [&](const auto& kv) { return kv.first == path; });
    e.architecture_set.emplace_back(path, std::move(value));
  };
  if (auto set = a.table("set")) {  // changes to the accelerator file, by path ("links.*.energy_pj_per_bit" = 0.0)
    for_each_set_path(*set, [&](const std::string& path, const toml::node& value, const SourceLocation& where) {
      record(path, toml_text(value));
      docs.set(path, value, where);
    });
  }
  a.finish();
  for (const Change* c : arch_changes) {
    const std::string path = architecture_path(c->key);
    if (c->value) {
      docs.set(path, *c->value, c->where);
      record(path, toml_text(*c->value));
    } else {
      docs.unset(path, c->where);
      e.architecture_unset.push_back(path);
    }
  }
  // Stream's view of the DRAM: each core streams at the full port bandwidth however many stream at once.
  const bool ports_set = std::any_of(e.architecture_set.begin(), e.architecture_set.end(),
                                     [](const auto& kv) { return kv.first == "offchip.ports"; });
  if (compat.on("stream_dram_port_per_core") && !ports_set) {
    const auto cores = static_cast<std::int64_t>(docs.build()->cores.size());
    docs.set("offchip.ports", toml::value<std::int64_t>(cores), root.where("compat"));
    e.architecture_set.emplace_back("offchip.ports", std::to_string(cores));
  }
  e.architecture = std::make_shared<const ArchitectureDocuments>(docs);
  e.accelerator = apply_estimators(docs.build(), registry);
}

void read_allocation(TableReader& root, Experiment& e) {
  auto t = root.table("allocation");
  if (!t) return;
  const Accelerator& acc = *e.accelerator;
  if (t->has("default")) {
    e.allocation.default_rule = AllocationRule{"", core_list(*t, "default", acc), t->where("default")};
  }
  if (auto kinds = t->table("kind")) {
    for (const std::string& k : kinds->keys()) {
      if (!parse_op_kind(k)) {
        kinds->fail(k, "'" + k + "' is not an operator kind" + did_you_mean(k, all_op_kind_names()) +
                           "; kinds: " + join(all_op_kind_names()));
      }
      e.allocation.by_kind.push_back(AllocationRule{k, core_list(*kinds, k, acc), kinds->where(k)});
    }
    kinds->finish();
  }
  if (auto types = t->table("type")) {
    for (const std::string& k : types->keys()) {
      e.allocation.by_type.push_back(AllocationRule{k, core_list(*types, k, acc), types->where(k)});
    }
    types->finish();
  }
  if (auto ops = t->table("operator")) {
    for (const std::string& k : ops->keys()) {
      e.allocation.by_operator.push_back(AllocationRule{k, core_list(*ops, k, acc), ops->where(k)});
    }
    ops->finish();
  }
  if (auto groups = t->table("group")) {
    for (const std::string& k : groups->keys()) {
      std::vector<std::string> cores;
      if (groups->raw().get(k)->is_string()) {
        cores = {*groups->string(k)};
        if (acc.core_index(cores.front()) < 0) {
          groups->fail(k, "'" + cores.front() + "' is not a core of accelerator '" + acc.name + "'" +
                              did_you_mean(cores.front(), acc.core_names()) + "; cores: " + join(acc.core_names()));
        }
      } else {
        cores = core_list(*groups, k, acc);
      }
      if (cores.size() != 1) groups->fail(k, "expected one core for an operator group");
      e.allocation.by_group.push_back(AllocationRule{k, cores, groups->where(k)});
    }
    groups->finish();
  }
  t->finish();
}

}  // namespace detail

}  // namespace monet
