#include "monet/config/toml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------- documents

TomlDocument TomlDocument::parse_file(const fs::path& path) {
  const std::string display = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError(SourceLocation{display}, "file not found");
  if (fs::is_directory(path, ec)) throw UserError(SourceLocation{display}, "is a directory, expected a TOML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(SourceLocation{display}, "cannot read the file (permission denied?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  TomlDocument doc = parse_string(buffer.str(), display);
  doc.base_dir_ = fs::absolute(path).parent_path();
  return doc;
}

TomlDocument TomlDocument::parse_string(std::string_view text, const std::string& display_name) {
  TomlDocument doc;
  doc.file_ = display_name;
  doc.base_dir_ = fs::current_path();
  doc.text_ = std::make_shared<const std::string>(text);
  try {
    doc.root_ = std::make_shared<toml::table>(toml::parse(*doc.text_, std::string_view{display_name}));
  } catch (const toml::parse_error& e) {
    SourceLocation where{display_name, static_cast<std::uint32_t>(e.source().begin.line),
                         static_cast<std::uint32_t>(e.source().begin.column)};
    throw UserError(where, "TOML syntax: " + std::string(e.description()));
  }
  return doc;
}

TomlDocument TomlDocument::clone() const {
  TomlDocument copy = *this;
  copy.root_ = std::make_shared<toml::table>(toml::parse(*text_, std::string_view{file_}));
  return copy;
}

std::unique_ptr<toml::node> located_value(std::string_view text, const SourceLocation& where) {
  // Padding puts the value at where.line:where.column of a document named where.file: the parser then gives
  // the node exactly that source region.
  const std::uint32_t line = std::max<std::uint32_t>(where.line, 1);
  const std::uint32_t column = std::max<std::uint32_t>(where.column, 5);
  std::string doc(line - 1, '\n');
  doc += "v";
  doc.append(column - 4, ' ');
  doc += "= ";
  doc += text;
  toml::table parsed;
  try {
    parsed = toml::parse(doc, std::string_view{where.file});
  } catch (const toml::parse_error& e) {
    throw UserError(where, "expected a TOML value, got '" + std::string(text) + "': " + std::string(e.description()));
  }
  if (parsed.size() != 1 || !parsed.contains("v")) {
    throw UserError(where, "expected one TOML value, got '" + std::string(text) + "'");
  }
  std::unique_ptr<toml::node> out;
  parsed.for_each([&](const toml::key&, auto&& v) { out = toml::impl::make_node(std::move(v)); });
  return out;
}

std::string toml_text(const toml::node& node) {
  std::ostringstream s;
  toml::table t;
  t.insert("v", node);
  s << toml::toml_formatter(t, toml::format_flags::none);
  std::string text = s.str();
  const auto eq = text.find('=');
  text = eq == std::string::npos ? text : text.substr(eq + 1);
  return trim(text);
}

SourceLocation location_of(const toml::node& node, const std::string& file) {
  const auto& src = node.source();
  // Values injected by --set carry their own source name ("--set section.key").
  const std::string& origin = src.path && !src.path->empty() ? *src.path : file;
  return SourceLocation{origin, static_cast<std::uint32_t>(src.begin.line), static_cast<std::uint32_t>(src.begin.column)};
}

std::string toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

// ------------------------------------------------------------------------------------------- TableReader

namespace {
/// What a number key expects: "a finite number (a value > 0)" when inf or nan was given, else the bounds.
std::string expected_number(const Bounds& bounds, double got) {
  const std::string range = bounds.describe();
  if (std::isfinite(got) && !range.empty()) return range;
  return "a finite number" + (range.empty() ? "" : " (" + range + ")");
}
}  // namespace

TableReader::TableReader(const toml::table& table, std::string file, std::string path, fs::path base_dir)
    : table_(&table),
      file_(std::move(file)),
      path_(std::move(path)),
      base_dir_(std::move(base_dir)),
      used_(std::make_shared<std::set<std::string, std::less<>>>()) {}

bool TableReader::has(std::string_view key) const { return table_->contains(key); }

const toml::node* TableReader::node(std::string_view key) {
  mark_used(key);
  return table_->get(key);
}

void TableReader::mark_used(std::string_view key) { used_->emplace(key); }

std::string TableReader::key_name(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

SourceLocation TableReader::where() const {
  SourceLocation loc = location_of(*table_, file_);
  if (loc.line == 0) loc.file = file_;
  return loc;
}

SourceLocation TableReader::where(std::string_view key) const {
  auto it = table_->find(key);
  if (it == table_->end()) return where();
  return location_of(it->second, file_);  // the value: that is what has to change
}

void TableReader::fail(std::string_view key, const std::string& message) const {
  throw UserError(where(key), key_name(key) + ": " + message);
}

void TableReader::fail_table(const std::string& message) const {
  throw UserError(where(), (path_.empty() ? std::string() : "[" + path_ + "]: ") + message);
}

SourceLocation TableReader::key_location(std::string_view key) const {
  auto it = table_->find(key);
  if (it == table_->end()) return where();
  const auto& ks = it->first.source();
  if (ks.begin.line == 0) return location_of(it->second, file_);
  return SourceLocation{ks.path && !ks.path->empty() ? *ks.path : file_, static_cast<std::uint32_t>(ks.begin.line),
                        static_cast<std::uint32_t>(ks.begin.column)};
}

void TableReader::fail_missing(std::string_view key, std::string_view what) const {
  const std::string k(key);
  for (const std::string& present : unused_keys()) {
    if (!closest_names(present, {k}).empty()) {
      throw UserError(key_location(present), "unknown key '" + key_name(present) + "' (did you mean '" + k +
                                          "'?); '" + k + "' (" + std::string(what) + ") is required here");
    }
  }
  fail_table("missing required key '" + k + "' (" + std::string(what) + ")");
}

std::optional<std::string> TableReader::string(std::string_view key, std::string_view what) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) fail(key, "expected " + std::string(what) + ", got " + toml_type_name(*n));
  return n->as_string()->get();
}

std::string TableReader::required_string(std::string_view key, std::string_view what) {
  auto v = string(key, what);
  if (!v) fail_missing(key, what);
  return *v;
}

double TableReader::number_value(std::string_view key, const toml::node& n, const Bounds& bounds) const {
  double v = 0;
  if (n.is_integer()) {
    v = static_cast<double>(n.as_integer()->get());
  } else if (n.is_floating_point()) {
    v = n.as_floating_point()->get();
  } else {
    fail(key, "expected a number" + (bounds.describe().empty() ? "" : " (" + bounds.describe() + ")") + ", got " +
                  toml_type_name(n));
  }
  if (!bounds.contains(v)) fail(key, "expected " + expected_number(bounds, v) + ", got " + format_number(v));
  return v;
}

std::int64_t TableReader::integer_value(std::string_view key, const toml::node& n, const Bounds& bounds) const {
  if (!n.is_integer()) {
    std::string got = toml_type_name(n);
    if (n.is_floating_point()) got += " (" + format_number(n.as_floating_point()->get()) + ")";
    fail(key, "expected an integer" + (bounds.describe().empty() ? "" : " (" + bounds.describe() + ")") +
                  ", got " + got);
  }
  const std::int64_t v = n.as_integer()->get();
  if (!bounds.contains(static_cast<double>(v))) fail(key, "expected " + bounds.describe() + ", got " + std::to_string(v));
  return v;
}

std::optional<std::int64_t> TableReader::integer(std::string_view key, Bounds bounds) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  return integer_value(key, *n, bounds);
}

