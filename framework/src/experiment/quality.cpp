#include "monet/experiment/quality.hpp"

#include <algorithm>
#include <set>

#include "monet/config/toml_paths.hpp"
#include "monet/report/metrics.hpp"

namespace monet {

std::optional<QualityPlugin> make_quality_plugin(const Experiment& e) {
  if (!e.quality) return std::nullopt;
  QualityPlugin q;
  q.model = Registry::create<QualityModel>(*e.quality->plugin, e.quality->params);
  q.metrics = q.model->metrics();
  std::set<std::string> own;
  for (const auto& [key, unit] : metric_keys()) own.insert(key);
  std::set<std::string> seen;
  for (const QualityMetric& m : q.metrics) {
    if (m.key.empty()) throw UserError(e.quality->where, "quality plugin '" + e.quality->name() + "' names a metric ''");
    if (own.contains(m.key)) {
      throw UserError(e.quality->where, "the quality metric '" + m.key + "' has the name of a metric of the run itself; "
                                        "name it otherwise");
    }
    if (!seen.insert(m.key).second) throw UserError(e.quality->where, "the quality metric '" + m.key + "' is given twice");
  }
  return q;
}

std::optional<std::string> point_key_value(const PreparedExperiment& p,
                                           const std::vector<std::pair<std::string, std::string>>& genes,
                                           const std::string& key) {
  const Experiment& e = p.experiment;
  if (const std::string path = workload_set_path(key); !path.empty()) {
    if (e.workload_file.extension() != ".toml") return std::nullopt;
    const std::shared_ptr<const TomlDocument> doc =
        e.workload_document ? e.workload_document : std::make_shared<const TomlDocument>(TomlDocument::parse_file(e.workload_file));
    try {
      return toml_path_text(*doc, workload_path_segments(*doc, path, SourceLocation{}));
    } catch (const UserError&) {
      return std::nullopt;  // not a path of this workload (workload.set.generator, a malformed path)
    }
  }
  if (key.rfind("workload.", 0) == 0) {
    const std::string k = key.substr(std::string("workload.").size());
    if (k == "file") return "\"" + e.workload_file.string() + "\"";
    if (e.frontend.params.has(k)) return to_string(e.frontend.params.get(k));
    return std::nullopt;
  }
  for (const auto& [name, value] : genes) {
    if (name == key) return value;
  }
  return std::nullopt;
}

std::vector<double> assess_quality(const QualityPlugin& q, const PreparedExperiment& p,
                                   const std::vector<std::pair<std::string, std::string>>& genes) {
  QualityQuery query;
  query.genes = genes;
  query.forward = p.forward.get();
  query.value = [&p, &genes](const std::string& key) { return point_key_value(p, genes, key); };
  std::vector<double> values = q.model->assess(query);
  if (values.size() != q.metrics.size()) {
    throw InternalError("quality plugin '" + p.experiment.quality->name() + "' gave " + std::to_string(values.size()) +
                        " values for " + std::to_string(q.metrics.size()) + " metrics");
  }
  return values;
}

std::vector<Metric> quality_metrics(const QualityPlugin& q, const PreparedExperiment& p,
                                    const std::vector<std::pair<std::string, std::string>>& genes) {
  const std::vector<double> values = assess_quality(q, p, genes);
  std::vector<Metric> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back(Metric{q.metrics[i].key, q.metrics[i].unit, values[i]});
  return out;
}

}  // namespace monet
