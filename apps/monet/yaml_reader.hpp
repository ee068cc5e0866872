#pragma once
// A YAML file read with yaml-cpp, with errors located at file:line:column (for the import commands).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "monet/util/error.hpp"
#include "monet/util/strings.hpp"

namespace monet::cli {

class Yaml {
 public:
  explicit Yaml(const std::filesystem::path& file) : file_(file.string()) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) throw UserError(SourceLocation{file_}, "file not found");
    try {
      root_ = YAML::LoadFile(file_);
    } catch (const YAML::Exception& e) {
      throw UserError(where(e.mark), "YAML syntax: " + e.msg);
    }
  }
  [[nodiscard]] const YAML::Node& root() const { return root_; }
  [[nodiscard]] SourceLocation where(const YAML::Mark& m) const {
    if (m.is_null()) return SourceLocation{file_};
    return SourceLocation{file_, static_cast<std::uint32_t>(m.line + 1), static_cast<std::uint32_t>(m.column + 1)};
  }
  /// A node's place; the file alone for nodes without one (a missing key of a const map has no mark at all).
  [[nodiscard]] SourceLocation where(const YAML::Node& n) const {
    try {
      return where(n.Mark());
    } catch (const YAML::Exception&) {
      return SourceLocation{file_};
    }
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const { throw UserError(where(n), message); }
  YAML::Node need(const YAML::Node& map, const std::string& key, const std::string& what) const {
    if (!map.IsMap()) fail(map, "expected a mapping with '" + key + "'");
    YAML::Node n = get(map, key);
    if (!n) fail(map, "missing '" + key + "' (" + what + ")");
    return n;
  }
  /// The value of a key; when a key is repeated the last one wins, as in ZigZag's PyYAML loader.
  static YAML::Node get(const YAML::Node& map, const std::string& key) {
    YAML::Node found(YAML::NodeType::Undefined);  // a default Node is a defined null: `!found` would be false
    if (!map.IsMap()) return found;
    for (const auto& kv : map) {
      if (kv.first.as<std::string>() == key) found.reset(kv.second);
    }
    return found;
  }
  /// Rejects keys ZigZag's validator does not know (a typo would otherwise be dropped silently).
  void check_keys(const YAML::Node& map, std::initializer_list<const char*> known, const std::string& where) const {
    if (!map.IsMap()) return;
    std::vector<std::string> names(known.begin(), known.end());
    for (const auto& kv : map) {
      const std::string k = kv.first.as<std::string>();
      if (std::find(names.begin(), names.end(), k) == names.end()) {
        fail(kv.first, "unknown key '" + k + "' in " + where + did_you_mean(k, names) + "; valid keys: " + join(names));
      }
    }
  }
  template <class T>
  T as(const YAML::Node& n, const std::string& what) const {
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, "expected " + what);
    }
  }

 private:
  std::string file_;
  YAML::Node root_;
};

/// Runs an importer on `file`: a yaml-cpp error it did not locate itself (a key looked up in a scalar, a value
/// converted deep inside a node) becomes a located UserError, never an internal error (found by fuzz_yaml).
template <class F>
auto located_yaml_errors(const std::filesystem::path& file, F&& run) -> decltype(run()) {
  try {
    return run();
  } catch (const YAML::Exception& e) {
    const SourceLocation at = e.mark.is_null()
                                  ? SourceLocation{file.string()}
                                  : SourceLocation{file.string(), static_cast<std::uint32_t>(e.mark.line + 1),
                                                   static_cast<std::uint32_t>(e.mark.column + 1)};
    throw UserError(at, "unexpected YAML structure: " + e.msg);
  }
}

}  // namespace monet::cli