std::int64_t TableReader::required_integer(std::string_view key, Bounds bounds) {
  auto v = integer(key, bounds);
  if (!v) fail_missing(key, "an integer");
  return *v;
}

std::optional<double> TableReader::number(std::string_view key, Bounds bounds) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  return number_value(key, *n, bounds);
}

double TableReader::required_number(std::string_view key, Bounds bounds) {
  auto v = number(key, bounds);
  if (!v) fail_missing(key, "a number");
  return *v;
}

std::optional<bool> TableReader::boolean(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) fail(key, "expected true or false, got " + toml_type_name(*n));
  return n->as_boolean()->get();
}

std::optional<std::string> TableReader::choice(std::string_view key, const std::vector<std::string>& choices) {
  auto v = string(key, "one of " + join(choices, ", ", true));
  if (!v) return v;
  if (std::find(choices.begin(), choices.end(), *v) == choices.end()) {
    fail(key, "'" + *v + "' is not one of " + join(choices, ", ", true) + did_you_mean(*v, choices));
  }
  return v;
}

std::optional<fs::path> TableReader::path(std::string_view key, bool must_exist) {
  auto v = string(key, "a file path");
  if (!v) return std::nullopt;
  if (v->empty()) fail(key, "expected a file path, got an empty string");
  fs::path p(*v);
  if (p.is_relative()) p = base_dir_ / p;
  p = p.lexically_normal();
  if (must_exist) {
    std::error_code ec;
    if (!fs::exists(p, ec)) fail(key, "file not found: " + p.string());
    if (fs::is_directory(p, ec)) fail(key, "is a directory, expected a file: " + p.string());
    std::ifstream probe(p);
    if (!probe) fail(key, "cannot read " + p.string());
  }
  return p;
}

fs::path TableReader::required_path(std::string_view key, bool must_exist) {
  auto v = path(key, must_exist);
  if (!v) fail_missing(key, "a file path");
  return *v;
}

