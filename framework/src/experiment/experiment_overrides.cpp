// --set KEY=VALUE and --unset KEY: parsed into changes (dotted keys as in TOML) and applied to an experiment's
// table; a change whose key reaches into the accelerator file (architecture.PATH) is architecture_reader.cpp's.
#include "experiment_readers.hpp"
#include "monet/config/params.hpp"

namespace monet {

namespace detail {

thread_local std::set<std::string> replaced_plugins;

}  // namespace detail

namespace {

std::vector<std::string> key_parts(const std::string& key, const std::string& what) {
  // Dotted as in TOML: a quoted segment ("training.peak_activation_bytes") keeps its dots.
  std::vector<std::string> parts(1);
  bool quoted = false, was_quoted = false;
  for (const char ch : key) {
    if (ch == '"') {
      if (!quoted && !parts.back().empty()) throw UserError(what + ": a quote in the middle of a key segment in '" + key + "'");
      quoted = !quoted;
      was_quoted = true;
    } else if (ch == '.' && !quoted) {
      if (parts.back().empty() && !was_quoted) throw UserError(what + ": empty key segment in '" + key + "'");
      parts.emplace_back();
      was_quoted = false;
    } else {
      parts.back() += ch;
    }
  }
  if (quoted) throw UserError(what + ": unterminated quote in '" + key + "'");
  if (parts.back().empty() && !was_quoted) throw UserError(what + ": empty key segment in '" + key + "'");
  return parts;
}

}  // namespace

std::string architecture_path(const std::string& key) {
  const std::string prefix = "architecture.";
  if (key.rfind(prefix, 0) != 0) return {};
  const std::string rest = key.substr(prefix.size());
  const std::string first = rest.substr(0, rest.find('.'));
  // architecture.set.PATH is the same change as architecture.PATH: after the file's [architecture.set], so it wins.
  if (first == "set" && rest.size() > 4) return rest.substr(4);
  return first == "file" || first == "system" || first == "system_set" || first == "set" || first == "unset" ? std::string{} : rest;
}

std::string workload_set_path(const std::string& key) {
  const std::string prefix = "workload.set.";
  return key.rfind(prefix, 0) == 0 && key.size() > prefix.size() ? key.substr(prefix.size()) : std::string{};
}

namespace {

/// The value of a --set: TOML, else a bare string (quoted, so that it keeps its --set origin for messages).
std::shared_ptr<const toml::node> override_value(const std::string& value, const SourceLocation& where) {
  try {
    return std::shared_ptr<const toml::node>(located_value(value, where));
  } catch (const UserError&) {
    return std::shared_ptr<const toml::node>(located_value(to_string(ParamValue(value)), where));
  }
}

}  // namespace

void apply_override(toml::table& root, const std::string& assignment) {
  const Change c = parse_set(assignment);
  apply_change(root, c);
}

Change parse_set(const std::string& assignment) {
  const std::string origin = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UserError("--set '" + assignment + "': expected section.key=value");
  }
  const std::string key = assignment.substr(0, eq);
  (void)key_parts(key, "--set '" + assignment + "'");
  return Change{key, override_value(assignment.substr(eq + 1), SourceLocation{origin, 1, 9}), SourceLocation{origin}};
}

Change parse_unset(const std::string& key) {
  (void)key_parts(key, "--unset '" + key + "'");
  return Change{key, nullptr, SourceLocation{"--unset " + key}};
}

void apply_change(toml::table& root, const Change& c) {
  const std::vector<std::string> parts = key_parts(c.key, c.where.str());
  toml::table* table = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = table->get(parts[i]);
    if (!n) {
      if (!c.value) throw UserError(c.where, "the experiment has no table '" + parts[i] + "'");
      table->insert(parts[i], toml::table{});
      n = table->get(parts[i]);
    }
    if (!n->is_table()) throw UserError(c.where, "'" + parts[i] + "' is " + toml_type_name(*n) + ", not a table");
    table = n->as_table();
  }
  if (!c.value) {
    if (!table->contains(parts.back())) throw UserError(c.where, "the experiment does not set '" + c.key + "'");
    table->erase(parts.back());
    return;
  }
  if (parts.back() == "plugin" && table->contains("plugin")) {
    const toml::node* old = table->get("plugin");
    if (!(old->is_string() && c.value->is_string() && old->as_string()->get() == c.value->as_string()->get())) {
      std::string section = parts.front();
      for (std::size_t i = 1; i + 1 < parts.size(); ++i) section += "." + parts[i];
      detail::replaced_plugins.insert(section);
    }
  }
  SourceLocation at = location_of(*c.value, c.where.file);
  if (at.line == 0) at = c.where;
  table->insert_or_assign(parts.back(), std::move(*located_value(toml_text(*c.value), at)));
}

}  // namespace monet
