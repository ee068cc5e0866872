// A plugin library built against a future plugin API: the host must refuse it before reading anything else.
#include "monet/plugin/entry.hpp"

MONET_PLUGIN_EXPORT const MonetPluginLibrary* monet_plugin_entry() {
  static const MonetPluginLibrary library{999, "9.9.9", 0, nullptr, 0};
  return &library;
}
