#include "monet/config/params.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "monet/util/strings.hpp"

namespace monet {

std::string to_string(ParamType t) {
  switch (t) {
    case ParamType::boolean: return "boolean";
    case ParamType::integer: return "integer";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
    case ParamType::path: return "path";
    case ParamType::string_list: return "list of strings";
    case ParamType::integer_list: return "list of integers";
    case ParamType::number_list: return "list of numbers";
    case ParamType::integer_table: return "table of integers";
  }
  return "?";
}

namespace {
/// A double as a TOML float that reads back as the same value (1 -> "1.0", 0.1 -> "0.1").
std::string format_float(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string to_string(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_float(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(x);
        } else if constexpr (std::is_same_v<T, IntegerTable>) {
          std::string s = "{";
          for (const auto& [k, n] : x) s += (s.size() > 1 ? ", " : " ") + quote(k) + " = " + std::to_string(n);
          return s + (x.empty() ? "}" : " }");
        } else {
          std::string s = "[";
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) s += ", ";
            if constexpr (std::is_same_v<typename T::value_type, std::string>) {
              s += quote(x[i]);
            } else if constexpr (std::is_same_v<typename T::value_type, double>) {
              s += format_float(x[i]);
            } else {
              s += std::to_string(x[i]);
            }
          }
          return s + "]";
        }
      },
      v);
}

// ------------------------------------------------------------------------------------------- ParamSpec

namespace {
ParamSpec make(std::string name, ParamType type, std::optional<ParamValue> def) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = type;
  s.default_value = std::move(def);
  return s;
}
template <class T>
std::optional<ParamValue> lift(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return ParamValue(*v);
}
}  // namespace

ParamSpec ParamSpec::boolean(std::string name, std::optional<bool> def) {
  return make(std::move(name), ParamType::boolean, lift(def));
}
ParamSpec ParamSpec::integer(std::string name, std::optional<std::int64_t> def) {
  return make(std::move(name), ParamType::integer, lift(def));
}
ParamSpec ParamSpec::number(std::string name, std::optional<double> def) {
  return make(std::move(name), ParamType::number, lift(def));
}
ParamSpec ParamSpec::string(std::string name, std::optional<std::string> def) {
  return make(std::move(name), ParamType::string, lift(def));
}
ParamSpec ParamSpec::choice(std::string name, std::vector<std::string> choices, std::optional<std::string> def) {
  ParamSpec s = make(std::move(name), ParamType::string, lift(def));
  s.choices = std::move(choices);
  return s;
}
ParamSpec ParamSpec::path(std::string name) { return make(std::move(name), ParamType::path, std::nullopt); }
ParamSpec ParamSpec::string_list(std::string name, std::optional<std::vector<std::string>> def) {
  return make(std::move(name), ParamType::string_list, lift(def));
}
ParamSpec ParamSpec::integer_list(std::string name, std::optional<std::vector<std::int64_t>> def) {
  return make(std::move(name), ParamType::integer_list, lift(def));
}
ParamSpec ParamSpec::number_list(std::string name, std::optional<std::vector<double>> def) {
  return make(std::move(name), ParamType::number_list, lift(def));
}
ParamSpec ParamSpec::integer_table(std::string name, std::optional<IntegerTable> def) {
  return make(std::move(name), ParamType::integer_table, lift(def));
}
ParamSpec&& ParamSpec::with_unit(std::string u) && {
  unit = std::move(u);
  return std::move(*this);
}
ParamSpec&& ParamSpec::with_doc(std::string d) && {
  doc = std::move(d);
  return std::move(*this);
}
ParamSpec&& ParamSpec::with_bounds(Bounds b) && {
  bounds = b;
  return std::move(*this);
}

// ----------------------------------------------------------------------------------------- ParamValues

void ParamValues::set(const std::string& name, ParamValue value, SourceLocation where, bool defaulted) {
  values_[name] = Entry{std::move(value), std::move(where), defaulted};
}

const ParamValue& ParamValues::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw InternalError("parameter '" + name + "' was not declared by the plugin");
  return it->second.value;
}

namespace {
template <class T>
const T& typed(const ParamValues& pv, const std::string& name) {
  const ParamValue& v = pv.get(name);
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw InternalError("parameter '" + name + "' is read with the wrong type");
}
}  // namespace

bool ParamValues::get_bool(const std::string& name) const { return typed<bool>(*this, name); }
std::int64_t ParamValues::get_int(const std::string& name) const { return typed<std::int64_t>(*this, name); }
double ParamValues::get_number(const std::string& name) const {
  const ParamValue& v = get(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return typed<double>(*this, name);
}
const std::string& ParamValues::get_string(const std::string& name) const { return typed<std::string>(*this, name); }
const std::vector<std::string>& ParamValues::get_strings(const std::string& name) const {
  return typed<std::vector<std::string>>(*this, name);
}
const std::vector<std::int64_t>& ParamValues::get_ints(const std::string& name) const {
  return typed<std::vector<std::int64_t>>(*this, name);
}
const std::vector<double>& ParamValues::get_numbers(const std::string& name) const {
  return typed<std::vector<double>>(*this, name);
}
const IntegerTable& ParamValues::get_integer_table(const std::string& name) const {
  return typed<IntegerTable>(*this, name);
}
SourceLocation ParamValues::where(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? SourceLocation{} : it->second.where;
}
void ParamValues::fail(const std::string& name, const std::string& message) const {
  throw UserError(where(name), name + ": " + message);
}

// ------------------------------------------------------------------------------ defaults and layers

ParamValues default_params(const std::vector<ParamSpec>& specs, const std::string& context) {
  return layered_params(specs, {}, context);
}

ParamValues layered_params(const std::vector<ParamSpec>& specs, const std::vector<const ParamValues*>& layers,
                           const std::string& context) {
  ParamValues out;
  for (const ParamSpec& s : specs) {
    const ParamValues::Entry* found = nullptr;
    for (const ParamValues* layer : layers) {
      if (!layer) continue;
      auto it = layer->entries().find(s.name);
      if (it != layer->entries().end() && !it->second.defaulted) found = &it->second;
    }
    if (found) {
      out.set(s.name, found->value, found->where, false);
    } else if (s.required()) {
      throw UserError(context + ": parameter '" + s.name + "' is required (" + s.doc + ")");
    } else {
      out.set(s.name, *s.default_value, {}, true);
    }
  }
  return out;
}

}  // namespace monet
