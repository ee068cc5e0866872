// The experiment reader: ExperimentSource reads an experiment file once and builds the experiment (or a variant
// with a design point's changes) from its parts: experiment_overrides.cpp applies the --set/--unset changes,
// training_reader.cpp, architecture_reader.cpp and plugin_choice.cpp read their sections.
#include "monet/experiment/experiment.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "experiment_readers.hpp"
#include "monet/arch/architecture_documents.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/experiment/compat.hpp"
#include "monet/experiment/plugin_folders.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

using detail::choose;
using detail::choose_optional;
using detail::read_allocation;
using detail::read_architecture;
using detail::read_cost_models;
using detail::read_training;
using detail::read_workload;
using detail::replaced_plugins;

namespace {

const std::vector<std::string> kSections{"experiment", "workload", "training", "precision", "architecture", "space",
                                         "cost_model", "allocation", "fusion", "schedule", "search", "quality", "output",
                                         "provenance", "compat", "plugins"};

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

}  // namespace

// ------------------------------------------------------------------------------------- ExperimentSource

struct ExperimentSource::Impl {
  fs::path file;
  TomlDocument doc;
  std::vector<Change> changes;  // --unset, then --set
  std::vector<std::string> sets, unsets;
  const Registry* registry = nullptr;
  mutable std::mutex mutex;
  mutable std::map<fs::path, std::shared_ptr<const ArchitectureDocuments>> architectures;
  mutable std::map<fs::path, std::shared_ptr<const TomlDocument>> workloads;
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

std::shared_ptr<const TomlDocument> ExperimentSource::workload(const fs::path& file) const {
  std::lock_guard lock(impl_->mutex);
  const fs::path key = fs::weakly_canonical(file);
  auto it = impl_->workloads.find(key);
  if (it == impl_->workloads.end()) {
    it = impl_->workloads.emplace(key, std::make_shared<const TomlDocument>(TomlDocument::parse_file(file))).first;
  }
  return it->second;
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
  // Changes to the accelerator and workload files wait until they are read; the experiment's own keys change now.
  std::vector<const Change*> arch_changes, workload_changes;
  std::vector<const Change*> all;
  for (const Change& c : impl_->changes) all.push_back(&c);
  for (const Change& c : extra) all.push_back(&c);
  for (const Change* c : all) {
    if (!architecture_path(c->key).empty()) {
      arch_changes.push_back(c);
    } else if (!workload_set_path(c->key).empty()) {
      workload_changes.push_back(c);
    } else {
      apply_change(doc.root(), *c);
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

  read_workload(root, e, workload_changes, *this, registry);

  read_training(root, e, registry);
  std::optional<TableReader> parallelism_table = root.table("parallelism");
  if (parallelism_table) e.parallelism = read_parallelism(*parallelism_table, e.training_mode == "training", e.training.checkpoint);
  if (auto p = root.table("precision")) {
    e.precision = read_precision(*p);
    p->finish();
    e.training.precision = e.precision;
  }

  read_architecture(root, e, arch_changes, compat, *this, registry);
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
  if (auto t = root.table("quality")) {  // no default: a quality plugin is named, or there is none
    if (!t->has("plugin")) t->fail_table("name the quality plugin: plugin = \"...\" (monet plugins lists them)");
    e.quality = choose(*t, PluginKind::quality, "", registry);
  }
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
