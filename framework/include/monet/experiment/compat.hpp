#pragma once
// [compat]: turn on the modelling quirks of another tool for parity runs (`stream = true`), or one quirk by name.
// The kernel's own quirks are listed here. A plugin declares its quirks as boolean parameters named
// `compat_<profile>_<quirk>` (the loopnest model's `compat_stream_pooling_channel_loop`): `[compat] <profile> =
// true` turns them on and `[compat] <profile>_<quirk>` sets one, so the kernel never names a plugin's quirk.
#include <map>
#include <string>
#include <vector>

#include "monet/config/params.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/util/export.hpp"

namespace monet {

struct CompatSettings {
  std::map<std::string, bool> profiles;  // "stream" -> on
  std::map<std::string, bool> quirks;    // quirks set by name ("stream_pooling_channel_loop"), which win over profiles
  /// Whether a quirk (named without the `compat_` prefix) is on: set by name, else when its profile is.
  [[nodiscard]] bool on(const std::string& quirk) const;
};

struct KernelQuirk {
  std::string name;  // "<profile>_<what>"
  std::string doc;
};
MONET_API const std::vector<KernelQuirk>& kernel_compat_quirks();

/// The profile of a quirk name ("stream_layer_barrier" -> "stream").
MONET_API std::string compat_profile(const std::string& quirk);

/// Reads [compat]: every key a profile or a quirk of the kernel or of a plugin found, with a boolean value; anything
/// else is an error at the key.
MONET_API CompatSettings read_compat(TableReader& table, const Registry& registry);
/// Sets the plugin's `compat_*` parameters that the experiment left at their defaults.
MONET_API void apply_compat(const CompatSettings& compat, const std::vector<ParamSpec>& specs, ParamValues& values);

}  // namespace monet
