#pragma once
// The versioned C entry point of a plugin library. A library exports exactly one symbol,
// `monet_plugin_entry`, returning a MonetPluginLibrary whose first field is the plugin API version: the
// host reads it before anything else and refuses libraries built against another API, then compares the
// ABI tag (monet/plugin/abi.hpp) and refuses libraries whose view of the shared types differs.
//
// In a plugin's source file (with its kind's header, here monet/plugin/cost_model.hpp):
//     class MyModel final : public monet::CostModel {
//      public:
//       static monet::PluginInfo describe();
//       explicit MyModel(const monet::ParamValues& params);
//       ...
//     };
//     MONET_EXPORT_PLUGINS(MyModel)
#include <cstddef>
#include <cstdint>

#include "monet/plugin/abi.hpp"
#include "monet/plugin/plugin.hpp"
#include "monet/util/version.hpp"

namespace monet {

inline constexpr const char* kPluginEntrySymbol = "monet_plugin_entry";

struct PluginDefinition {
  PluginInfo (*describe)();
  Plugin* (*create)(const ParamValues& params);
};

namespace detail {
/// This library's ABI tag (kPluginAbiTag of monet/plugin/abi_layout.hpp), defined in the source file that
/// monet_add_plugin adds to every plugin library (cmake/plugin_abi_tag.cpp; MONET_PLUGIN_ABI_SOURCE for a library
/// built without it). Only that file sees every boundary type, so a plugin's own sources need only their kind.
extern const std::uint64_t plugin_abi_tag;

template <class P>
PluginInfo describe_plugin() {
  return P::describe();
}
template <class P>
Plugin* create_plugin(const ParamValues& params) {
  return new P(params);
}
}  // namespace detail

}  // namespace monet

extern "C" {
/// api_version first, in every API version; the rest is read only when it matches.
struct MonetPluginLibrary {
  std::uint32_t api_version;
  const char* monet_version;  // version of the kernel headers the library was built with
  std::size_t count;
  const monet::PluginDefinition* plugins;
  std::uint64_t abi_tag;  // monet::kPluginAbiTag of the headers the library was built with (plugin_abi_tag)
};
}

#define MONET_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

/// Exports the plugins of one library (one or more plugin classes).
#define MONET_EXPORT_PLUGINS(...)                                                                     \
  MONET_PLUGIN_EXPORT const MonetPluginLibrary* monet_plugin_entry() {                               \
    static const monet::PluginDefinition definitions[] = {MONET_DETAIL_DEFS(__VA_ARGS__)};           \
    static const MonetPluginLibrary library{monet::kPluginApiVersion, monet::kVersion,               \
                                            sizeof(definitions) / sizeof(definitions[0]), definitions,  \
                                            monet::detail::plugin_abi_tag};                                \
    return &library;                                                                                  \
  }

#define MONET_DETAIL_DEF(P) monet::PluginDefinition{&monet::detail::describe_plugin<P>, &monet::detail::create_plugin<P>}
#define MONET_DETAIL_DEFS_1(a) MONET_DETAIL_DEF(a)
#define MONET_DETAIL_DEFS_2(a, b) MONET_DETAIL_DEF(a), MONET_DETAIL_DEF(b)
#define MONET_DETAIL_DEFS_3(a, b, c) MONET_DETAIL_DEF(a), MONET_DETAIL_DEF(b), MONET_DETAIL_DEF(c)
#define MONET_DETAIL_DEFS_4(a, b, c, d) MONET_DETAIL_DEFS_2(a, b), MONET_DETAIL_DEFS_2(c, d)
#define MONET_DETAIL_DEFS_5(a, b, c, d, e) MONET_DETAIL_DEFS_3(a, b, c), MONET_DETAIL_DEFS_2(d, e)
#define MONET_DETAIL_DEFS_6(a, b, c, d, e, f) MONET_DETAIL_DEFS_3(a, b, c), MONET_DETAIL_DEFS_3(d, e, f)
#define MONET_DETAIL_DEFS_7(a, b, c, d, e, f, g) MONET_DETAIL_DEFS_4(a, b, c, d), MONET_DETAIL_DEFS_3(e, f, g)
#define MONET_DETAIL_DEFS_8(a, b, c, d, e, f, g, h) MONET_DETAIL_DEFS_4(a, b, c, d), MONET_DETAIL_DEFS_4(e, f, g, h)
#define MONET_DETAIL_DEFS_9(a, b, c, d, e, f, g, h, i) MONET_DETAIL_DEFS_5(a, b, c, d, e), MONET_DETAIL_DEFS_4(f, g, h, i)
#define MONET_DETAIL_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, NAME, ...) NAME
#define MONET_DETAIL_DEFS(...)                                                                         \
  MONET_DETAIL_PICK(__VA_ARGS__, MONET_DETAIL_DEFS_9, MONET_DETAIL_DEFS_8, MONET_DETAIL_DEFS_7,        \
                    MONET_DETAIL_DEFS_6, MONET_DETAIL_DEFS_5, MONET_DETAIL_DEFS_4, MONET_DETAIL_DEFS_3, \
                    MONET_DETAIL_DEFS_2, MONET_DETAIL_DEFS_1)(__VA_ARGS__)
