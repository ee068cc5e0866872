#include "monet/experiment/experiment.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "monet/arch/architecture_documents.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/config/params_toml.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/experiment/compat.hpp"
#include "monet/experiment/plugin_folders.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSections{"experiment", "workload", "training", "precision", "architecture", "space",
                                         "cost_model", "allocation", "fusion", "schedule", "search", "output", "provenance",
                                         "compat", "plugins"};

/// Sections whose plugin a --set replaced: the file's parameters of the old plugin do not apply to the new one.
thread_local std::set<std::string> replaced_plugins;

bool from_command_line(const toml::node& n) {
  const auto& path = n.source().path;
  return path && path->rfind("--set ", 0) == 0;
}

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

/// [output] artifacts = ["summary", "csv", "trace", "plots", "report"]: the summary is always written.
OutputArtifacts read_artifacts(TableReader& t, const std::vector<std::string>& names) {
  const std::vector<std::string> known{"summary", "csv", "trace", "plots", "report"};
  OutputArtifacts a{false, false, false, false};
  std::set<std::string> seen;
  for (const std::string& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      t.fail("artifacts", "'" + n + "' is not an artefact" + did_you_mean(n, known) + "; artefacts: " + join(known));
    }
    if (!seen.insert(n).second) t.fail("artifacts", "'" + n + "' is listed twice");
    a.csv = a.csv || n == "csv";
    a.trace = a.trace || n == "trace";
    a.plots = a.plots || n == "plots";
    a.report = a.report || n == "report";
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

}  // namespace

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

/// [training.checkpoint]: exactly one of `segments`, `modules`, `every_k`, `budget` (the optimal policy, with an
/// optional `cost`, `solver`, `time_limit_s` and `node_limit`), `blocks` or `policy = "none"`; and, with any of them,
/// `offload` (module names or globs).
CheckpointPolicy read_checkpoint(TableReader& t, OffloadPolicy& offload, CheckpointSolver& solver) {
  CheckpointPolicy p;
  p.where = t.where();
  std::vector<std::string> given;
  for (const char* key : {"policy", "segments", "modules", "every_k", "budget", "blocks"}) {
    if (t.has(key)) given.push_back(key);
  }
  if (given.size() > 1) {
    throw UserError(t.where(given[1]), "[training.checkpoint] takes one policy: " + join(given, " and ") + " are given");
  }
  if (t.has("policy")) {
    t.choice("policy", {"none"});  // the other policies are spelled by their own key
  } else if (t.has("segments")) {
    p.kind = CheckpointPolicy::Kind::segments;
    p.where = t.where("segments");
    p.segments = *t.integer("segments", Bounds::at_least(1));
  } else if (t.has("modules")) {
    p.kind = CheckpointPolicy::Kind::modules;
    p.where = t.where("modules");
    const toml::node* n = t.raw().get("modules");
    if (n && n->is_string()) p.modules = {*t.string("modules")};
    else p.modules = *t.string_list("modules");
    if (p.modules.empty()) throw UserError(p.where, "[training.checkpoint] modules needs at least one name or glob");
  } else if (t.has("every_k")) {
    p.kind = CheckpointPolicy::Kind::every_k;
    p.where = t.where("every_k");
    const toml::node* n = t.raw().get("every_k");
    if (n && n->is_string()) t.choice("every_k", {"sqrt"});
    else p.every_k = *t.integer("every_k", Bounds::at_least(1));
  } else if (t.has("blocks")) {
    p.kind = CheckpointPolicy::Kind::blocks;  // may be empty: the checkpoint genes' "keep everything"
    p.where = t.where("blocks");
    p.blocks = *t.string_list("blocks");
  } else if (t.has("budget")) {
    p.kind = CheckpointPolicy::Kind::optimal;
    p.where = t.where("budget");
    p.budget = *t.integer("budget", Bounds::at_least(1));
    p.cost = t.choice("cost", {"macs", "latency", "energy"}).value_or("macs");
    if (t.has("solver")) {
      solver.where = t.where("solver");
      solver.name = *t.choice("solver", {"dp", "segments", "rotor", "milp"});
    }
    if (t.has("time_limit_s")) {
      if (solver.name != "milp") t.fail("time_limit_s", "applies to solver = \"milp\" only");
      solver.where = t.where("time_limit_s");
      solver.time_limit_s = *t.number("time_limit_s", Bounds::non_negative());
    }
    if (t.has("node_limit")) {
      if (solver.name != "milp") t.fail("node_limit", "applies to solver = \"milp\" only");
      solver.where = t.where("node_limit");
      solver.node_limit = *t.integer("node_limit", Bounds::at_least(0));
    }
  }
  for (const char* key : {"cost", "solver", "time_limit_s", "node_limit"}) {
    if (p.kind != CheckpointPolicy::Kind::optimal && t.has(key)) {
      t.fail(key, "belongs to the optimal policy (budget = B)");
    }
  }
  if (t.has("offload")) {
    offload.where = t.where("offload");
    const toml::node* n = t.raw().get("offload");
    if (n && n->is_string()) offload.modules = {*t.string("offload")};
    else offload.modules = *t.string_list("offload");
  }
  t.finish();
  return p;
}

