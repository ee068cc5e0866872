// A plugin library with this monet's API number but another layout of the shared types (what a kernel whose
// structs changed without a version bump would produce): the host must refuse it by its ABI tag.
#include "monet/plugin/abi_layout.hpp"
#include "monet/plugin/entry.hpp"

MONET_PLUGIN_EXPORT const MonetPluginLibrary* monet_plugin_entry() {
  static const MonetPluginLibrary library{monet::kPluginApiVersion, "0.0.9", 0, nullptr, monet::kPluginAbiTag ^ 1U};
  return &library;
}