std::optional<std::vector<std::string>> TableReader::string_list(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of strings, got " + toml_type_name(*n));
  std::vector<std::string> out;
  for (const toml::node& e : *a) {
    if (!e.is_string()) {
      throw UserError(location_of(e, file_), key_name(key) + ": expected an array of strings, found " +
                                                 toml_type_name(e) + " in it");
    }
    out.push_back(e.as_string()->get());
  }
  return out;
}

std::optional<std::vector<std::int64_t>> TableReader::integer_list(std::string_view key, Bounds bounds) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of integers, got " + toml_type_name(*n));
  std::vector<std::int64_t> out;
  for (const toml::node& e : *a) {
    if (!e.is_integer()) {
      throw UserError(location_of(e, file_), key_name(key) + ": expected an array of integers, found " +
                                                 toml_type_name(e) + " in it");
    }
    const std::int64_t v = e.as_integer()->get();
    if (!bounds.contains(static_cast<double>(v))) {
      throw UserError(location_of(e, file_),
                      key_name(key) + ": every element must be " + bounds.describe() + ", got " + std::to_string(v));
    }
    out.push_back(v);
  }
  return out;
}

std::optional<std::vector<double>> TableReader::number_list(std::string_view key, Bounds bounds) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of numbers, got " + toml_type_name(*n));
  std::vector<double> out;
  for (const toml::node& e : *a) {
    double v = 0;
    if (e.is_integer()) {
      v = static_cast<double>(e.as_integer()->get());
    } else if (e.is_floating_point()) {
      v = e.as_floating_point()->get();
    } else {
      throw UserError(location_of(e, file_),
                      key_name(key) + ": expected an array of numbers, found " + toml_type_name(e) + " in it");
    }
    if (!bounds.contains(v)) {
      throw UserError(location_of(e, file_),
                      key_name(key) + ": every element must be " + expected_number(bounds, v) + ", got " + format_number(v));
    }
    out.push_back(v);
  }
  return out;
}

std::optional<std::vector<std::int64_t>> TableReader::integer_or_list(std::string_view key, std::size_t n,
                                                                      Bounds bounds) {
  const toml::node* nd = table_->get(key);
  if (!nd) {
    mark_used(key);
    return std::nullopt;
  }
  if (nd->is_integer()) {
    return std::vector<std::int64_t>(n, *integer(key, bounds));
  }
  auto v = integer_list(key, bounds);
  if (v->size() != n) {
    fail(key, "expected an integer or a list of " + std::to_string(n) + " integers, got a list of " +
                  std::to_string(v->size()));
  }
  return v;
}

std::optional<TableReader> TableReader::table(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_table()) fail(key, "expected a table, got " + toml_type_name(*n));
  return TableReader(*n->as_table(), file_, key_name(key), base_dir_);
}

TableReader TableReader::required_table(std::string_view key) {
  auto t = table(key);
  if (!t) {
    if (path_.empty()) throw UserError(SourceLocation{file_}, "missing required table [" + std::string(key) + "]");
    fail_table("missing required table [" + key_name(key) + "]");
  }
  return *t;
}

std::vector<TableReader> TableReader::table_array(std::string_view key) {
  const toml::node* n = node(key);
  std::vector<TableReader> out;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of tables ([[" + key_name(key) + "]]), got " + toml_type_name(*n));
  std::size_t i = 0;
  for (const toml::node& e : *a) {
    if (!e.is_table()) {
      throw UserError(location_of(e, file_), key_name(key) + "[" + std::to_string(i) + "]: expected a table, got " +
                                                 toml_type_name(e));
    }
    out.emplace_back(*e.as_table(), file_, key_name(key) + "[" + std::to_string(i) + "]", base_dir_);
    ++i;
  }
  return out;
}

std::vector<std::string> TableReader::keys() const {
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> ordered;
  for (auto&& [k, v] : *table_) {
    const auto& s = k.source().begin.line > 0 ? k.source() : v.source();
    ordered.push_back({{static_cast<std::uint32_t>(s.begin.line), static_cast<std::uint32_t>(s.begin.column)},
                       std::string(k.str())});
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& o : ordered) out.push_back(o.second);
  return out;
}

std::vector<std::string> TableReader::unused_keys() const {
  std::vector<std::string> out;
  for (const std::string& k : keys()) {
    if (!used_->contains(k)) out.push_back(k);
  }
  return out;
}

void TableReader::finish(const std::vector<std::string>& extra_valid) const {
  auto unused = unused_keys();
  if (unused.empty()) return;
  std::vector<std::string> valid(used_->begin(), used_->end());
  valid.insert(valid.end(), extra_valid.begin(), extra_valid.end());
  const std::string& key = unused.front();
  const SourceLocation loc = key_location(key);
  std::string msg = "unknown key '" + key_name(key) + "'" + did_you_mean(key, valid);
  if (!valid.empty()) {
    std::vector<std::string> sorted = valid;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    msg += "; valid keys here: " + join(sorted, ", ");
  }
  throw UserError(loc, msg);
}

}  // namespace monet
