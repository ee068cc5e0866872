// The `command` quality plugin: a user's program (a PyTorch script that trains or evaluates the candidate, a
// lookup, a formula) gives a design's quality metrics. Per point it runs once: the point as one JSON object on its
// stdin, the metrics as one JSON object on its stdout. Results are kept by the input's text, so a point seen twice,
// or asked for by two threads at once, runs the program once; a failure is kept as well, with its message.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <toml++/toml.h>
#include <unordered_map>

#include "child_process.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/quality_model.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json to_json(const toml::node& n) {
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* b = n.as_boolean()) return b->get();
  if (const auto* a = n.as_array()) {
    json out = json::array();
    for (const toml::node& e : *a) out.push_back(to_json(e));
    return out;
  }
  if (const auto* t = n.as_table()) {
    json out = json::object();
    for (const auto& [k, v] : *t) out[std::string(k.str())] = to_json(v);
    return out;
  }
  std::ostringstream text;  // a date or a time: its TOML text
  n.visit([&text](const auto& v) { text << v; });
  return text.str();
}

/// A value given as TOML text ("3", "\"nor_conv_3x3\"", "[1, 2]") as JSON: 3, "nor_conv_3x3", [1, 2].
json value_json(const std::string& text) {
  try {
    const toml::table t = toml::parse("v = " + text);
    if (const toml::node* v = t.get("v")) return to_json(*v);
  } catch (const toml::parse_error&) {
  }
  return text;  // not a TOML value: its text as a string
}

/// The last `n` non-empty lines of a program's stderr, for a message: "a | b | c".
std::string last_lines(const std::string& err, std::size_t n = 3) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty()) continue;
    if (line.size() > 200) line = line.substr(0, 197) + "...";
    lines.push_back(line);
  }
  if (lines.empty()) return "; it wrote nothing on stderr";
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return "; the last lines of its stderr: " + join(lines, " | ");
}

std::string json_type(const json& j) {
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "a number";
}

