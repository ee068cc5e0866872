#pragma once
// What every plugin is: a kind, a name, a version, a description of its parameters, and objects created
// from validated parameter values.
#include <string>
#include <vector>

#include "monet/config/params.hpp"
#include "monet/util/export.hpp"

namespace monet {

enum class PluginKind : std::uint8_t { frontend, backward, optimizer, cost_model, fusion, search, estimator, parallelism, quality };
MONET_API std::string to_string(PluginKind k);
MONET_API std::vector<PluginKind> all_plugin_kinds();

/// Self-description of a plugin: drives the registry, validation and `monet plugins --describe`.
struct PluginInfo {
  PluginKind kind = PluginKind::frontend;
  std::string name;     // unique per kind; what experiment files write
  std::string version;  // the plugin's own version, recorded in resolved.toml
  std::string summary;  // one line
  std::string description;  // longer text: the model, its assumptions, units
  std::vector<ParamSpec> params;
  std::vector<std::string> file_extensions;  // frontends: extensions they read (".toml", ".onnx")
};

/// Base of every plugin object. Objects are created by the registry and keep their library loaded.
class MONET_API Plugin {
 public:
  virtual ~Plugin();
};

}  // namespace monet
