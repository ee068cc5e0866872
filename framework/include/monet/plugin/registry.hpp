#pragma once
// Finds plugin libraries, checks their entry point and API version, and creates plugin objects that keep
// their library loaded for as long as they live.
//
// Search order (first plugin of a given kind and name wins):
//   1. every directory (or library file) in MONET_PLUGIN_PATH (':'-separated),
//   2. <directory of libmonet.so>/monet/plugins — the build tree and the install tree share this layout.
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

class LoadedLibrary;  // a dlopen'ed plugin library (opaque)

/// "0x0123456789abcdef": an ABI tag as messages and `monet --version` print it.
MONET_API std::string abi_tag_hex(std::uint64_t tag);

struct PluginHandle {
  PluginInfo info;
  std::filesystem::path library;
  const PluginDefinition* definition = nullptr;
  std::shared_ptr<LoadedLibrary> handle;
};

struct PluginLoadFailure {
  std::filesystem::path library;
  std::string reason;  // names the file, the symbol and the API versions involved
};

class MONET_API Registry {
 public:
  /// Scans the given directories or files now.
  explicit Registry(const std::vector<std::filesystem::path>& search_path);
  /// The process-wide registry over default_search_path(), scanned on first use.
  static Registry& global();
  static std::vector<std::filesystem::path> default_search_path();

  /// Loads one library and returns its plugins; throws a UserError explaining why it cannot be used
  /// (not a shared library, no `monet_plugin_entry`, another plugin API version, ...).
  static std::vector<PluginHandle> load_library(const std::filesystem::path& file);

  [[nodiscard]] const std::vector<PluginHandle>& plugins() const { return plugins_; }
  [[nodiscard]] const std::vector<PluginLoadFailure>& failures() const { return failures_; }
  [[nodiscard]] const std::vector<std::filesystem::path>& search_path() const { return search_path_; }
  [[nodiscard]] const PluginHandle* find(PluginKind kind, std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names(PluginKind kind) const;
  /// The frontend that reads a workload file: for a TOML file whose [workload] table names a generator
  /// (generator = "gpt"), the frontend plugin of that name (a UserError at the key when there is none); otherwise
  /// the first frontend that declares the file's extension; nullptr when none does.
  [[nodiscard]] const PluginHandle* frontend_for(const std::filesystem::path& file) const;
  /// "toml (.toml), onnx (.onnx)" for messages.
  [[nodiscard]] std::string frontend_extensions() const;
  /// Like find, but a missing plugin is a UserError at `where` listing the closest names and any library
  /// that failed to load.
  [[nodiscard]] const PluginHandle& require(PluginKind kind, std::string_view name, const SourceLocation& where) const;

  /// Creates a plugin object; the object keeps its library loaded (static: the handle knows its library).
  template <class Interface>
  static std::shared_ptr<Interface> create(const PluginHandle& plugin, const ParamValues& params) {
    Plugin* raw = create_raw(plugin, params);
    auto* typed = dynamic_cast<Interface*>(raw);
    if (!typed) {
      delete raw;
      throw UserError(SourceLocation{plugin.library.string()},
                      "plugin '" + plugin.info.name + "' does not implement the interface of its kind (" +
                          to_string(plugin.info.kind) + ")");
    }
    auto keep = plugin.handle;
    return std::shared_ptr<Interface>(typed, [keep](Interface* p) { delete p; });
  }

 private:
  static Plugin* create_raw(const PluginHandle& plugin, const ParamValues& params);
  std::vector<std::filesystem::path> search_path_;
  std::vector<PluginHandle> plugins_;
  std::vector<PluginLoadFailure> failures_;
};

}  // namespace monet
