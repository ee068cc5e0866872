#include "monet/search/space_spec.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "monet/config/toml_paths.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/experiment/quality.hpp"
#include "monet/experiment/runner.hpp"
#include "monet/report/metrics.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

constexpr std::size_t kMaxValues = 100000;  // per gene: a stepped range must stay enumerable

/// The preparation stage a key changes (docs/search.md); experiment keys that are not design parameters fail.
GeneGroup group_of(const std::string& path, TableReader& g) {
  const std::string head = path.substr(0, path.find('.'));
  if (head == "architecture" || head == "cost_model") return GeneGroup::hardware;
  // [parallelism] recompute changes the training graph like [training.checkpoint] (docs/datacenter.md).
  if (head == "workload" || head == "training" || head == "precision" || head == "parallelism") {
    return GeneGroup::training;
  }
  if (head == "fusion") return GeneGroup::fusion;
  if (head == "allocation" || head == "schedule") return GeneGroup::allocation;
  g.fail("path", "'" + path + "' is not a design parameter: a gene may vary keys of [workload], [training], "
                 "[precision], [parallelism], [architecture] (and the accelerator and core files: architecture.PATH; the "
                 "system file: architecture.system_set.PATH; the workload file: workload.set.PATH), "
                 "[cost_model], [fusion], [allocation] or [schedule]");
}

std::shared_ptr<const toml::node> located(const toml::node& n, const std::string& file) {
  return std::shared_ptr<const toml::node>(located_value(toml_text(n), location_of(n, file)));
}

std::shared_ptr<const toml::node> number_at(double v, bool integer, const SourceLocation& where) {
  std::string text;
  if (integer) {
    text = std::to_string(static_cast<std::int64_t>(std::llround(v)));
  } else {
    std::ostringstream s;
    s.precision(17);
    s << v;
    text = s.str();
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  }
  return std::shared_ptr<const toml::node>(located_value(text, where));
}

/// `range = { min, max, step }` or `{ min, max, powers_of_two = true }`: integers when min, max and step are.
std::vector<std::shared_ptr<const toml::node>> range_values(TableReader& g) {
  auto r = g.table("range");
  const double min = r->required_number("min");
  const double max = r->required_number("max");
  if (max < min) r->fail("max", "expected max >= min (" + format_number(min) + ")");
  const bool pow2 = r->boolean("powers_of_two").value_or(false);
  const bool integers = r->raw().get("min")->is_integer() && r->raw().get("max")->is_integer() &&
                        (!r->has("step") || r->raw().get("step")->is_integer());
  std::vector<std::shared_ptr<const toml::node>> out;
  const SourceLocation where = g.where("range");
  if (pow2) {
    if (r->has("step")) r->fail("step", "give either step or powers_of_two");
    if (!integers || min < 1) r->fail("min", "powers_of_two needs integer min >= 1 and max");
    for (double v = 1; v <= max; v *= 2) {
      if (v >= min) out.push_back(number_at(v, true, where));
    }
    if (out.empty()) r->fail("max", "no power of two in [" + format_number(min) + ", " + format_number(max) + "]");
  } else {
    const double step = r->number("step", Bounds::positive()).value_or(1.0);
    const double count = std::floor((max - min) / step + 1e-9) + 1;
    if (count > static_cast<double>(kMaxValues)) {
      r->fail("step", "the range has " + format_number(count) + " values; at most " + std::to_string(kMaxValues));
    }
    for (double k = 0; k < count; ++k) out.push_back(number_at(min + k * step, integers, where));
  }
  r->finish();
  return out;
}

bool is_number(const toml::node& n) { return n.is_integer() || n.is_floating_point(); }
double number_of(const toml::node& n) {
  return n.is_integer() ? static_cast<double>(n.as_integer()->get()) : n.as_floating_point()->get();
}

/// Numbers that only grow or only shrink: neighbouring values are similar designs.
bool monotonic(const std::vector<std::shared_ptr<const toml::node>>& values) {
  if (values.size() < 2) return true;
  int direction = 0;
  for (std::size_t i = 1; i < values.size(); ++i) {
    const double d = number_of(*values[i]) - number_of(*values[i - 1]);
    const int s = d > 0 ? 1 : (d < 0 ? -1 : 0);
    if (s == 0 || (direction != 0 && s != direction)) return false;
    direction = s;
  }
  return true;
}

