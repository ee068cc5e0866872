// Compiled into every plugin library by monet_add_plugin (cmake/MonetPlugin.cmake): the library's ABI tag, computed
// here, where every type crossing the kernel/plugin boundary is visible, by the plugin's own compiler with its own
// flags, as MONET_EXPORT_PLUGINS used to compute it in the plugin's source. The plugin's sources then include only
// their kind's header (monet/plugin/cost_model.hpp, ...), not every kind's types.
#include <cstdint>

#include "monet/plugin/abi_layout.hpp"
#include "monet/plugin/entry.hpp"

namespace monet::detail {
constinit const std::uint64_t plugin_abi_tag = kPluginAbiTag;
}  // namespace monet::detail
