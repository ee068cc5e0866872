// The `table` quality plugin: a design's quality metrics looked up in a CSV by the values of the point's keys — a
// workload key (`workload.set.arch`: NAS-Bench-201's accuracy of a cell), a [workload] key or a gene. The table is
// read and checked once; a lookup is one hash-map probe, so a search of millions of points pays nothing for it.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/quality_model.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

/// A value as the table compares it: a number by its value (3 = 3.0 = "3"), anything else by its text; a TOML
/// string without its quotes and escapes.
std::string canonical(const std::string& text) {
  std::string s = text;
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
    if (text.front() == '"') {  // TOML basic string: the escapes a key value may carry
      std::string out;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        out += s[i];
      }
      s = out;
    }
    return "s:" + s;
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string("n:") + buf;
  }
  return "s:" + s;
}

class TableQuality final : public QualityModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::quality;
    i.name = "table";
    i.version = "1.0.0";
    i.summary = "quality metrics (accuracy, ...) looked up in a CSV by the point's workload keys or genes";
    i.description =
        "Reads a CSV (a header line, then one row per design; no quoted cells; lines starting with # are comments) "
        "once. A point's row is the one whose `columns` hold the values of its `keys`: a key is written as --set "
        "names it, workload.set.PATH (the workload file's key after [workload.set], e.g. workload.set.arch of a "
        "NAS-Bench-201 workload), workload.KEY (an experiment's [workload] key) or a gene's name of [space]. Numbers "
        "compare by value, strings by their text. Its `metrics` are that row's cells. A point whose values no row "
        "holds is infeasible with a message naming them (the experiment's own point: an error before any work). "
        "Example: NAS-Bench-201's CIFAR-10 accuracies, workloads/nasbench201/accuracy_cifar10.csv.";
    i.params = {
        ParamSpec::path("file").with_doc("the CSV, relative to the experiment file"),
        ParamSpec::string_list("keys", std::nullopt)
            .with_doc("the point's keys that identify its row: workload.set.PATH, workload.KEY or a gene's name"),
        ParamSpec::string_list("columns", std::vector<std::string>{})
            .with_doc("the CSV column of each key, in the same order; empty: each key's last dotted part"),
        ParamSpec::string_list("metrics", std::nullopt)
            .with_doc("the metrics: NAME (the column of that name) or NAME=COLUMN; each a results.json key, an "
                      "objective or constraint of [space]"),
        ParamSpec::string_list("minimise", std::vector<std::string>{})
            .with_doc("the metrics where lower is better (a loss, an error rate); the others are maximised"),
        ParamSpec::string_list("units", std::vector<std::string>{})
            .with_doc("each metric's unit (\"%\"), in metrics order; empty: dimensionless"),
    };
    return i;
  }

  explicit TableQuality(const ParamValues& p) : params_(p), file_(p.get_string("file")), keys_(p.get_strings("keys")) {
    if (keys_.empty()) p.fail("keys", "expected at least one key");
    std::vector<std::string> columns = p.get_strings("columns");
    if (columns.empty()) {
      for (const std::string& k : keys_) columns.push_back(k.substr(k.rfind('.') + 1));
    } else if (columns.size() != keys_.size()) {
      p.fail("columns", "expected one column per key (" + std::to_string(keys_.size()) + "), got " + std::to_string(columns.size()));
    }
    std::vector<std::string> metric_columns;
    std::set<std::string> names;
    for (const std::string& m : p.get_strings("metrics")) {
      const auto eq = m.find('=');
      QualityMetric q;
      q.key = trim(m.substr(0, eq));
      const std::string column = eq == std::string::npos ? q.key : trim(m.substr(eq + 1));
      if (q.key.empty() || column.empty()) p.fail("metrics", "'" + m + "': expected NAME or NAME=COLUMN");
      if (!names.insert(q.key).second) p.fail("metrics", "the metric '" + q.key + "' is listed twice");
      q.doc = "column " + column + " of " + std::filesystem::path(file_).filename().string();
      metrics_.push_back(q);
      metric_columns.push_back(column);
    }
    if (metrics_.empty()) p.fail("metrics", "expected at least one metric");
    for (const std::string& m : p.get_strings("minimise")) {
      if (!names.contains(m)) p.fail("minimise", "'" + m + "' is not one of the metrics (" + join(std::vector<std::string>(names.begin(), names.end())) + ")");
    }
    const auto& minimise = p.get_strings("minimise");
    for (QualityMetric& q : metrics_) q.maximise = std::find(minimise.begin(), minimise.end(), q.key) == minimise.end();
    const auto& units = p.get_strings("units");
    if (!units.empty() && units.size() != metrics_.size()) {
      p.fail("units", "expected one unit per metric (" + std::to_string(metrics_.size()) + "), got " + std::to_string(units.size()));
    }
    for (std::size_t k = 0; k < units.size(); ++k) metrics_[k].unit = units[k];
    read(columns, metric_columns);
  }

  [[nodiscard]] std::vector<QualityMetric> metrics() const override { return metrics_; }

  [[nodiscard]] std::vector<double> assess(const QualityQuery& query) const override {
    std::string row_key;
    std::vector<std::string> shown;
    for (const std::string& k : keys_) {
      const std::optional<std::string> v = query.value ? query.value(k) : std::nullopt;
      if (!v) {
        params_.fail("keys", "the point has no key '" + k + "' (write workload.set.PATH for a key of the workload file, "
                             "workload.KEY for one of [workload], or a gene's name)");
      }
      row_key += canonical(*v) + '\x1f';
      shown.push_back(k + " = " + *v);
    }
    const auto it = rows_.find(row_key);
    if (it == rows_.end()) {
      params_.fail("keys", "no row of " + file_ + " has " + join(shown, ", ") + " (" + std::to_string(rows_.size()) + " rows)");
    }
    return it->second;
  }

 private:
  void read(const std::vector<std::string>& key_columns, const std::vector<std::string>& metric_columns) {
    std::ifstream in(file_);
    if (!in) params_.fail("file", "cannot read the table '" + file_ + "' (not found or not readable)");
    std::string line;
    std::uint32_t n = 0;
    std::vector<std::string> header;
    std::vector<std::size_t> key_at, metric_at;
    auto fail = [&](std::size_t cell, const std::string& message) {
      throw UserError(SourceLocation{file_, n, static_cast<std::uint32_t>(csv_column(line, cell))}, message);
    };
    std::unordered_map<std::string, std::uint32_t> first_line;
    while (std::getline(in, line)) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::string t = trim(line);
      if (t.empty() || t[0] == '#') continue;
      const std::vector<std::string> cells = split_csv_line(line);
      if (header.empty()) {
        header = cells;
        auto column = [&](const std::string& name, const char* param) {
          const auto at = std::find(header.begin(), header.end(), name);
          if (at == header.end()) {
            params_.fail(param, "'" + name + "' is not a column of " + file_ + did_you_mean(name, header) + "; columns: " + join(header));
          }
          return static_cast<std::size_t>(at - header.begin());
        };
        for (const std::string& c : key_columns) key_at.push_back(column(c, "columns"));
        for (const std::string& c : metric_columns) metric_at.push_back(column(c, "metrics"));
        continue;
      }
      if (cells.size() != header.size()) {
        fail(0, "expected " + std::to_string(header.size()) + " cells (" + join(header) + "), got " + std::to_string(cells.size()));
      }
      std::string key;
      for (std::size_t k : key_at) key += canonical(cells[k]) + '\x1f';
      std::vector<double> values;
      for (std::size_t k : metric_at) {
        char* end = nullptr;
        const double v = std::strtod(cells[k].c_str(), &end);
        if (cells[k].empty() || end != cells[k].c_str() + cells[k].size() || !std::isfinite(v)) {
          fail(k, header[k] + ": expected a finite number, got '" + cells[k] + "'");
        }
        values.push_back(v);
      }
      const auto [at, fresh] = first_line.emplace(key, n);
      if (!fresh) fail(key_at.front(), "this row's keys are those of line " + std::to_string(at->second) + " too");
      rows_.emplace(std::move(key), std::move(values));
    }
    if (header.empty()) params_.fail("file", "the table '" + file_ + "' has no header line");
    if (rows_.empty()) params_.fail("file", "the table '" + file_ + "' has no rows");
  }

  ParamValues params_;
  std::string file_;
  std::vector<std::string> keys_;
  std::vector<QualityMetric> metrics_;
  std::unordered_map<std::string, std::vector<double>> rows_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::TableQuality)