void read_training(TableReader& root, Experiment& e, const Registry& registry) {
  auto t = root.table("training");
  if (!t) return;
  e.training_mode = t->choice("mode", {"inference", "training"}).value_or("inference");
  e.training.loss = t->choice("loss", {"cross_entropy", "binary_cross_entropy"}).value_or("cross_entropy");
  e.training.micro_batches = t->integer("micro_batches", Bounds::at_least(1)).value_or(1);
  if (auto c = t->table("checkpoint")) e.training.checkpoint = read_checkpoint(*c, e.offload, e.checkpoint_solver);
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

namespace {

std::vector<std::string> key_parts(const std::string& key, const std::string& what) {
  // Dotted as in TOML: a quoted segment ("training.peak_activation_bytes") keeps its dots.
  std::vector<std::string> parts(1);
  bool quoted = false, was_quoted = false;
  for (const char ch : key) {
    if (ch == '"') {
      if (!quoted && !parts.back().empty()) throw UserError(what + ": a quote in the middle of a key segment in '" + key + "'");
      quoted = !quoted;
      was_quoted = true;
    } else if (ch == '.' && !quoted) {
      if (parts.back().empty() && !was_quoted) throw UserError(what + ": empty key segment in '" + key + "'");
      parts.emplace_back();
      was_quoted = false;
    } else {
      parts.back() += ch;
    }
  }
  if (quoted) throw UserError(what + ": unterminated quote in '" + key + "'");
  if (parts.back().empty() && !was_quoted) throw UserError(what + ": empty key segment in '" + key + "'");
  return parts;
}

}  // namespace

std::string architecture_path(const std::string& key) {
  const std::string prefix = "architecture.";
  if (key.rfind(prefix, 0) != 0) return {};
  const std::string rest = key.substr(prefix.size());
  const std::string first = rest.substr(0, rest.find('.'));
  // architecture.set.PATH is the same change as architecture.PATH: after the file's [architecture.set], so it wins.
  if (first == "set" && rest.size() > 4) return rest.substr(4);
  return first == "file" || first == "system" || first == "system_set" || first == "set" || first == "unset" ? std::string{} : rest;
}

namespace {

/// The value of a --set: TOML, else a bare string (quoted, so that it keeps its --set origin for messages).
std::shared_ptr<const toml::node> override_value(const std::string& value, const SourceLocation& where) {
  try {
    return std::shared_ptr<const toml::node>(located_value(value, where));
  } catch (const UserError&) {
    return std::shared_ptr<const toml::node>(located_value(to_string(ParamValue(value)), where));
  }
}

}  // namespace

void apply_override(toml::table& root, const std::string& assignment) {
  const Change c = parse_set(assignment);
  apply_change(root, c);
}

Change parse_set(const std::string& assignment) {
  const std::string origin = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UserError("--set '" + assignment + "': expected section.key=value");
  }
  const std::string key = assignment.substr(0, eq);
  (void)key_parts(key, "--set '" + assignment + "'");
  return Change{key, override_value(assignment.substr(eq + 1), SourceLocation{origin, 1, 9}), SourceLocation{origin}};
}

