// [workload]: the workload file, the frontend that reads it, and the experiment's changes to the file's keys
// ([workload.set] and --set workload.set.PATH), made in memory as [architecture.set] makes its own: the frontend
// reads the changed document, whose new values keep the experiment's locations for its messages.
#include <algorithm>

#include "experiment_readers.hpp"
#include "monet/config/toml_paths.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::vector<std::string> workload_path_segments(const TomlDocument& workload, const std::string& path,
                                                const SourceLocation& where) {
  std::vector<std::string> segments = split_toml_path(path, where);
  const auto* table = workload.root().get_as<toml::table>("workload");
  if (table != nullptr && table->contains("generator")) {
    if (segments.front() == "generator") {
      throw UserError(where, "workload.set.generator: the generator is the file's (it chooses the frontend); give "
                             "another workload file");
    }
    segments.insert(segments.begin(), "workload");
  }
  return segments;
}

namespace detail {

namespace {

/// The changes made to one workload document, in order; a path given twice keeps its last value.
struct WorkloadChanges {
  TomlDocument doc;
  std::vector<std::pair<std::string, std::string>>& record;

  void set(const std::string& path, const toml::node& value, const SourceLocation& where) {
    set_toml_path(doc.root(), workload_path_segments(doc, path, where), value, where);
    std::erase_if(record, [&](const auto& kv) { return kv.first == path; });
    record.emplace_back(path, toml_text(value));
  }
};

}  // namespace

void read_workload(TableReader& root, Experiment& e, const std::vector<const Change*>& set_changes,
                   const ExperimentSource& source, const Registry& registry) {
  TableReader w = root.required_table("workload");
  e.workload_file = w.required_path("file");
  std::string name;
  if (!w.has("plugin")) {
    const PluginHandle* h = registry.frontend_for(e.workload_file);
    if (!h) {
      w.fail("file", "no workload frontend reads '" + e.workload_file.extension().string() + "' files; frontends: " +
                         registry.frontend_extensions() + "; name one with [workload] plugin = \"...\"");
    }
    name = h->info.name;
  }
  std::optional<TableReader> set = w.table("set");
  // A key of a TOML workload file written as one of [workload] (workload.vocab): say where such keys go.
  const toml::node* plugin = w.raw().get("plugin");
  const PluginHandle* h = registry.find(PluginKind::frontend, plugin && plugin->is_string() ? plugin->as_string()->get() : name);
  if (h && e.workload_file.extension() == ".toml" && !replaced_plugins.contains("workload")) {
    const auto& params = h->info.params;
    for (const std::string& k : w.keys()) {
      if (k == "file" || k == "set" || k == "plugin" ||
          std::any_of(params.begin(), params.end(), [&](const ParamSpec& p) { return p.name == k; })) {
        continue;
      }
      // Only a key the file could hold gets the hint: a generator's, or one of a layer list's own.
      std::shared_ptr<const TomlDocument> file;
      try {
        file = source.workload(e.workload_file);
      } catch (const UserError&) {
        break;  // the frontend reports what is wrong with the file
      }
      const auto* table = file->root().get_as<toml::table>("workload");
      if (!(table != nullptr && table->contains("generator")) && !file->root().contains(k)) break;
      std::vector<std::string> valid{"file", "plugin", "set"};
      for (const ParamSpec& p : params) valid.push_back(p.name);
      std::sort(valid.begin(), valid.end());
      throw UserError(w.key_location(k), "unknown key '" + w.key_name(k) + "'" + did_you_mean(k, valid) +
                                             "; valid keys here: " + join(valid, ", ") + " (with the parameters of the "
                                             "frontend '" + h->info.name + "'); a key of the workload file is changed "
                                             "by [workload.set] or --set workload.set." + k + "=...");
    }
  }
  e.frontend = choose(w, PluginKind::frontend, name, registry, {"file", "set"});
  if (!set && set_changes.empty()) return;

  // Only a TOML workload has keys to change (a model file such as ONNX has none).
  const SourceLocation first = set ? set->where() : set_changes.front()->where;
  if (e.workload_file.extension() != ".toml") {
    throw UserError(first, "workload.set: changes keys of a TOML workload file (generated, or a list of layers); '" +
                               e.workload_file.filename().string() + "' has none");
  }
  const std::shared_ptr<const TomlDocument> original = source.workload(e.workload_file);
  WorkloadChanges changes{original->clone(), e.workload_set};
  if (set) {  // by path ("layers.conv1.out_channels" = 8)
    for_each_set_path(*set, [&](const std::string& path, const toml::node& value, const SourceLocation& where) {
      changes.set(path, value, where);
    });
  }
  for (const Change* c : set_changes) {
    if (!c->value) throw UserError(c->where, "--unset cannot remove a key of the workload file; set it instead");
    changes.set(workload_set_path(c->key), *c->value, c->where);
  }
  e.workload_document = std::make_shared<const TomlDocument>(std::move(changes.doc));
}

}  // namespace detail

}  // namespace monet
