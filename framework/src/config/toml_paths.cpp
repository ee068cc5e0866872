// Dotted paths into a TOML document (monet/config/toml_paths.hpp): the one path logic of [architecture.set],
// hardware genes and [workload.set].
#include "monet/config/toml_paths.hpp"

#include <algorithm>
#include <cctype>

#include "monet/util/strings.hpp"

namespace monet {

namespace {

/// The entries of an array of tables that a selector names ("*" = all).
std::vector<toml::table*> select_entries(toml::array& arr, const std::string& selector, const std::string& what,
                                         const SourceLocation& where) {
  std::vector<toml::table*> out;
  std::vector<std::string> names;
  for (toml::node& n : arr) {
    toml::table* t = n.as_table();
    if (!t) continue;
    names.push_back(toml_entry_name(*t));
    if (selector == "*" || names.back() == selector) out.push_back(t);
  }
  if (out.empty()) {
    throw UserError(where, "no [[" + what + "]] entry named '" + selector + "'" + did_you_mean(selector, names) +
                               "; entries: " + join(names));
  }
  return out;
}

/// Applies `op` at `segments` below `table` (every entry that a selector names). `op` gets the table holding
/// the last key and that key (with its list index, -1 for none).
void walk(toml::table& table, const std::vector<std::string>& segments, std::size_t i, const std::string& prefix,
          const SourceLocation& where, const TomlPathOp& op) {
  const auto [key, index] = toml_path_subscript(segments[i], where);
  const std::string here = prefix.empty() ? key : prefix + "." + key;
  if (i + 1 == segments.size()) {
    op(table, key, index, here);
    return;
  }
  toml::node* n = table.get(key);
  if (!n) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : table) keys.emplace_back(k.str());
    throw UserError(where, "'" + here + "' does not exist" + did_you_mean(key, keys) +
                               (keys.empty() ? "" : "; keys here: " + join(keys)));
  }
  if (index >= 0) {
    toml::array* arr = n->as_array();
    if (!arr || static_cast<std::size_t>(index) >= arr->size() || !(*arr)[static_cast<std::size_t>(index)].is_table()) {
      throw UserError(where, "'" + here + "' has no table at index " + std::to_string(index));
    }
    walk(*(*arr)[static_cast<std::size_t>(index)].as_table(), segments, i + 1, here + "[" + std::to_string(index) + "]",
         where, op);
    return;
  }
  if (toml::table* t = n->as_table()) {
    walk(*t, segments, i + 1, here, where, op);
    return;
  }
  toml::array* arr = n->as_array();
  if (arr && arr->is_array_of_tables()) {
    for (toml::table* t : select_entries(*arr, segments[i + 1], key, where)) {
      if (i + 2 == segments.size()) {
        throw UserError(where, "'" + here + "." + segments[i + 1] + "' is a table: name one of its keys");
      }
      walk(*t, segments, i + 2, here + "." + segments[i + 1], where, op);
    }
    return;
  }
  throw UserError(where, "'" + here + "' is " + toml_type_name(*n) + ", not a table");
}

}  // namespace

std::vector<std::string> split_toml_path(std::string_view path, const SourceLocation& where) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    out.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (out.back().empty()) throw UserError(where, "empty segment in the path '" + std::string(path) + "'");
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

std::pair<std::string, long> toml_path_subscript(const std::string& segment, const SourceLocation& where) {
  const auto open = segment.find('[');
  if (open == std::string::npos) return {segment, -1};
  if (segment.back() != ']' || open == 0) throw UserError(where, "malformed list index in '" + segment + "'");
  const std::string digits = segment.substr(open + 1, segment.size() - open - 2);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    throw UserError(where, "list index in '" + segment + "' must be a non-negative integer");
  }
  return {segment.substr(0, open), std::stol(digits)};
}

std::string toml_entry_name(const toml::table& t) {
  const toml::node* n = t.get("name");
  return n && n->is_string() ? n->as_string()->get() : std::string{};
}

void walk_toml_path(toml::table& root, const std::vector<std::string>& segments, const SourceLocation& where,
                    const TomlPathOp& op) {
  walk(root, segments, 0, "", where, op);
}

void set_toml_path(toml::table& root, const std::vector<std::string>& segments, const toml::node& value,
                   const SourceLocation& where) {
  walk(root, segments, 0, "", where, [&](toml::table& t, const std::string& key, long index, const std::string& here) {
    SourceLocation at = location_of(value, where.file);
    if (at.line == 0) at = where;
    std::unique_ptr<toml::node> copy = located_value(toml_text(value), at);
    if (index < 0) {
      if (t.contains(key) || where.line == 0) {
        t.insert_or_assign(key, std::move(*copy));
        return;
      }
      // A key the file does not have is located where the path was written: a reader that does not take it says so there.
      toml::source_region region;
      region.begin = {where.line, where.column};
      region.end = region.begin;
      region.path = std::make_shared<const std::string>(where.file);
      t.insert(toml::key(key, std::move(region)), std::move(*copy));
      return;
    }
    toml::array* arr = t.get(key) ? t.get(key)->as_array() : nullptr;
    if (!arr || static_cast<std::size_t>(index) >= arr->size()) {
      throw UserError(where, "'" + here + "' has no element " + std::to_string(index) +
                                 (arr ? " (it has " + std::to_string(arr->size()) + ")" : " (it is not a list)"));
    }
    arr->replace(arr->begin() + index, std::move(*copy));
  });
}

void unset_toml_path(toml::table& root, const std::vector<std::string>& segments, const SourceLocation& where) {
  walk(root, segments, 0, "", where, [&](toml::table& t, const std::string& key, long index, const std::string& here) {
    if (index >= 0) throw UserError(where, "cannot remove one element of the list '" + here + "'; set the whole list");
    if (!t.contains(key)) throw UserError(where, "'" + here + "' is not set");
    t.erase(key);
  });
}

std::optional<std::string> toml_path_text(const TomlDocument& doc, const std::vector<std::string>& segments) {
  std::optional<std::string> found;
  const SourceLocation nowhere{"<value_text>"};
  // walk() takes a mutable table but this lookup changes nothing; a clone() would re-parse the file's text and lose
  // the document's changes ([workload.set]).
  auto& root = const_cast<toml::table&>(doc.root());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  try {
    walk(root, segments, 0, "", nowhere, [&](toml::table& t, const std::string& key, long index, const std::string&) {
      if (found) return;
      const toml::node* n = t.get(key);
      if (n && index >= 0) {
        n = n->is_array() && static_cast<std::size_t>(index) < n->as_array()->size() ? n->as_array()->get(static_cast<std::size_t>(index)) : nullptr;
      }
      if (n) found = toml_text(*n);
    });
  } catch (const UserError&) {
    return std::nullopt;
  }
  return found;
}

void for_each_set_path(TableReader& set, const TomlSetLeaf& leaf) {
  std::function<void(const std::string&, const toml::node&, const SourceLocation&)> change =
      [&](const std::string& path, const toml::node& value, const SourceLocation& where) {
        const toml::table* sub = value.as_table();
        if (sub == nullptr || sub->is_inline()) {
          leaf(path, value, where);
          return;
        }
        for (const auto& [k, v] : *sub) change(path + "." + std::string(k.str()), v, where);
      };
  for (const std::string& path : set.keys()) {
    (void)set.node(path);  // marks it used
    change(path, *set.raw().get(path), set.key_location(path));
  }
  set.finish();
}

}  // namespace monet