class CommandQuality final : public QualityModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::quality;
    i.name = "command";
    i.version = "1.0.0";
    i.summary = "quality metrics (accuracy, ...) printed by a program run per design point (a training script, ...)";
    i.description =
        "Runs `command` once per distinct design point, in a process group of its own. Its stdin is one JSON "
        "object, {\"genes\": {NAME: VALUE}, \"keys\": {KEY: VALUE}}: the point's genes of [space] (unless genes = false) and the values of "
        "`keys` (workload.set.PATH, workload.KEY or a gene's name, as the table plugin names them), each TOML value "
        "as JSON (a string without its quotes, numbers, booleans, arrays). It prints one JSON object on stdout with "
        "a number for each of `metrics`; stderr is for its messages. A point whose command exits non-zero, is "
        "killed, outlives timeout_s (its process group is killed), cannot be started, or prints no JSON object with "
        "those numbers is infeasible with a message that says which (the experiment's own point: an error before "
        "any search). Results are kept in memory by the stdin text: a point asked for again, or by several threads "
        "at once, runs the command once. `monet run --resume` replays the journalled evaluations without running "
        "it. Protocol and example: docs/plugins.md#quality-command.";
    i.params = {
        ParamSpec::string_list("command", std::nullopt)
            .with_doc("the program and its arguments; a program with a '/' is taken relative to the experiment file, "
                      "one without is searched in PATH (e.g. [\"../scripts/accuracy.py\"], [\"python3\", \"/abs/train.py\"])"),
        ParamSpec::string_list("keys", std::vector<std::string>{})
            .with_doc("the point's keys whose values the command gets in \"keys\": workload.set.PATH, workload.KEY or "
                      "a gene's name"),
        ParamSpec::boolean("genes", true)
            .with_doc("pass the point's genes in \"genes\"; false: an empty \"genes\", so that points that differ only in "
                      "genes outside `keys` (hardware genes, for a network's accuracy) share one run"),
        ParamSpec::string_list("metrics", std::nullopt)
            .with_doc("the metrics: the keys of the JSON object the command prints; each a results.json key, an "
                      "objective or constraint of [space]"),
        ParamSpec::string_list("minimise", std::vector<std::string>{})
            .with_doc("the metrics where lower is better (a loss, an error rate); the others are maximised"),
        ParamSpec::string_list("units", std::vector<std::string>{})
            .with_doc("each metric's unit (\"%\"), in metrics order; empty: dimensionless"),
        ParamSpec::number("timeout_s", 600.0)
            .with_bounds(Bounds::positive())
            .with_unit("s")
            .with_doc("the longest one run may take; then its process group is killed and the point is infeasible"),
    };
    return i;
  }

  explicit CommandQuality(const ParamValues& p)
      : params_(p), argv_(p.get_strings("command")), keys_(p.get_strings("keys")), genes_(p.get_bool("genes")), timeout_s_(p.get_number("timeout_s")) {
    if (argv_.empty() || argv_.front().empty()) {
      p.fail("command", "expected the program and its arguments, e.g. [\"../scripts/accuracy.py\"]");
    }
    shown_ = join(argv_, " ");
    if (shown_.size() > 120) shown_ = shown_.substr(0, 117) + "...";
    fs::path program(argv_.front());
    if (argv_.front().find('/') != std::string::npos) {
      if (program.is_relative()) {
        // Relative to the file that names it, as path parameters are; given by --set: to the current folder.
        const std::string& file = p.where("command").file;
        const bool from_file = !file.empty() && file.rfind("--set ", 0) != 0;
        program = ((from_file ? fs::absolute(file).parent_path() : fs::current_path()) / program).lexically_normal();
        argv_.front() = program.string();
      }
      std::error_code ec;
      if (!fs::is_regular_file(program, ec)) p.fail("command", "no program " + program.string());
      if (::access(program.c_str(), X_OK) != 0) {
        p.fail("command", program.string() + " is not executable (chmod +x it with a #! line, or name its "
                                             "interpreter first: [\"/usr/bin/python3\", \"...\"])");
      }
    }
    std::set<std::string> names;
    for (const std::string& m : p.get_strings("metrics")) {
      QualityMetric q;
      q.key = trim(m);
      if (q.key.empty()) p.fail("metrics", "a metric's name is empty");
      if (!names.insert(q.key).second) p.fail("metrics", "the metric '" + q.key + "' is listed twice");
      q.doc = "\"" + q.key + "\" of the JSON that " + program.filename().string() + " prints";
      metrics_.push_back(q);
    }
    if (metrics_.empty()) p.fail("metrics", "expected at least one metric");
    const auto& minimise = p.get_strings("minimise");
    for (const std::string& m : minimise) {
      if (!names.contains(m)) p.fail("minimise", "'" + m + "' is not one of the metrics (" + join(std::vector<std::string>(names.begin(), names.end())) + ")");
    }
    for (QualityMetric& q : metrics_) q.maximise = std::find(minimise.begin(), minimise.end(), q.key) == minimise.end();
    const auto& units = p.get_strings("units");
    if (!units.empty() && units.size() != metrics_.size()) {
      p.fail("units", "expected one unit per metric (" + std::to_string(metrics_.size()) + "), got " + std::to_string(units.size()));
    }
    for (std::size_t k = 0; k < units.size(); ++k) metrics_[k].unit = units[k];
  }

  [[nodiscard]] std::vector<QualityMetric> metrics() const override { return metrics_; }

  [[nodiscard]] std::vector<double> assess(const QualityQuery& query) const override {
    const std::string input = point_json(query);
    std::optional<std::promise<Outcome>> mine;
    std::shared_future<Outcome> outcome;
    {
      std::lock_guard lock(mutex_);
      const auto it = cache_.find(input);
      if (it == cache_.end()) {
        mine.emplace();
        outcome = mine->get_future().share();
        cache_.emplace(input, outcome);
      } else {
        outcome = it->second;
      }
    }
    if (mine) {  // this thread runs it; others asking for the same point wait for its outcome
      try {
        mine->set_value(run(input));
      } catch (...) {
        mine->set_exception(std::current_exception());
      }
    }
    const Outcome& o = outcome.get();
    if (!o.error.empty()) params_.fail("command", o.error);
    return o.values;
  }

 private:
  struct Outcome {
    std::vector<double> values;
    std::string error;  // why the point has no values
  };

  /// The command's stdin; its text is the cache key (nlohmann's objects are sorted by key: one text per point).
  [[nodiscard]] std::string point_json(const QualityQuery& query) const {
    json point = {{"genes", json::object()}, {"keys", json::object()}};
    if (genes_) {
      for (const auto& [name, text] : query.genes) point["genes"][name] = value_json(text);
    }
    for (const std::string& k : keys_) {
      const std::optional<std::string> v = query.value ? query.value(k) : std::nullopt;
      if (!v) {
        params_.fail("keys", "the point has no key '" + k + "' (write workload.set.PATH for a key of the workload file, "
                             "workload.KEY for one of [workload], or a gene's name)");
      }
      point["keys"][k] = value_json(*v);
    }
    return point.dump() + "\n";
  }

  [[nodiscard]] Outcome run(const std::string& input) const {
    const ChildResult c = run_child(argv_, input, timeout_s_);
    const std::string who = "the quality command '" + shown_ + "'";
    if (!c.started) return {{}, "cannot start " + who + ": " + c.error};
    if (!c.error.empty()) return {{}, who + ": " + c.error};
    if (c.timed_out) {
      return {{}, who + " did not finish within timeout_s = " + format_number(timeout_s_) + " s and was killed (its process group)" + last_lines(c.err)};
    }
    if (c.signal != 0) {
      return {{}, who + " was killed by signal " + std::to_string(c.signal) + " (" + strsignal(c.signal) + ")" + last_lines(c.err)};
    }
    if (c.exit_status != 0) return {{}, who + " exited with status " + std::to_string(c.exit_status) + last_lines(c.err)};
    std::vector<std::string> names;
    for (const QualityMetric& m : metrics_) names.push_back(m.key);
    const std::string expected = "expected one JSON object with a number for each of: " + join(names);
    const json out = json::parse(c.out, nullptr, false);
    if (out.is_discarded()) {
      std::string start = trim(c.out);
      if (start.empty()) return {{}, who + " printed no JSON on stdout (" + expected + ")" + last_lines(c.err)};
      if (start.size() > 80) start = start.substr(0, 77) + "...";
      return {{}, who + " printed no JSON on stdout but '" + start + "' (" + expected + "; messages go to stderr)"};
    }
    if (!out.is_object()) return {{}, who + " printed " + json_type(out) + " on stdout, not a JSON object (" + expected + ")"};
    Outcome o;
    for (const std::string& name : names) {
      const auto it = out.find(name);
      if (it == out.end()) {
        std::vector<std::string> given;
        for (const auto& [k, v] : out.items()) given.push_back(k);
        return {{}, who + " printed no \"" + name + "\" (its JSON has: " + (given.empty() ? "nothing" : join(given)) + ")"};
      }
      if (!it->is_number()) return {{}, who + " printed \"" + name + "\" as " + json_type(*it) + ", expected a number"};
      o.values.push_back(it->get<double>());
    }
    return o;
  }

  ParamValues params_;
  std::vector<std::string> argv_;  // argv_[0] resolved
  std::string shown_;              // the command as written, for messages
  std::vector<std::string> keys_;
  bool genes_;
  double timeout_s_;
  std::vector<QualityMetric> metrics_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_future<Outcome>> cache_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::CommandQuality)
