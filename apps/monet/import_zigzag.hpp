#pragma once
// Converters of ZigZag's YAML inputs into monet's TOML files (docs/importing.md).
#include <filesystem>
#include <optional>
#include <string>

#include "yaml_reader.hpp"

namespace monet::cli {

/// A ZigZag accelerator (one core) and optionally its mapping file as a monet core file. `name` replaces the
/// file's own `name` (noted in a comment), e.g. when another core of a Stream accelerator has that name too.
std::string zigzag_core_to_toml(const std::filesystem::path& hardware, const std::optional<std::filesystem::path>& mapping,
                                const std::string& cost_model, const std::optional<std::string>& name = std::nullopt);
/// Rejects `auto_cost_extraction: true` in a ZigZag memory, at the key: monet has no CACTI, energies are given.
void reject_cost_extraction(const Yaml& y, const YAML::Node& memory);
/// A ZigZag mapping file as [mapping.<name>] tables.
std::string zigzag_mapping_to_toml(const std::filesystem::path& mapping);
/// A ZigZag layer list as a monet TOML workload of generic loop-nest layers.
std::string zigzag_workload_to_toml(const std::filesystem::path& layers);

}  // namespace monet::cli
