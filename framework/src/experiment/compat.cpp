// [compat]: profiles and quirks of other tools (docs/experiments.md, "Compatibility quirks"; Stream's measured
// effects in docs/scheduling.md).
#include "monet/experiment/compat.hpp"

#include <algorithm>
#include <set>

#include "monet/util/strings.hpp"

namespace monet {

namespace {

constexpr std::string_view kPrefix = "compat_";

/// A plugin parameter that is a quirk: a boolean named compat_<profile>_<what>.
bool is_quirk_param(const ParamSpec& s) {
  return s.type == ParamType::boolean && s.name.rfind(kPrefix, 0) == 0 &&
         s.name.find('_', kPrefix.size()) != std::string::npos;
}

}  // namespace

const std::vector<KernelQuirk>& kernel_compat_quirks() {
  static const std::vector<KernelQuirk> quirks{
      {"stream_peak_bandwidth", "[schedule] offchip_bandwidth = \"peak\" unless set"},
      {"stream_layer_barrier", "[schedule] layer_barrier = true unless set"},
      {"stream_whole_tile_transfers", "[schedule] transfers = \"whole_tile\" unless set"},
      {"stream_sources_from_offchip", "[schedule] sources = \"offchip\" unless set"},
      {"stream_padded_tiles", "[schedule] padded_tiles = true unless set"},
      {"stream_dram_port_per_core", "the off-chip memory gets one port per core unless the experiment sets offchip.ports"},
  };
  return quirks;
}

std::string compat_profile(const std::string& quirk) { return quirk.substr(0, quirk.find('_')); }

bool CompatSettings::on(const std::string& quirk) const {
  if (auto it = quirks.find(quirk); it != quirks.end()) return it->second;
  auto it = profiles.find(compat_profile(quirk));
  return it != profiles.end() && it->second;
}

CompatSettings read_compat(TableReader& t, const Registry& registry) {
  std::set<std::string> profiles, quirks;
  for (const KernelQuirk& q : kernel_compat_quirks()) quirks.insert(q.name);
  for (const PluginHandle& h : registry.plugins()) {
    for (const ParamSpec& s : h.info.params) {
      if (is_quirk_param(s)) quirks.insert(s.name.substr(kPrefix.size()));
    }
  }
  for (const std::string& q : quirks) profiles.insert(compat_profile(q));
  std::vector<std::string> known(profiles.begin(), profiles.end());
  known.insert(known.end(), quirks.begin(), quirks.end());
  CompatSettings c;
  for (const std::string& key : t.keys()) {
    const bool profile = profiles.contains(key);
    if (!profile && !quirks.contains(key)) {
      t.fail(key, "'" + key + "' is not a compatibility profile or quirk" + did_you_mean(key, known) + "; known: " + join(known));
    }
    (profile ? c.profiles : c.quirks)[key] = *t.boolean(key);
  }
  t.finish();
  return c;
}

void apply_compat(const CompatSettings& compat, const std::vector<ParamSpec>& specs, ParamValues& values) {
  for (const ParamSpec& s : specs) {
    if (!is_quirk_param(s)) continue;
    auto it = values.entries().find(s.name);
    if (it != values.entries().end() && !it->second.defaulted) continue;  // the plugin's section sets it: it wins
    values.set(s.name, ParamValue{compat.on(s.name.substr(kPrefix.size()))}, {}, true);
  }
}

}  // namespace monet
