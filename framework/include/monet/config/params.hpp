#pragma once
// Plugin parameters: each plugin declares its parameters (name, type, default or required, unit, bounds,
// doc); the kernel validates experiment values against the declarations and hands the plugin typed values.
// The same declarations drive `monet plugins --describe` and the resolved configuration.
// Part of the plugin SDK: no TOML here. Reading values from a TOML table is the kernel's job
// (monet/config/params_toml.hpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "monet/config/bounds.hpp"
#include "monet/util/error.hpp"
#include "monet/util/export.hpp"

namespace monet {

enum class ParamType { boolean, integer, number, string, path, string_list, integer_list, number_list, integer_table };
MONET_API std::string to_string(ParamType t);

/// A parameter value. Paths are stored as absolute path strings.
/// Named integers (a TOML table of integers, e.g. the sizes of a model's symbolic dimensions).
using IntegerTable = std::map<std::string, std::int64_t>;
using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>,
                                std::vector<std::int64_t>, std::vector<double>, IntegerTable>;
/// TOML-like text of a value: true, 3, 0.5, "x", ["a", "b"], { batch = 2 }.
MONET_API std::string to_string(const ParamValue& v);

/// Declaration of one parameter. Build with the named constructors and the with_* modifiers:
///   ParamSpec::number("utilization", 1.0).with_bounds(Bounds::fraction()).with_unit("fraction").with_doc("...")
struct MONET_API ParamSpec {
  std::string name;
  ParamType type = ParamType::string;
  std::optional<ParamValue> default_value;  // nullopt: required
  std::string unit;                         // "cycles", "pJ", "bits", "" for dimensionless
  std::string doc;
  Bounds bounds;                            // for numbers, integers and their lists
  std::vector<std::string> choices;         // for strings: the allowed values (empty: any)

  static ParamSpec boolean(std::string name, std::optional<bool> def);
  static ParamSpec integer(std::string name, std::optional<std::int64_t> def);
  static ParamSpec number(std::string name, std::optional<double> def);
  static ParamSpec string(std::string name, std::optional<std::string> def);
  static ParamSpec choice(std::string name, std::vector<std::string> choices, std::optional<std::string> def);
  static ParamSpec path(std::string name);  // always required; relative to the experiment file
  static ParamSpec string_list(std::string name, std::optional<std::vector<std::string>> def);
  static ParamSpec integer_list(std::string name, std::optional<std::vector<std::int64_t>> def);
  static ParamSpec number_list(std::string name, std::optional<std::vector<double>> def);
  static ParamSpec integer_table(std::string name, std::optional<IntegerTable> def);

  ParamSpec&& with_unit(std::string u) &&;
  ParamSpec&& with_doc(std::string d) &&;
  ParamSpec&& with_bounds(Bounds b) &&;

  [[nodiscard]] bool required() const { return !default_value.has_value(); }
};

/// Validated values of a plugin's parameters, with where each came from (for the plugin's own semantic errors).
class MONET_API ParamValues {
 public:
  struct Entry {
    ParamValue value;
    SourceLocation where;  // unknown for defaults
    bool defaulted = false;
  };

  void set(const std::string& name, ParamValue value, SourceLocation where = {}, bool defaulted = false);
  [[nodiscard]] bool has(const std::string& name) const { return values_.contains(name); }
  [[nodiscard]] const ParamValue& get(const std::string& name) const;
  [[nodiscard]] bool get_bool(const std::string& name) const;
  [[nodiscard]] std::int64_t get_int(const std::string& name) const;
  [[nodiscard]] double get_number(const std::string& name) const;  // integers convert
  [[nodiscard]] const std::string& get_string(const std::string& name) const;
  [[nodiscard]] const std::vector<std::string>& get_strings(const std::string& name) const;
  [[nodiscard]] const std::vector<std::int64_t>& get_ints(const std::string& name) const;
  [[nodiscard]] const std::vector<double>& get_numbers(const std::string& name) const;
  [[nodiscard]] const IntegerTable& get_integer_table(const std::string& name) const;
  [[nodiscard]] SourceLocation where(const std::string& name) const;
  /// Throws a UserError located at the parameter's value.
  [[noreturn]] void fail(const std::string& name, const std::string& message) const;
  [[nodiscard]] const std::map<std::string, Entry>& entries() const { return values_; }

 private:
  std::map<std::string, Entry> values_;
};

/// Defaults only (no table); required parameters are an error naming `where_for_errors`.
MONET_API ParamValues default_params(const std::vector<ParamSpec>& specs, const std::string& context);
/// Each parameter from the last of `layers` that sets it (null layers are skipped), else its default; a
/// required parameter that no layer sets is an error naming `context`.
MONET_API ParamValues layered_params(const std::vector<ParamSpec>& specs, const std::vector<const ParamValues*>& layers,
                                     const std::string& context);

}  // namespace monet