/// Equal TOML values (numbers compare by value, 4 == 4.0).
bool same_value(const toml::node& a, const std::string& b_text) {
  const toml::table b = toml::parse("v = " + b_text);
  const toml::node& bn = *b.get("v");
  if (is_number(a) && is_number(bn)) return number_of(a) == number_of(bn);
  return toml_text(a) == toml_text(bn);
}

/// The experiment's own value at a key (after --set/--unset), as TOML text; nullopt when it is not set.
std::optional<std::string> current_value(const ExperimentSource& source, const Experiment& base, const std::string& key) {
  const std::string arch = architecture_path(key);
  if (!arch.empty()) return base.architecture->value_text(arch);
  const std::string workload = workload_set_path(key);
  if (!workload.empty()) {
    if (base.workload_file.extension() != ".toml") return std::nullopt;
    const auto doc = base.workload_document ? base.workload_document : source.workload(base.workload_file);
    try {
      return toml_path_text(*doc, workload_path_segments(*doc, workload, SourceLocation{}));
    } catch (const UserError&) {
      return std::nullopt;
    }
  }
  const TomlDocument doc = source.changed_document();
  const toml::node* n = &doc.root();
  std::size_t start = 0;
  while (n) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    n = n->is_table() ? n->as_table()->get(part) : nullptr;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return n ? std::optional<std::string>(toml_text(*n)) : std::nullopt;
}

}  // namespace

std::vector<Change> gene_changes(const GeneSpec& gene, std::int32_t index) {
  const auto& v = gene.values.at(static_cast<std::size_t>(index));
  std::vector<Change> out;
  for (const std::string& path : gene.paths) out.push_back(Change{path, v, location_of(*v, gene.where.file)});
  return out;
}