Change parse_unset(const std::string& key) {
  (void)key_parts(key, "--unset '" + key + "'");
  return Change{key, nullptr, SourceLocation{"--unset " + key}};
}

void apply_change(toml::table& root, const Change& c) {
  const std::vector<std::string> parts = key_parts(c.key, c.where.str());
  toml::table* table = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = table->get(parts[i]);
    if (!n) {
      if (!c.value) throw UserError(c.where, "the experiment has no table '" + parts[i] + "'");
      table->insert(parts[i], toml::table{});
      n = table->get(parts[i]);
    }
    if (!n->is_table()) throw UserError(c.where, "'" + parts[i] + "' is " + toml_type_name(*n) + ", not a table");
    table = n->as_table();
  }
  if (!c.value) {
    if (!table->contains(parts.back())) throw UserError(c.where, "the experiment does not set '" + c.key + "'");
    table->erase(parts.back());
    return;
  }
  if (parts.back() == "plugin" && table->contains("plugin")) {
    const toml::node* old = table->get("plugin");
    if (!(old->is_string() && c.value->is_string() && old->as_string()->get() == c.value->as_string()->get())) {
      std::string section = parts.front();
      for (std::size_t i = 1; i + 1 < parts.size(); ++i) section += "." + parts[i];
      replaced_plugins.insert(section);
    }
  }
  SourceLocation at = location_of(*c.value, c.where.file);
  if (at.line == 0) at = c.where;
  table->insert_or_assign(parts.back(), std::move(*located_value(toml_text(*c.value), at)));
}

// ------------------------------------------------------------------------------------- ExperimentSource

struct ExperimentSource::Impl {
  fs::path file;
  TomlDocument doc;
  std::vector<Change> changes;  // --unset, then --set
  std::vector<std::string> sets, unsets;
  const Registry* registry = nullptr;
  mutable std::mutex mutex;
  mutable std::map<fs::path, std::shared_ptr<const ArchitectureDocuments>> architectures;
};

ExperimentSource::ExperimentSource(const fs::path& file, const std::vector<std::string>& sets, const Registry& registry,
                                   const std::vector<std::string>& unsets)
    : impl_(std::make_shared<Impl>()) {
  impl_->file = file;
  impl_->doc = TomlDocument::parse_file(file);
  impl_->sets = sets;
  impl_->unsets = unsets;
  impl_->registry = &registry;
  for (const std::string& u : unsets) impl_->changes.push_back(parse_unset(u));
  for (const std::string& o : sets) impl_->changes.push_back(parse_set(o));
}

const TomlDocument& ExperimentSource::document() const { return impl_->doc; }

TomlDocument ExperimentSource::changed_document() const {
  TomlDocument doc = impl_->doc.clone();
  for (const Change& c : impl_->changes) {
    if (architecture_path(c.key).empty()) apply_change(doc.root(), c);
  }
  return doc;
}
const fs::path& ExperimentSource::file() const { return impl_->file; }

ArchitectureDocuments ExperimentSource::architecture(const fs::path& file) const {
  std::lock_guard lock(impl_->mutex);
  const fs::path key = fs::weakly_canonical(file);
  auto it = impl_->architectures.find(key);
  if (it == impl_->architectures.end()) {
    it = impl_->architectures.emplace(key, std::make_shared<const ArchitectureDocuments>(ArchitectureDocuments::read(file))).first;
  }
  return *it->second;
}

Experiment load_experiment(const fs::path& file, const std::vector<std::string>& overrides, const Registry& registry,
                           const std::vector<std::string>& unsets) {
  return ExperimentSource(file, overrides, registry, unsets).build();
}

