#pragma once
// Converters of Stream's YAML inputs (multi-core accelerators, mappings) into monet's TOML (docs/importing.md).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace monet::cli {

struct StreamAcceleratorImport {
  std::string accelerator;  // the accelerator file
  std::vector<std::pair<std::filesystem::path, std::string>> cores;  // core files: path (absolute), text
};

/// Energies that replace Stream's link energies (pJ per bit; negative: keep Stream's, usually 0).
struct LinkEnergies {
  double link = -1;  // point-to-point links
  double bus = -1;   // buses
};

/// A Stream accelerator (cores as ZigZag-format core files, the off-chip core, links and buses). The core
/// files are written to `cores_dir`; the accelerator file refers to them relative to `output`.
StreamAcceleratorImport stream_accelerator_to_toml(const std::filesystem::path& accelerator,
                                                   const std::filesystem::path& output,
                                                   const std::filesystem::path& cores_dir, const std::string& cost_model,
                                                   const LinkEnergies& energies = {});

/// A Stream mapping (core allocation, intra- and inter-core tiling per operator type or name) as experiment
/// sections: [allocation] and the [fusion] tiling rules.
std::string stream_mapping_to_toml(const std::filesystem::path& mapping, const std::string& fusion_plugin);

}  // namespace monet::cli
