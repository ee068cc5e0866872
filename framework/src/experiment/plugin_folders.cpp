#include "monet/experiment/plugin_folders.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "monet/experiment/experiment.hpp"

namespace monet {

namespace fs = std::filesystem;

std::vector<fs::path> read_plugin_path(TableReader& root) {
  std::optional<TableReader> t = root.table("plugins");
  if (!t) return {};
  std::vector<fs::path> out;
  if (const toml::node* n = t->raw().get("path")) {
    const toml::array* list = n->as_array();
    // A single string is the common slip: the message says what to write instead.
    if (!list) t->fail("path", "expected a list of plugin folders (path = [\"folder\"]), got " + toml_type_name(*n));
    for (const toml::node& entry : *list) {
      const SourceLocation at = location_of(entry, t->file());
      if (!entry.is_string()) {
        throw UserError(at, t->key_name("path") + ": expected a folder path (a string), found " + toml_type_name(entry));
      }
      const std::string text = entry.as_string()->get();
      if (text.empty()) throw UserError(at, t->key_name("path") + ": expected a folder path, got an empty string");
      fs::path p(text);
      if (p.is_relative()) p = t->base_dir() / p;
      p = fs::absolute(p).lexically_normal();
      std::error_code ec;
      // A folder, or one library file (as on MONET_PLUGIN_PATH); a missing one is a typo, not "no plugins here".
      if (!fs::exists(p, ec)) throw UserError(at, t->key_name("path") + ": plugin folder not found: " + p.string());
      out.push_back(p);
    }
    t->mark_used("path");
  }
  t->finish();
  return out;
}

std::vector<fs::path> experiment_plugin_path(const fs::path& file, const std::vector<std::string>& sets,
                                             const std::vector<std::string>& unsets) {
  TomlDocument doc = TomlDocument::parse_file(file);
  for (const std::string& u : unsets) {
    const Change c = parse_unset(u);
    if (architecture_path(c.key).empty()) apply_change(doc.root(), c);
  }
  for (const std::string& s : sets) {
    const Change c = parse_set(s);
    if (architecture_path(c.key).empty()) apply_change(doc.root(), c);
  }
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  return read_plugin_path(root);
}

const Registry& registry_with(const std::vector<fs::path>& folders) {
  if (folders.empty()) return Registry::global();
  static std::mutex mutex;
  static std::map<std::vector<fs::path>, std::unique_ptr<Registry>> registries;
  std::lock_guard lock(mutex);
  std::unique_ptr<Registry>& r = registries[folders];
  if (!r) {
    std::vector<fs::path> search = folders;
    for (fs::path& p : Registry::default_search_path()) search.push_back(std::move(p));
    r = std::make_unique<Registry>(search);
  }
  return *r;
}

}  // namespace monet
