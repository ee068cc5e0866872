#include "monet/plugin/registry.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "monet/config/toml_reader.hpp"
#include "monet/plugin/abi_layout.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

class LoadedLibrary {
 public:
  boost::dll::shared_library library;
};

// ---------------------------------------------------------------------------------------------- kinds

std::string to_string(PluginKind k) {
  switch (k) {
    case PluginKind::frontend: return "frontend";
    case PluginKind::backward: return "backward";
    case PluginKind::optimizer: return "optimizer";
    case PluginKind::cost_model: return "cost_model";
    case PluginKind::fusion: return "fusion";
    case PluginKind::search: return "search";
    case PluginKind::estimator: return "estimator";
    case PluginKind::parallelism: return "parallelism";
    case PluginKind::quality: return "quality";
  }
  return "?";
}

std::vector<PluginKind> all_plugin_kinds() {
  return {PluginKind::frontend, PluginKind::backward, PluginKind::optimizer,
          PluginKind::cost_model, PluginKind::fusion, PluginKind::search, PluginKind::estimator,
          PluginKind::parallelism, PluginKind::quality};
}

Plugin::~Plugin() = default;

// -------------------------------------------------------------------------------------------- loading

namespace {
bool is_library_file(const fs::path& p) { return p.extension() == ".so"; }

/// Boost.DLL clears dlerror(); ask the loader again for its own explanation.
std::string loader_reason(const fs::path& file) {
  dlerror();
  void* h = dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (h) {
    dlclose(h);
    return "unknown loader error";
  }
  const char* e = dlerror();
  return e ? e : "unknown loader error";
}
}  // namespace

std::string abi_tag_hex(std::uint64_t tag) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(tag));
  return buf;
}

std::vector<PluginHandle> Registry::load_library(const fs::path& file) {
  const SourceLocation where{file.string()};
  auto lib = std::make_shared<LoadedLibrary>();
  boost::dll::fs::error_code ec;
  lib->library.load(boost::dll::fs::path(file.string()), ec, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
  if (ec) throw UserError(where, "cannot load plugin library: " + loader_reason(file));
  if (!lib->library.has(kPluginEntrySymbol)) {
    throw UserError(where, std::string("not a monet plugin: the library has no symbol '") + kPluginEntrySymbol +
                               "' (expected a library built with MONET_EXPORT_PLUGINS against plugin API " +
                               std::to_string(kPluginApiVersion) + ")");
  }
  using Entry = const MonetPluginLibrary*();
  const MonetPluginLibrary* entry = lib->library.get<Entry>(kPluginEntrySymbol)();
  if (!entry) throw UserError(where, std::string("'") + kPluginEntrySymbol + "' returned no plugin table");
  if (entry->api_version != kPluginApiVersion) {
    throw UserError(where, "plugin API version mismatch: the library was built against plugin API " +
                               std::to_string(entry->api_version) + " (monet " +
                               (entry->monet_version ? entry->monet_version : "?") + "), this monet " + kVersion +
                               " provides plugin API " + std::to_string(kPluginApiVersion) + "; rebuild the plugin");
  }
  // Same API number, different layouts: headers changed without a version bump, or another compiler/library ABI.
  if (entry->abi_tag != kPluginAbiTag) {
    throw UserError(where, "plugin ABI mismatch: the library was built against plugin API " +
                               std::to_string(entry->api_version) + " with ABI tag " + abi_tag_hex(entry->abi_tag) +
                               " (monet " + (entry->monet_version ? entry->monet_version : "?") + "), this monet " +
                               kVersion + " has plugin API " + std::to_string(kPluginApiVersion) + " with ABI tag " +
                               abi_tag_hex(kPluginAbiTag) +
                               " (the shared types differ in layout); rebuild the plugin against this monet");
  }
  std::vector<PluginHandle> out;
  for (std::size_t i = 0; i < entry->count; ++i) {
    const PluginDefinition* def = &entry->plugins[i];
    PluginHandle h;
    h.info = def->describe();
    h.library = file;
    h.definition = def;
    h.handle = lib;
    if (h.info.name.empty()) throw UserError(where, "plugin #" + std::to_string(i) + " has no name");
    out.push_back(std::move(h));
  }
  return out;
}

Plugin* Registry::create_raw(const PluginHandle& plugin, const ParamValues& params) {
  return plugin.definition->create(params);
}

// ------------------------------------------------------------------------------------------- discovery

std::vector<fs::path> Registry::default_search_path() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("MONET_PLUGIN_PATH"); env && *env) {
    std::string s(env);
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t colon = s.find(':', start);
      const std::string part = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!part.empty()) out.emplace_back(part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  const fs::path kernel_dir = fs::path(boost::dll::this_line_location().string()).lexically_normal().parent_path();
  out.push_back(kernel_dir / MONET_PLUGIN_SUBDIR);
  return out;
}

