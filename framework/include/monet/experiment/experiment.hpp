#pragma once
// An experiment file (docs/experiments.md) read, validated and resolved: every plugin found, every
// parameter checked against the plugin's declaration and filled with its default, every path resolved.
// Nothing heavy happens here (the workload is read by prepare()); all the user's mistakes in the
// experiment and architecture files are reported here, with file:line:column.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/arch/architecture_documents.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/experiment/parallelism.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/schedule/schedule.hpp"
#include "monet/system/system.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/offload.hpp"

namespace monet {

struct PluginChoice {
  const PluginHandle* plugin = nullptr;
  ParamValues params;
  SourceLocation where;  // where the plugin was chosen (or the section, for defaults)
  [[nodiscard]] const std::string& name() const { return plugin->info.name; }
  [[nodiscard]] const PluginInfo& info() const { return plugin->info; }
};

struct AllocationRule {
  std::string key;                 // op kind or operator name ("" for the default rule)
  std::vector<std::string> cores;  // core instance names
  SourceLocation where;
};

struct AllocationSpec {
  std::optional<AllocationRule> default_rule;  // absent: every core
  std::vector<AllocationRule> by_kind;
  std::vector<AllocationRule> by_type;      // operator type ("Conv", "Add", ...): before kind, after name
  std::vector<AllocationRule> by_operator;
  /// One core per inter-core group of an operator: key "NAME#gK" (group K) or "NAME" (every group); what
  /// allocation genes choose (Stream's GA genes are per layer and group).
  std::vector<AllocationRule> by_group;
};

/// [output] artifacts: what a run writes besides its summary (results.json and resolved.toml, always written).
struct OutputArtifacts {
  bool csv = true;    // schedule.csv (per CN) and transfers.csv (per transfer)
  bool trace = true;  // trace.json.gz (Perfetto, chrome://tracing)
  bool plots = true;  // schedule.svg, memory.svg
  bool report = true; // report.html (interactive, self-contained)
  /// Searches: the full results of up to this many Pareto-front points (spread along the front) are kept in
  /// front/point-I/ besides best/, so that report.html can open their schedules.
  int front_points = 5;
};

struct Experiment {
  std::filesystem::path file;
  std::string name;
  std::uint64_t seed = 0;
  std::string description;
  /// [plugins] path: folders (or library files) searched for plugins before MONET_PLUGIN_PATH, absolute. The
  /// registry the experiment was built with already includes them (registry_with, plugin_folders.hpp).
  std::vector<std::filesystem::path> plugin_path;

  std::filesystem::path workload_file;
  PluginChoice frontend;
  /// [workload.set] (and --set workload.set.PATH): changes to the TOML workload file's keys by path, in order
  /// (path, TOML value text); a generated workload's paths are below its [workload] table (docs/workloads.md).
  std::vector<std::pair<std::string, std::string>> workload_set;
  /// The workload file with those changes made, which the frontend reads instead of the file (null: no change).
  std::shared_ptr<const TomlDocument> workload_document;

  std::string training_mode = "inference";  // "inference" | "training"
  TrainingSettings training;
  /// [training.checkpoint] offload: saved activations paged out to off-chip memory (the scheduler moves them).
  OffloadPolicy offload;
  /// [training.checkpoint] solver and time_limit_s: how the optimal policy is solved (DP or MILP).
  CheckpointSolver checkpoint_solver;
  std::optional<PluginChoice> backward;
  std::optional<PluginChoice> optimizer;
  std::optional<Precision> precision;  // [precision]; absent: the workload's own element types
  /// [parallelism] (Megatron's names); its `recompute` has become training.checkpoint.
  Parallelism parallelism;
  /// [parallelism] plugin (default megatron): the family's tensor-parallel rules; set when a system is given.
  std::optional<PluginChoice> parallelism_model;
  /// [architecture] system: the system of chips a [parallelism] step runs on; `accelerator` is then its chip.
  std::optional<System> system;
  /// [architecture.system_set]: the changes made to the system file before it was read (paths below [system]).
  std::vector<SystemChange> system_set;

  std::filesystem::path architecture_file;
  /// [architecture.set]: changes to the accelerator file by path, in file order (path, TOML value text).
  std::vector<std::pair<std::string, std::string>> architecture_set;
  std::vector<std::string> architecture_unset;  // [architecture] unset: keys removed from the accelerator file
  /// The accelerator and core documents with every change applied (hardware genes start from these).
  std::shared_ptr<const ArchitectureDocuments> architecture;
  AcceleratorPtr accelerator;
  bool cost_model_overridden = false;             // [cost_model] plugin = ... replaces every core's own model
  std::map<std::string, PluginChoice> cost_models;  // by plugin name: the models the cores use, with parameters
                                                    // (name@core-file: a core's own [cost_model_params] as overridden)
  /// The keys the experiment sets per cost model ([cost_model] with `plugin`, [cost_model.NAME]); they override
  /// a core's [cost_model_params], then the plugin's defaults, key by key.
  std::map<std::string, PluginChoice> cost_model_settings;
  std::vector<std::string> core_cost_model;       // per core id: the plugin name that costs it

