#include "monet/experiment/experiment.hpp"

#include <algorithm>
#include <set>

#include "monet/config/toml_reader.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSections{"experiment", "workload", "training", "precision", "architecture",
                                         "cost_model", "allocation", "fusion", "schedule", "search", "output", "provenance"};

/// Reads the plugin parameters of a section and checks that nothing else is in it. `plugin` and the
/// `kernel_keys` (the workload's `file`) belong to the kernel, not to the plugin.
PluginChoice choose(TableReader& t, PluginKind kind, const std::string& default_name, const Registry& registry,
                    const std::vector<std::string>& kernel_keys = {}) {
  PluginChoice c;
  const std::string name = t.string("plugin", "the name of a " + to_string(kind) + " plugin").value_or(default_name);
  c.where = t.has("plugin") ? t.where("plugin") : t.where();
  c.plugin = &registry.require(kind, name, c.where);
  std::vector<ParamSpec> specs;
  for (const ParamSpec& s : c.plugin->info.params) {
    if (s.name != "plugin" && std::find(kernel_keys.begin(), kernel_keys.end(), s.name) == kernel_keys.end()) specs.push_back(s);
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

std::vector<std::string> core_list(TableReader& t, const std::string& key, const Accelerator& acc) {
  auto names = *t.string_list(key);
  if (names.empty()) t.fail(key, "expected at least one core name; cores: " + join(acc.core_names()));
  for (const std::string& n : names) {
    if (acc.core_index(n) < 0) {
      t.fail(key, "'" + n + "' is not a core of accelerator '" + acc.name + "'" + did_you_mean(n, acc.core_names()) +
                      "; cores: " + join(acc.core_names()));
    }
  }
  return names;
}

/// [output] artifacts = ["summary", "csv", "trace", "plots"]: the summary is always written.
OutputArtifacts read_artifacts(TableReader& t, const std::vector<std::string>& names) {
  const std::vector<std::string> known{"summary", "csv", "trace", "plots"};
  OutputArtifacts a{false, false, false};
  std::set<std::string> seen;
  for (const std::string& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      t.fail("artifacts", "'" + n + "' is not an artefact" + did_you_mean(n, known) + "; artefacts: " + join(known));
    }
    if (!seen.insert(n).second) t.fail("artifacts", "'" + n + "' is listed twice");
    a.csv = a.csv || n == "csv";
    a.trace = a.trace || n == "trace";
    a.plots = a.plots || n == "plots";
  }
  return a;
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
  t->finish();
}

}  // namespace

ParamValues core_cost_model_params(const Core& core, const PluginHandle& model, const ParamValues* overrides) {
  const TomlDocument& doc = *core.cost_model_params;
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto t = root.required_table("cost_model_params");
  const ParamValues own = read_set_params(t, model.info.params);
  t.finish();
  return layered_params(model.info.params, {&own, overrides}, doc.file() + ": [cost_model_params]");
}

namespace {

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
    c.where = set == e.cost_model_settings.end() ? SourceLocation{core.core->file} : set->second.where;
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
    c.params = layered_params(c.info().params, {overrides},
                              root.file() + ": cost model '" + name + "' of core '" + core.name + "' (add [cost_model." +
                                  name + "])");
    e.cost_models[name] = std::move(c);
  }
}

void read_training(TableReader& root, Experiment& e, const Registry& registry) {
  auto t = root.table("training");
  if (!t) return;
  e.training_mode = t->choice("mode", {"inference", "training"}).value_or("inference");
  e.training.loss = t->choice("loss", {"cross_entropy"}).value_or("cross_entropy");
  e.training.micro_batches = t->integer("micro_batches", Bounds::at_least(1)).value_or(1);
  for (const char* section : {"backward", "optimizer"}) {
    const bool backward = std::string(section) == "backward";
    const PluginKind kind = backward ? PluginKind::backward : PluginKind::optimizer;
    const std::string def = backward ? "autodiff" : "sgd";
    if (e.training_mode != "training") {
      t->mark_used(section);  // kept for when the mode is switched (e.g. with --set training.mode=training)
      continue;
    }
    auto sub = t->table(section);
    PluginChoice c;
    if (sub) {
      c = choose(*sub, kind, def, registry);
    } else {
      c.where = t->where();
      c.plugin = &registry.require(kind, def, c.where);
      c.params = default_params(c.plugin->info.params, root.file() + ": [training." + std::string(section) + "]");
    }
    (backward ? e.backward : e.optimizer) = std::move(c);
  }
  t->finish();
}

}  // namespace

