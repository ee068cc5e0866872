#pragma once
// The workload-frontend plugin kind (`frontend`): a workload file in, a forward graph out.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include <filesystem>

#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

class TomlDocument;  // monet/config/toml_reader.hpp: only frontends of TOML workloads include it

/// Reads a workload file into a forward graph.
class MONET_API WorkloadFrontend : public Plugin {
 public:
  ~WorkloadFrontend() override;
  /// Errors in the file are UserErrors with file:line:column where the format allows it.
  [[nodiscard]] virtual GraphPtr load(const std::filesystem::path& file) const = 0;
  /// A TOML workload file already parsed, with the experiment's [workload.set] changes made to its keys (the
  /// kernel hands a document only for .toml files; changed values keep the experiment's source locations). The
  /// default refuses: a frontend of TOML workloads overrides it and reads the file through it.
  [[nodiscard]] virtual GraphPtr load_document(const TomlDocument& doc) const;
};

}  // namespace monet