std::optional<SpaceSpec> read_space_spec(const ExperimentSource& source) {
  const TomlDocument doc = source.changed_document();  // with --set/--unset: a gene's domain can be narrowed there
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto t = root.table("space");
  if (!t) return std::nullopt;
  SpaceSpec spec;
  spec.where = t->where();
  const Experiment base = source.build();
  // The run's own metrics, then the [quality] plugin's (accuracy, ...), each with its sense.
  std::vector<Objective> keys;
  for (const auto& [k, unit] : metric_keys()) keys.push_back(Objective{k, unit, higher_is_better(k)});
  if (const std::optional<QualityPlugin> q = make_quality_plugin(base)) {
    for (const QualityMetric& m : q->metrics) keys.push_back(Objective{m.key, m.unit, m.maximise});
  }
  std::vector<std::string> names;
  for (const Objective& k : keys) names.push_back(k.key);
  auto metric = [&](TableReader& r, const std::string& key, const std::string& name) {
    for (const Objective& k : keys) {
      if (k.key == name) return k;
    }
    r.fail(key, "'" + name + "' is not a metric of a run" + did_you_mean(name, names) + "; metrics: " + join(names) +
                    (base.quality ? "" : " (and those of a [quality] plugin)"));
  };

  const std::vector<std::string> objectives =
      t->string_list("objectives").value_or(std::vector<std::string>{"latency_cycles", "energy_pj"});
  if (objectives.empty()) t->fail("objectives", "expected at least one objective");
  for (const std::string& o : objectives) {
    for (const Objective& seen : spec.objectives) {
      if (seen.key == o) t->fail("objectives", "'" + o + "' is listed twice");
    }
    spec.objectives.push_back(metric(*t, "objectives", o));
  }
  if (auto c = t->table("constraints")) {
    for (const std::string& key : c->keys()) {
      (void)metric(*c, key, key);
      auto bounds = c->table(key);
      if (!bounds) c->fail(key, "expected a table { max = ... } or { min = ... }");
      ConstraintSpec cs{key, bounds->number("max"), bounds->number("min"), c->where(key)};
      if (!cs.max && !cs.min) bounds->fail_table("a constraint needs max or min");
      bounds->finish();
      spec.constraints.push_back(cs);
    }
    c->finish();
  }

  auto genes = t->table("genes");
  if (!genes || genes->keys().empty()) t->fail_table("a [space] needs at least one gene: [space.genes.NAME]");
  for (const std::string& name : genes->keys()) {
    auto g = genes->table(name);
    if (!g) genes->fail(name, "expected a table: [space.genes." + name + "] with path and values");
    GeneSpec gene;
    gene.name = name;
    gene.where = g->where();
    if (g->has("checkpoint")) {
      gene.kind = GeneSpec::Kind::checkpoint;
      gene.group = GeneGroup::checkpoint;
      gene.candidates = g->choice("checkpoint", {"blocks"}).value_or("blocks");
      // The values a block's gene may take (docs/search.md): keep and recompute unless `values` says otherwise.
      gene.checkpoint_values = {"keep", "recompute"};
      if (g->has("values")) {
        gene.checkpoint_values = *g->string_list("values");
        const toml::array* list = g->raw().get("values")->as_array();
        for (std::size_t i = 0; i < gene.checkpoint_values.size(); ++i) {
          const std::string& v = gene.checkpoint_values[i];
          const SourceLocation at = location_of((*list)[i], g->file());
          if (v != "keep" && v != "recompute" && v != "offload") {
            throw UserError(at, "checkpoint gene value '" + v + "': expected \"keep\", \"recompute\" or \"offload\"");
          }
          if (std::find(gene.checkpoint_values.begin(), gene.checkpoint_values.begin() + static_cast<std::ptrdiff_t>(i), v) !=
              gene.checkpoint_values.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw UserError(at, "checkpoint gene value '" + v + "' is listed twice");
          }
        }
        if (gene.checkpoint_values.size() < 2) g->fail("values", "a checkpoint gene needs at least two of \"keep\", \"recompute\" and \"offload\"");
      }
      for (const GeneSpec& other : spec.genes) {
        if (other.kind == GeneSpec::Kind::checkpoint) g->fail("checkpoint", "one checkpoint gene per space (it sets training.checkpoint)");
        if (other.kind == GeneSpec::Kind::value && other.path.rfind("training.checkpoint", 0) == 0) {
          g->fail("checkpoint", "training.checkpoint is set by the checkpoint gene; it cannot be a path gene too");
        }
      }
      g->finish();
      spec.genes.push_back(std::move(gene));
      continue;
    }
    if (int(g->has("path")) + int(g->has("allocation")) + int(g->has("stack_cuts")) != 1) {
      g->fail_table("a gene needs one of `path` (a key to vary, with `values` or `range`), `allocation` (operators "
                    "whose core it chooses), `stack_cuts` (operators after which a fused stack may end) or "
                    "`checkpoint` (\"blocks\": keep or recompute each block)");
    }
    if (g->has("stack_cuts")) {
      gene.kind = GeneSpec::Kind::stack_cuts;
      gene.group = GeneGroup::fusion;
      gene.operators = g->required_string("stack_cuts", "an operator name, ONNX type, kind or glob");
      if (gene.operators.empty()) g->fail("stack_cuts", "expected an operator name, type, kind or glob");
      gene.within = g->required_string("within", "\"FIRST..LAST\": the forward operators the stacks cover");
      gene.within_where = g->where("within");
      if (gene.within.find("..") == std::string::npos) g->fail("within", "expected \"FIRST..LAST\" (operator names)");
      if (g->has("tiles")) {
        gene.tiles = *g->integer_list("tiles", Bounds{0.0, 65536.0});
        gene.tiles_where = g->where("tiles");
        if (gene.tiles.empty()) g->fail("tiles", "the domain is empty: give at least one tile count");
      }
      for (const GeneSpec& other : spec.genes) {
        if (other.kind == GeneSpec::Kind::stack_cuts) g->fail("stack_cuts", "one stack_cuts gene per space (it sets fusion.stacks)");
      }
      g->finish();
      spec.genes.push_back(std::move(gene));
      continue;
    }
    if (g->has("allocation")) {
      gene.kind = GeneSpec::Kind::allocation;
      gene.group = GeneGroup::allocation;
      gene.operators = g->required_string("allocation", "an operator name, ONNX type, kind or glob");
      if (gene.operators.empty()) g->fail("allocation", "expected an operator name, type, kind or glob");
      if (g->has("cores")) {
        gene.cores = *g->string_list("cores");
        gene.cores_where = g->where("cores");
        if (gene.cores.empty()) g->fail("cores", "expected at least one core");
      }
      g->finish();
      spec.genes.push_back(std::move(gene));
      continue;
    }
    if (g->raw().get("path")->is_array()) {
      gene.paths = *g->string_list("path");
      if (gene.paths.empty()) g->fail("path", "expected at least one key");
    } else {
      gene.paths = {g->required_string("path", "a dotted key, or a list of keys that take the same value")};
    }
    for (const std::string& p : gene.paths) {
      if (p.empty() || p.front() == '.' || p.back() == '.' || p.find("..") != std::string::npos) {
        g->fail("path", "expected a dotted key such as \"fusion.auto_stacks\" or \"architecture.offchip.size_bits\"");
      }
    }
    gene.path = gene.paths.front();
    gene.group = group_of(gene.path, *g);
    for (const std::string& p : gene.paths) gene.group = std::min(gene.group, group_of(p, *g));
    if (g->has("values") == g->has("range")) g->fail_table("a value gene needs either `values = [...]` or `range = {...}`");
    if (g->has("values")) {
      const toml::array* arr = g->node("values")->as_array();
      if (!arr) g->fail("values", "expected a list of values");
      if (arr->empty()) g->fail("values", "the domain is empty: give at least one value");
      for (const toml::node& v : *arr) {
        if (v.is_table()) throw UserError(location_of(v, doc.file()), "a gene value cannot be a table");
        gene.values.push_back(located(v, doc.file()));
      }
      const bool numbers = std::all_of(gene.values.begin(), gene.values.end(), [](const auto& v) { return is_number(*v); });
      const toml::node_type type = gene.values.front()->type();
      for (const auto& v : gene.values) {
        if (!(numbers || v->type() == type)) {
          throw UserError(location_of(*v, doc.file()), "values of one gene must have one type: " + toml_type_name(*v) +
                                                           " after " + toml_type_name(*gene.values.front()));
        }
      }
      std::set<std::string> seen;
      for (const auto& v : gene.values) {
        if (!seen.insert(toml_text(*v)).second) {
          throw UserError(location_of(*v, doc.file()), "the value " + toml_text(*v) + " is listed twice");
        }
      }
      gene.ordinal = numbers && monotonic(gene.values);
    } else {
      gene.values = range_values(*g);
      gene.ordinal = true;
    }
    g->finish();
    spec.genes.push_back(std::move(gene));
  }
  genes->finish();
  t->finish();

  // Every value on the experiment, one at a time: what the experiment or its files reject is reported now.
  for (GeneSpec& gene : spec.genes) {
    if (gene.kind != GeneSpec::Kind::value) continue;
    // A gene of the workload's keys builds its network per value: a value the frontend rejects (an unknown op of a
    // NAS-Bench-201 edge) is reported at the value now, not as an infeasible point later. (A [workload] key of a
    // model file, such as workload.batch, is cheap to check and rarely wrong: the experiment's own build checks it.)
    const bool workload_gene = std::any_of(gene.paths.begin(), gene.paths.end(),
                                           [](const std::string& p) { return !workload_set_path(p).empty(); });
    for (std::size_t i = 0; i < gene.values.size(); ++i) {
      const Experiment variant = source.build(gene_changes(gene, static_cast<std::int32_t>(i)));
      if (workload_gene) (void)read_workload_graph(variant);
    }
    const auto current = current_value(source, base, gene.path);
    for (std::size_t i = 0; current && i < gene.values.size(); ++i) {
      if (same_value(*gene.values[i], *current)) gene.configured = static_cast<std::int32_t>(i);
    }
  }
  return spec;
}

}  // namespace monet