void apply_override(toml::table& root, const std::string& assignment) {
  const std::string origin = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UserError("--set '" + assignment + "': expected section.key=value");
  }
  std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty()) throw UserError("--set '" + assignment + "': empty key segment in '" + key + "'");
  }
  toml::table* table = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = table->get(parts[i]);
    if (!n) {
      table->insert(parts[i], toml::table{});
      n = table->get(parts[i]);
    }
    if (!n->is_table()) {
      throw UserError("--set '" + assignment + "': '" + parts[i] + "' is " + toml_type_name(*n) + ", not a table");
    }
    table = n->as_table();
  }
  toml::table parsed;
  try {
    parsed = toml::parse("value = " + value, std::string_view{origin});
  } catch (const toml::parse_error&) {
    // Not TOML: a bare string, parsed quoted so that it keeps its --set origin for error messages.
    parsed = toml::parse("value = " + to_string(ParamValue(value)), std::string_view{origin});
  }
  table->insert_or_assign(parts.back(), std::move(*parsed.get("value")));
}

Experiment load_experiment(const fs::path& file, const std::vector<std::string>& overrides, const Registry& registry) {
  TomlDocument doc = TomlDocument::parse_file(file);
  for (const std::string& o : overrides) apply_override(doc.root(), o);
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  Experiment e;
  e.file = file;
  e.overrides = overrides;

  e.name = file.stem().string();
  if (auto t = root.table("experiment")) {
    e.name = t->string("name").value_or(e.name);
    if (e.name.empty() || e.name.find('/') != std::string::npos) t->fail("name", "expected a non-empty name without '/'");
    e.seed = static_cast<std::uint64_t>(t->integer("seed", Bounds::non_negative()).value_or(0));
    e.description = t->string("description").value_or("");
    t->finish();
  }
  root.mark_used("provenance");  // written into resolved.toml for the record; not an input

  {
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
    e.frontend = choose(w, PluginKind::frontend, name, registry, {"file"});
  }

  read_training(root, e, registry);
  if (auto p = root.table("precision")) {
    e.precision = read_precision(*p);
    p->finish();
    e.training.precision = e.precision;
  }

  {
    TableReader a = root.required_table("architecture");
    e.architecture_file = a.required_path("file");
    a.finish();
    e.accelerator = load_accelerator(e.architecture_file);
  }
  read_cost_models(root, e, registry);
  read_allocation(root, e);
  if (auto t = root.table("schedule")) {
    const std::string bw = t->choice("offchip_bandwidth", {"average", "peak"}).value_or("average");
    e.schedule.peak_offchip_bandwidth = bw == "peak";
    e.schedule.layer_barrier = t->boolean("layer_barrier").value_or(false);
    const std::string tr = t->choice("transfers", {"exact", "whole_tile"}).value_or("exact");
    e.schedule.whole_tile_transfers = tr == "whole_tile";
    t->finish();
  }
  e.fusion = choose_optional(root, "fusion", PluginKind::fusion, "layer_by_layer", registry);
  e.search = choose_optional(root, "search", PluginKind::search, "fixed", registry);

  e.output_dir = fs::path("results") / e.name;
  if (auto o = root.table("output")) {
    if (auto d = o->string("dir", "a folder path")) {
      if (d->empty()) o->fail("dir", "expected a folder path, got an empty string");
      e.output_dir = *d;
    }
    e.overwrite = o->boolean("overwrite").value_or(true);
    if (auto list = o->string_list("artifacts")) e.artifacts = read_artifacts(*o, *list);
    o->finish();
  }
  root.finish(kSections);
  return e;
}

}  // namespace monet
