#pragma once
// The readers of an experiment file's parts that ExperimentSource::build (experiment.cpp) composes, and the state
// the --set machinery (experiment_overrides.cpp) shares with the plugin choice (plugin_choice.cpp). Kernel-internal.
#include <set>
#include <string>
#include <vector>

#include "monet/config/toml_reader.hpp"
#include "monet/experiment/compat.hpp"
#include "monet/experiment/experiment.hpp"
#include "monet/plugin/registry.hpp"

namespace monet::detail {

/// Sections whose plugin a --set replaced: the file's parameters of the old plugin do not apply to the new one.
extern thread_local std::set<std::string> replaced_plugins;

// plugin_choice.cpp: a section's plugin and its parameters; the cores' cost models.
PluginChoice choose(TableReader& t, PluginKind kind, const std::string& default_name, const Registry& registry,
                    const std::vector<std::string>& kernel_keys = {});
PluginChoice choose_optional(TableReader& root, const std::string& section, PluginKind kind,
                             const std::string& default_name, const Registry& registry);
void read_cost_models(TableReader& root, Experiment& e, const Registry& registry);

// training_reader.cpp: [training] with its [training.checkpoint], backward and optimizer.
void read_training(TableReader& root, Experiment& e, const Registry& registry);

// workload_reader.cpp: [workload] with its frontend and its [workload.set] changes to the workload file (and the
// --set workload.set.PATH changes, `set_changes`).
void read_workload(TableReader& root, Experiment& e, const std::vector<const Change*>& set_changes,
                   const ExperimentSource& source, const Registry& registry);

// architecture_reader.cpp: [architecture] with its system, set, unset and system_set changes (and the --set
// changes to the accelerator file, `arch_changes`); [allocation] over the accelerator's cores.
void read_architecture(TableReader& root, Experiment& e, const std::vector<const Change*>& arch_changes,
                       const CompatSettings& compat, const ExperimentSource& source, const Registry& registry);
void read_allocation(TableReader& root, Experiment& e);

}  // namespace monet::detail
