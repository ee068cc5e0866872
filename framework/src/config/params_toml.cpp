#include "monet/config/params_toml.hpp"

namespace monet {

ParamValues read_params(TableReader& table, const std::vector<ParamSpec>& specs) {
  ParamValues out;
  for (const ParamSpec& s : specs) {
    if (!table.has(s.name)) {
      table.mark_used(s.name);
      if (s.required()) table.fail_missing(s.name, to_string(s.type) + (s.doc.empty() ? "" : ": " + s.doc));
      out.set(s.name, *s.default_value, {}, true);
      continue;
    }
    const SourceLocation where = table.where(s.name);
    ParamValue v;
    switch (s.type) {
      case ParamType::boolean: v = *table.boolean(s.name); break;
      case ParamType::integer: v = *table.integer(s.name, s.bounds); break;
      case ParamType::number: v = *table.number(s.name, s.bounds); break;
      case ParamType::string:
        v = s.choices.empty() ? *table.string(s.name) : *table.choice(s.name, s.choices);
        break;
      case ParamType::path: v = table.path(s.name)->string(); break;
      case ParamType::string_list: v = *table.string_list(s.name); break;
      case ParamType::integer_list: v = *table.integer_list(s.name, s.bounds); break;
      case ParamType::number_list: v = *table.number_list(s.name, s.bounds); break;
      case ParamType::integer_table: {
        TableReader t = *table.table(s.name);
        IntegerTable m;
        for (const std::string& k : t.keys()) m[k] = *t.integer(k, s.bounds);
        t.finish();
        v = std::move(m);
        break;
      }
    }
    out.set(s.name, std::move(v), where, false);
  }
  return out;
}

ParamValues read_set_params(TableReader& table, const std::vector<ParamSpec>& specs) {
  std::vector<ParamSpec> set;
  for (const ParamSpec& s : specs) {
    if (table.has(s.name)) {
      set.push_back(s);
    } else {
      table.mark_used(s.name);  // a valid key here, for the suggestions of finish()
    }
  }
  return read_params(table, set);
}

}  // namespace monet
