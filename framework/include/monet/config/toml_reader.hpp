#pragma once
// Strict reading of user TOML files. Every getter checks the type and bounds of one key and marks it as
// used; finish() rejects keys nobody asked for, naming the closest valid ones. Every error names
// file:line:column of the offending node (toml++ keeps a source region on each node).
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "monet/config/bounds.hpp"
#include "monet/util/error.hpp"
#include "monet/util/export.hpp"
#include "monet/util/strings.hpp"  // format_number, which used to be declared here

namespace monet {

/// A parsed TOML file. Parse errors, missing and unreadable files become UserErrors with the location.
class MONET_API TomlDocument {
 public:
  static TomlDocument parse_file(const std::filesystem::path& path);
  static TomlDocument parse_string(std::string_view text, const std::string& display_name);

  /// An independent copy that keeps every node's source location (toml++ copies drop them: it re-parses).
  [[nodiscard]] TomlDocument clone() const;

  [[nodiscard]] const toml::table& root() const { return *root_; }
  [[nodiscard]] toml::table& root() { return *root_; }
  [[nodiscard]] const std::string& file() const { return file_; }  // as given, for messages
  /// Directory that relative paths in this file are resolved against.
  [[nodiscard]] const std::filesystem::path& base_dir() const { return base_dir_; }

 private:
  std::shared_ptr<toml::table> root_;
  std::shared_ptr<const std::string> text_;  // what was parsed, for clone()
  std::string file_;
  std::filesystem::path base_dir_;
};

/// A TOML value parsed from `text` whose node reports `where` as its source (for values that move from one
/// document to another, or come from the command line, so that errors about them point where they were written).
/// Throws UserError (at `where`) when the text is not a TOML value.
MONET_API std::unique_ptr<toml::node> located_value(std::string_view text, const SourceLocation& where);
/// The TOML text of a value ("3", "0.5", "\"x\"", "[1, 2]", "{ a = 1 }").
MONET_API std::string toml_text(const toml::node& node);

/// The location of a node in a file.
MONET_API SourceLocation location_of(const toml::node& node, const std::string& file);
/// "a string", "an integer", ... for messages.
MONET_API std::string toml_type_name(const toml::node& node);

/// A view of one table of a user file with strict, typed accessors.
class MONET_API TableReader {
 public:
  /// `path` is the dotted name of the table used in messages ("workload", "cores[1]", "" for the root).
  TableReader(const toml::table& table, std::string file, std::string path, std::filesystem::path base_dir = {});

  // --- presence ---
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] const toml::node* node(std::string_view key);  // marks used; nullptr when absent
  void mark_used(std::string_view key);

  // --- scalars (optional: nullopt when absent; required: error when absent) ---
  std::optional<std::string> string(std::string_view key, std::string_view what = "a string");
  std::string required_string(std::string_view key, std::string_view what = "a string");
  std::optional<std::int64_t> integer(std::string_view key, Bounds bounds = {});
  std::int64_t required_integer(std::string_view key, Bounds bounds = {});
  std::optional<double> number(std::string_view key, Bounds bounds = {});  // integers accepted
  double required_number(std::string_view key, Bounds bounds = {});
  std::optional<bool> boolean(std::string_view key);
  /// A string that must be one of `choices`.
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& choices);
  /// A path relative to the file's directory; with must_exist the file must be there and readable.
  std::optional<std::filesystem::path> path(std::string_view key, bool must_exist = true);
  std::filesystem::path required_path(std::string_view key, bool must_exist = true);

  // --- arrays ---
  std::optional<std::vector<std::string>> string_list(std::string_view key);
  std::optional<std::vector<std::int64_t>> integer_list(std::string_view key, Bounds bounds = {});
  std::optional<std::vector<double>> number_list(std::string_view key, Bounds bounds = {});
  /// An integer or a list of integers of length n (a scalar is repeated n times).
  std::optional<std::vector<std::int64_t>> integer_or_list(std::string_view key, std::size_t n, Bounds bounds = {});

  // --- nested ---
  std::optional<TableReader> table(std::string_view key);
  TableReader required_table(std::string_view key);
  /// An array of tables ([[key]]); empty when absent.
  std::vector<TableReader> table_array(std::string_view key);

  /// Rejects every key that no accessor asked for. `extra_valid` adds names for the suggestion list.
  void finish(const std::vector<std::string>& extra_valid = {}) const;
  /// Keys present in the table that no accessor has asked for yet.
  [[nodiscard]] std::vector<std::string> unused_keys() const;
  /// All keys present in the table, in file order.
  [[nodiscard]] std::vector<std::string> keys() const;

  // --- messages ---
  [[nodiscard]] SourceLocation where() const;
  [[nodiscard]] SourceLocation where(std::string_view key) const;
  /// Location of a key's name (where(key) is the location of its value).
  [[nodiscard]] SourceLocation key_location(std::string_view key) const;
  /// "workload.file" style name of a key of this table.
  [[nodiscard]] std::string key_name(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_table(const std::string& message) const;
  /// A required key is absent: points at a present key that looks like a typo of it, if any.
  [[noreturn]] void fail_missing(std::string_view key, std::string_view what) const;

  [[nodiscard]] const toml::table& raw() const { return *table_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::filesystem::path& base_dir() const { return base_dir_; }

 private:
  double number_value(std::string_view key, const toml::node& n, const Bounds& bounds) const;
  std::int64_t integer_value(std::string_view key, const toml::node& n, const Bounds& bounds) const;

  const toml::table* table_;
  std::string file_;
  std::string path_;
  std::filesystem::path base_dir_;
  std::shared_ptr<std::set<std::string, std::less<>>> used_;
};

}  // namespace monet