Registry::Registry(const std::vector<fs::path>& search_path) : search_path_(search_path) {
  std::vector<fs::path> files;
  for (const fs::path& entry : search_path_) {
    std::error_code ec;
    if (fs::is_regular_file(entry, ec)) {
      files.push_back(entry);
      continue;
    }
    if (!fs::is_directory(entry, ec)) continue;
    std::vector<fs::path> in_dir;
    for (const auto& f : fs::directory_iterator(entry, ec)) {
      if (f.is_regular_file() && is_library_file(f.path())) in_dir.push_back(f.path());
    }
    std::sort(in_dir.begin(), in_dir.end());  // deterministic order
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  std::set<fs::path> seen;
  for (const fs::path& f : files) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(f, ec);
    if (!seen.insert(canonical).second) continue;
    try {
      for (PluginHandle& h : load_library(f)) {
        if (find(h.info.kind, h.info.name)) continue;  // an earlier entry of the search path wins
        plugins_.push_back(std::move(h));
      }
    } catch (const UserError& e) {
      failures_.push_back(PluginLoadFailure{f, e.message()});
    }
  }
}

Registry& Registry::global() {
  // Never destroyed: unloading every plugin library at exit only costs time (a few ms of a 0.1-s run), and no
  // object a plugin made can then outlive its code in another static's destructor. The OS unmaps them.
  static Registry* registry = new Registry(default_search_path());
  return *registry;
}

const PluginHandle* Registry::find(PluginKind kind, std::string_view name) const {
  for (const PluginHandle& p : plugins_) {
    if (p.info.kind == kind && p.info.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> Registry::names(PluginKind kind) const {
  std::vector<std::string> out;
  for (const PluginHandle& p : plugins_) {
    if (p.info.kind == kind) out.push_back(p.info.name);
  }
  return out;
}

const PluginHandle* Registry::frontend_for(const fs::path& file) const {
  const std::string ext = file.extension().string();
  const PluginHandle* by_extension = nullptr;
  for (const PluginHandle& p : plugins_) {
    if (p.info.kind != PluginKind::frontend || by_extension) continue;
    for (const std::string& x : p.info.file_extensions) {
      if (x == ext) by_extension = &p;
    }
  }
  if (ext != ".toml") return by_extension;
  // A TOML workload generated from its dimensions names its generator, a frontend plugin of its own:
  // [workload] generator = "gpt". A file that does not parse goes to the extension's frontend, which says why.
  std::optional<TomlDocument> doc;
  try {
    doc = TomlDocument::parse_file(file);
  } catch (const UserError&) {
    return by_extension;
  }
  const auto* workload = doc->root().get_as<toml::table>("workload");
  const toml::node* generator = workload ? workload->get("generator") : nullptr;
  if (!generator) return by_extension;
  const SourceLocation where = location_of(*generator, doc->file());
  const std::optional<std::string> name = generator->value<std::string>();
  if (!name) {
    throw UserError(where, "workload.generator: expected the name of a frontend plugin (a string), got " + toml_text(*generator));
  }
  try {
    return &require(PluginKind::frontend, *name, where);
  } catch (const UserError& e) {
    throw UserError(where, "workload.generator: " + e.message());
  }
}

std::string Registry::frontend_extensions() const {
  std::vector<std::string> known;
  for (const PluginHandle& p : plugins_) {
    if (p.info.kind != PluginKind::frontend) continue;
    for (const std::string& x : p.info.file_extensions) known.push_back(p.info.name + " (" + x + ")");
  }
  return known.empty() ? "none" : join(known);
}

const PluginHandle& Registry::require(PluginKind kind, std::string_view name, const SourceLocation& where) const {
  if (const PluginHandle* p = find(kind, name)) return *p;
  const auto available = names(kind);
  std::string msg = "no " + to_string(kind) + " plugin named '" + std::string(name) + "'" +
                    did_you_mean(name, available) + "; available: " +
                    (available.empty() ? std::string("none") : join(available, ", "));
  for (const PluginLoadFailure& f : failures_) {
    msg += "; note: " + f.library.string() + " could not be used: " + f.reason;
  }
  throw UserError(where, msg);
}

}  // namespace monet