Experiment ExperimentSource::build(const std::vector<Change>& extra) const {
  const fs::path& file = impl_->file;
  const Registry& registry = *impl_->registry;
  TomlDocument doc = impl_->doc.clone();
  replaced_plugins.clear();
  // Changes to the accelerator file wait until it is read; the experiment's own keys change now.
  std::vector<const Change*> arch_changes;
  std::vector<const Change*> all;
  for (const Change& c : impl_->changes) all.push_back(&c);
  for (const Change& c : extra) all.push_back(&c);
  for (const Change* c : all) {
    if (architecture_path(c->key).empty()) {
      apply_change(doc.root(), *c);
    } else {
      arch_changes.push_back(c);
    }
  }
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  Experiment e;
  e.file = file;
  e.overrides = impl_->sets;
  e.unsets = impl_->unsets;

  e.name = file.stem().string();
  if (auto t = root.table("experiment")) {
    e.name = t->string("name").value_or(e.name);
    if (e.name.empty() || e.name.find('/') != std::string::npos) t->fail("name", "expected a non-empty name without '/'");
    e.seed = static_cast<std::uint64_t>(t->integer("seed", Bounds::non_negative()).value_or(0));
    e.description = t->string("description").value_or("");
    t->finish();
  }
  e.plugin_path = read_plugin_path(root);  // the caller chose the registry from them (registry_with)
  root.mark_used("provenance");  // written into resolved.toml for the record; not an input
  CompatSettings compat;
  if (auto t = root.table("compat")) compat = read_compat(*t, registry);
  root.mark_used("space");       // the design space: read by read_space_spec

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
  std::optional<TableReader> parallelism_table = root.table("parallelism");
  if (parallelism_table) e.parallelism = read_parallelism(*parallelism_table, e.training_mode == "training", e.training.checkpoint);
  if (auto p = root.table("precision")) {
    e.precision = read_precision(*p);
    p->finish();
    e.training.precision = e.precision;
  }

  {
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
    ArchitectureDocuments docs = architecture(e.architecture_file);
    if (a.has("unset")) {
      const std::vector<std::string> paths = *a.string_list("unset");
      for (const std::string& path : paths) {
        docs.unset(path, a.where("unset"));
        e.architecture_unset.push_back(path);
      }
    }
    if (auto set = a.table("set")) {
      // Changes to the accelerator file, by path ("links.*.energy_pj_per_bit" = 0.0). A dotted key outside quotes
      // (a.set.cores.x.y = 1, or --set architecture.set.cores.x.y=1) makes sub-tables: their leaves are the paths.
      // An inline table ({ ... }) is one value, set whole.
      std::function<void(const std::string&, const toml::node&, const SourceLocation&)> change =
          [&](const std::string& path, const toml::node& value, const SourceLocation& where) {
            const toml::table* sub = value.as_table();
            if (sub == nullptr || sub->is_inline()) {
              e.architecture_set.emplace_back(path, toml_text(value));
              docs.set(path, value, where);
              return;
            }
            for (const auto& [k, v] : *sub) change(path + "." + std::string(k.str()), v, where);
          };
      for (const std::string& path : set->keys()) {
        (void)set->node(path);  // marks it used
        change(path, *set->raw().get(path), set->key_location(path));
      }
      set->finish();
    }
    a.finish();
    for (const Change* c : arch_changes) {
      const std::string path = architecture_path(c->key);
      if (c->value) {
        docs.set(path, *c->value, c->where);
        e.architecture_set.emplace_back(path, toml_text(*c->value));
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
  if (parallelism_table) {
    if (e.parallelism.chips() > 1 && !e.system) {
      throw UserError(e.parallelism.where_chips, "a step over " + std::to_string(e.parallelism.chips()) +
                                                     " chips needs a system of chips: [architecture] system = \"...\" "
                                                     "(architectures/systems/)");
    }
    if (e.system) {
      e.parallelism_model = choose(*parallelism_table, PluginKind::parallelism, "megatron", registry, parallelism_kernel_keys());
      if (e.training_mode != "training") {
        throw UserError(root.where("architecture"), "a step on a system of chips is a training step ([training] mode = \"training\")");
      }
      if (e.training.micro_batches != 1) {
        throw UserError(e.parallelism.where, "on a system of chips the pipeline runs global_batch / (micro-batch x data) "
                                             "micro-batches: leave [training] micro_batches at 1");
      }
      // One rank of the tensor- and context-parallel groups: the frontend generates it (docs/datacenter.md), through
      // its parameters of these names; a frontend without one cannot split that way.
      const auto& specs = e.frontend.info().params;
      const Parallelism& par = e.parallelism;
      auto has = [&](const std::string& param) {
        return std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == param; });
      };
      auto pass = [&](const std::string& param, ParamValue value, bool asked, const std::string& what) {
        if (has(param)) {
          e.frontend.params.set(param, std::move(value), par.where);
        } else if (asked) {
          throw UserError(par.where_chips.known() ? par.where_chips : par.where,
                          "the workload frontend '" + e.frontend.name() + "' cannot generate " + what + " (it has no " +
                              param + " parameter)");
        }
      };
      if (has("tensor_parallel")) {
        const std::int64_t given = e.frontend.params.get_int("tensor_parallel");
        if (given > 0 && given != par.tensor) {
          e.frontend.params.fail("tensor_parallel", "[workload] tensor_parallel = " + std::to_string(given) +
                                                        " but [parallelism] tensor = " + std::to_string(par.tensor));
        }
      }
      pass("tensor_parallel", par.tensor, par.tensor > 1, "one rank of a tensor-parallel group");
      pass("sequence_parallel", par.sequence_parallel, par.sequence_parallel, "a rank with sequence parallelism");
      pass("context_parallel", par.context, par.context > 1, "one rank of a context-parallel group");
    } else {
      for (const std::string& k : parallelism_kernel_keys()) parallelism_table->mark_used(k);
      parallelism_table->finish();
    }
  } else if (e.system) {
    throw UserError(root.where("architecture"), "a system of chips needs a [parallelism] table (tensor, pipeline, data, global_batch)");
  }
  read_cost_models(root, e, registry);
  read_allocation(root, e);
  // [schedule]: the defaults follow [compat]; a key the section sets wins.
  e.schedule.peak_offchip_bandwidth = compat.on("stream_peak_bandwidth");
  e.schedule.layer_barrier = compat.on("stream_layer_barrier");
  e.schedule.whole_tile_transfers = compat.on("stream_whole_tile_transfers");
  e.schedule.sources_from_offchip = compat.on("stream_sources_from_offchip");
  e.schedule.padded_tiles = compat.on("stream_padded_tiles");
  if (auto t = root.table("schedule")) {
    if (auto bw = t->choice("offchip_bandwidth", {"average", "peak"})) e.schedule.peak_offchip_bandwidth = *bw == "peak";
    e.schedule.layer_barrier = t->boolean("layer_barrier").value_or(e.schedule.layer_barrier);
    if (auto tr = t->choice("transfers", {"exact", "whole_tile"})) e.schedule.whole_tile_transfers = *tr == "whole_tile";
    if (auto src = t->choice("sources", {"nearest", "offchip"})) e.schedule.sources_from_offchip = *src == "offchip";
    e.schedule.padded_tiles = t->boolean("padded_tiles").value_or(e.schedule.padded_tiles);
    e.allow_over_capacity = t->boolean("allow_over_capacity").value_or(false);
    t->finish();
  }
  e.fusion = choose_optional(root, "fusion", PluginKind::fusion, "layer_by_layer", registry);
  e.search = choose_optional(root, "search", PluginKind::search, "fixed", registry);
  // Plugins' own quirks: their compat-tagged parameters that the experiment left at the defaults.
  for (PluginChoice* c : {&e.frontend, &e.fusion, &e.search}) apply_compat(compat, c->info().params, c->params);
  for (std::optional<PluginChoice>* c : {&e.backward, &e.optimizer}) {
    if (*c) apply_compat(compat, (*c)->info().params, (*c)->params);
  }
  for (auto& [name, c] : e.cost_models) apply_compat(compat, c.info().params, c.params);

  e.output_dir = fs::path("results") / e.name;
  if (auto o = root.table("output")) {
    if (auto d = o->string("dir", "a folder path")) {
      if (d->empty()) o->fail("dir", "expected a folder path, got an empty string");
      e.output_dir = *d;
    }
    e.overwrite = o->boolean("overwrite").value_or(true);
    if (auto list = o->string_list("artifacts")) e.artifacts = read_artifacts(*o, *list);
    if (auto n = o->integer("front_points", Bounds{0.0, 1000.0, false, false})) e.artifacts.front_points = static_cast<int>(*n);
    o->finish();
  }
  root.finish(kSections);
  return e;
}

}  // namespace monet
