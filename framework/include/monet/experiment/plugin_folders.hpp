#pragma once
// `[plugins] path` of an experiment (docs/plugins.md): folders (or library files) of plugins the experiment needs
// besides those on MONET_PLUGIN_PATH and the bundled ones, relative to the experiment file. They are read before
// the experiment itself, since every plugin name in it is resolved against the registry they extend.
#include <filesystem>
#include <string>
#include <vector>

#include "monet/config/toml_reader.hpp"
#include "monet/plugin/registry.hpp"

namespace monet {

/// The entries of `[plugins] path` of a table reader over an experiment's root, absolute and normalised (relative
/// ones against the experiment's folder). A value that is not a list of strings, an empty entry or an entry that
/// does not exist is a UserError located at it. Empty when the experiment has no [plugins] section.
MONET_API std::vector<std::filesystem::path> read_plugin_path(TableReader& root);

/// The same for an experiment file, with its --unset and --set changes applied (a --set may name the folders).
MONET_API std::vector<std::filesystem::path> experiment_plugin_path(const std::filesystem::path& file,
                                                                    const std::vector<std::string>& sets = {},
                                                                    const std::vector<std::string>& unsets = {});

/// The registry an experiment's plugins come from: Registry::global() when `folders` is empty, else one over
/// `folders` followed by Registry::default_search_path() (the experiment's folders win over MONET_PLUGIN_PATH and
/// the bundled plugins). Kept for the life of the process, one per distinct list.
MONET_API const Registry& registry_with(const std::vector<std::filesystem::path>& folders);

}  // namespace monet
