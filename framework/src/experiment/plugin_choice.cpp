// The plugins an experiment chooses: a section's plugin with its parameters checked against the plugin's
// declaration (choose, choose_optional), and every core's cost model with its layered parameters.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "experiment_readers.hpp"
#include "monet/config/params_toml.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

bool from_command_line(const toml::node& n) {
  const auto& path = n.source().path;
  return path && path->rfind("--set ", 0) == 0;
}

}  // namespace

namespace detail {

/// Reads the plugin parameters of a section and checks that nothing else is in it. `plugin` and the
/// `kernel_keys` (the workload's `file`) belong to the kernel, not to the plugin.
PluginChoice choose(TableReader& t, PluginKind kind, const std::string& default_name, const Registry& registry,
                    const std::vector<std::string>& kernel_keys) {
  PluginChoice c;
  const std::string name = t.string("plugin", "the name of a " + to_string(kind) + " plugin").value_or(default_name);
  c.where = t.has("plugin") ? t.where("plugin") : t.where();
  c.plugin = &registry.require(kind, name, c.where);
  std::vector<ParamSpec> specs;
  for (const ParamSpec& s : c.plugin->info.params) {
    if (s.name != "plugin" && std::find(kernel_keys.begin(), kernel_keys.end(), s.name) == kernel_keys.end()) specs.push_back(s);
  }
  if (replaced_plugins.contains(t.path())) {
    std::vector<std::string> dropped;
    for (const std::string& k : t.keys()) {
      const bool declared = std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& p) { return p.name == k; });
      const bool extra = std::find(kernel_keys.begin(), kernel_keys.end(), k) != kernel_keys.end();
      if (k == "plugin" || declared || extra || from_command_line(*t.raw().get(k))) continue;
      t.mark_used(k);
      dropped.push_back(k);
    }
    if (!dropped.empty()) {
      // Once per process: every point of a search reloads the experiment with its genes.
      static std::mutex said_lock;
      static std::set<std::string> said;
      const std::string note = "[" + t.path() + "]: " + join(dropped) + " of the replaced plugin do(es) not apply to '" + name + "'";
      const std::lock_guard<std::mutex> lock(said_lock);
      if (said.insert(note).second) spdlog::info("{}", note);
    }
  }
  c.params = read_params(t, specs);
  for (const std::string& k : kernel_keys) t.mark_used(k);
  t.finish();
  return c;
}

/// A section that may be absent: the plugin's defaults then apply.
PluginChoice choose_optional(TableReader& root, const std::string& section, PluginKind kind,
                             const std::string& default_name, const Registry& registry) {
  if (auto t = root.table(section)) return choose(*t, kind, default_name, registry);
  PluginChoice c;
  c.where = SourceLocation{root.file()};
  c.plugin = &registry.require(kind, default_name, c.where);
  c.params = default_params(c.plugin->info.params, root.file() + ": [" + section + "]");
  return c;
}

}  // namespace detail

namespace {
/// layered_params, a missing required parameter being an error at `where` (the key that chose the model).
ParamValues located_params(const std::vector<ParamSpec>& specs, const std::vector<const ParamValues*>& layers,
                           const SourceLocation& where, const std::string& context) {
  try {
    return layered_params(specs, layers, context);
  } catch (const UserError& e) {
    if (e.where().known()) throw;
    throw UserError(where, e.message());
  }
}
}  // namespace

ParamValues core_cost_model_params(const Core& core, const PluginHandle& model, const ParamValues* overrides) {
  const TomlDocument& doc = *core.cost_model_params;
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto t = root.required_table("cost_model_params");
  const ParamValues own = read_set_params(t, model.info.params);
  t.finish();
  return located_params(model.info.params, {&own, overrides}, t.where(), "[cost_model_params]");
}

namespace detail {

/// [cost_model] (plugin = ... and its parameters) and [cost_model.NAME] sections: the keys they set, by model.
/// Each core's model gets its core file's [cost_model_params] (when the model is the core's own), overridden key
/// by key by these, then the plugin's defaults.
void read_cost_models(TableReader& root, Experiment& e, const Registry& registry) {
  const Accelerator& acc = *e.accelerator;
  std::optional<TableReader> t = root.table("cost_model");
  std::string override_name;
  if (t) {
    std::vector<std::string> subtables;
    for (const std::string& k : t->keys()) {
      if (t->raw().get(k)->is_table()) subtables.push_back(k);
    }
    for (const std::string& k : subtables) t->mark_used(k);
    if (auto name = t->string("plugin", "the name of a cost_model plugin")) {
      PluginChoice c;
      c.where = t->where("plugin");
      c.plugin = &registry.require(PluginKind::cost_model, *name, c.where);
      c.params = read_set_params(*t, c.info().params);
      t->finish();
      override_name = *name;
      e.cost_model_overridden = true;
      e.cost_model_settings[override_name] = std::move(c);
    } else {
      t->finish();
    }
    for (const std::string& name : subtables) {
      auto sub = t->table(name);
      const PluginHandle& h = registry.require(PluginKind::cost_model, name, sub->where());
      if (name == override_name) {
        sub->fail_table("the parameters of the overriding cost model go directly in [cost_model]");
      }
      PluginChoice c;
      c.plugin = &h;
      c.where = sub->where();
      c.params = read_set_params(*sub, h.info.params);
      sub->finish();
      e.cost_model_settings[name] = std::move(c);
    }
  }
  for (const CoreInstance& core : acc.cores) {
    const std::string& name = e.cost_model_overridden ? override_name : core.core->cost_model;
    auto set = e.cost_model_settings.find(name);
    const ParamValues* overrides = set == e.cost_model_settings.end() ? nullptr : &set->second.params;
    PluginChoice c;
    c.where = set == e.cost_model_settings.end() ? core.core->cost_model_origin : set->second.where;
    c.plugin = &registry.require(PluginKind::cost_model, name, c.where);
    // A core with its own [cost_model_params] (a measured core's table) gets its own model instance.
    if (core.core->cost_model_params && name == core.core->cost_model) {
      const std::string key = name + "@" + core.core->file;
      e.core_cost_model.push_back(key);
      if (e.cost_models.contains(key)) continue;
      c.params = core_cost_model_params(*core.core, *c.plugin, overrides);
      e.cost_models[key] = std::move(c);
      continue;
    }
    e.core_cost_model.push_back(name);
    if (e.cost_models.contains(name)) continue;
    c.params = located_params(c.info().params, {overrides}, c.where,
                              "cost model '" + name + "' of core '" + core.name + "' (set it in [cost_model" +
                                  (e.cost_model_overridden ? "" : "." + name) + "] of " + root.file() + ")");
    e.cost_models[name] = std::move(c);
  }
}

}  // namespace detail

}  // namespace monet