  AllocationSpec allocation;
  PluginChoice fusion;
  ScheduleOptions schedule;  // [schedule]: the scheduler's modelling choices
  /// [schedule] allow_over_capacity: report a schedule whose memories exceed their capacity instead of failing.
  bool allow_over_capacity = false;
  PluginChoice search;
  /// [quality]: the plugin that gives the design's quality metrics (accuracy, ...) beside its costs; none when absent.
  std::optional<PluginChoice> quality;

  std::filesystem::path output_dir;
  bool overwrite = true;
  OutputArtifacts artifacts;

  std::vector<std::string> overrides;  // the --set arguments, as given
  std::vector<std::string> unsets;     // the --unset arguments, as given
};

/// The parameters a core file gives its own cost model ([cost_model_params]), checked against the plugin's
/// declaration (errors point into the core file), with `overrides` (an experiment's settings) replacing them key
/// by key, and defaults for the rest.
MONET_API ParamValues core_cost_model_params(const Core& core, const PluginHandle& model,
                                             const ParamValues* overrides = nullptr);

/// A change to an experiment or to the accelerator file it names: `key` is a dotted experiment key
/// ("fusion.auto_stacks") or `architecture.PATH` (docs/experiments.md); the value keeps its own source location
/// for messages. A null value removes the key.
struct Change {
  std::string key;
  std::shared_ptr<const toml::node> value;
  SourceLocation where;  // locates the key itself (an unknown path is reported here)
};

/// "architecture.links.bus.energy_pj_per_bit" -> "links.bus.energy_pj_per_bit": a path into the accelerator file
/// (the experiment's [architecture] owns only `file`, `system`, `set` and `unset`); "" when the key is the experiment's own.
/// "architecture.set.PATH" is PATH too (a change to the file, applied after the experiment's own [architecture.set]).
MONET_API std::string architecture_path(const std::string& key);

/// "workload.set.PATH" -> "PATH": a change to the workload file's keys (applied after the experiment's own
/// [workload.set]); "" for any other key.
MONET_API std::string workload_set_path(const std::string& key);
/// A [workload.set] path as segments from the workload document's root: below [workload] for a generated workload
/// (its [workload] table names a generator), from the root for a list of layers.
MONET_API std::vector<std::string> workload_path_segments(const TomlDocument& workload, const std::string& path,
                                                          const SourceLocation& where);

/// `--set KEY=VALUE` (VALUE as TOML, else a bare string) and `--unset KEY` as changes.
MONET_API Change parse_set(const std::string& assignment);
MONET_API Change parse_unset(const std::string& key);
/// Applies a change to an experiment key of a TOML table (missing tables are created for a value).
MONET_API void apply_change(toml::table& root, const Change& change);

/// An experiment file read once, with its --unset and --set overrides: builds the experiment, or variants of it
/// with further changes (the genes of a design point), from memory — the experiment, accelerator and core files
/// are not read again. Copies share what they read; build() is safe to call concurrently.
class MONET_API ExperimentSource {
 public:
  ExperimentSource(const std::filesystem::path& file, const std::vector<std::string>& sets, const Registry& registry,
                   const std::vector<std::string>& unsets = {});
  [[nodiscard]] Experiment build(const std::vector<Change>& changes = {}) const;
  [[nodiscard]] const TomlDocument& document() const;  // as read, before any change
  /// The experiment document with the --unset/--set changes to experiment keys applied.
  [[nodiscard]] TomlDocument changed_document() const;
  [[nodiscard]] const std::filesystem::path& file() const;
  /// The accelerator file (and its core files) at `file`, read once.
  [[nodiscard]] ArchitectureDocuments architecture(const std::filesystem::path& file) const;
  /// The TOML workload file at `file`, parsed once.
  [[nodiscard]] std::shared_ptr<const TomlDocument> workload(const std::filesystem::path& file) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// Reads an experiment file, applies `--unset KEY` and then `--set KEY=VALUE` overrides (a key may reach into
/// the accelerator file: `architecture.links.bus.energy_pj_per_bit`), validates everything that does not need
/// the workload, and loads the architecture. Throws UserError on any problem.
MONET_API Experiment load_experiment(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                                     const Registry& registry, const std::vector<std::string>& unsets = {});

/// Applies one "dotted.key=value" override to a TOML table (the value is parsed as TOML, else taken as a
/// string). Throws UserError for a malformed override.
MONET_API void apply_override(toml::table& root, const std::string& assignment);

}  // namespace monet
