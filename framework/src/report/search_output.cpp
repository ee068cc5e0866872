#include "monet/report/search_output.hpp"

#include <spdlog/spdlog.h>

#include <sstream>

#include "monet/report/html_report.hpp"
#include "monet/report/report.hpp"
#include "monet/report/search_report.hpp"
#include "monet/search/pareto.hpp"

namespace monet {

namespace fs = std::filesystem;

std::optional<DesignPoint> best_point(const SearchResult& r) {
  if (!r.chosen.empty()) return r.chosen.front().point;
  const std::vector<Evaluation> best = best_front(r.archive);
  if (best.empty()) return std::nullopt;
  const Evaluation* pick = &best.front();
  for (const Evaluation& e : best) {
    if (!e.objectives.empty() && e.objectives.front() < pick->objectives.front()) pick = &e;
  }
  return pick->point;
}

RunResult run_result(const SearchResult& r, const DesignPoint& best, const DesignEvaluator::Detail& detail) {
  RunResult result;
  result.evaluations = r.chosen;
  result.evaluation_count = r.requested;
  result.wall_seconds = r.wall_seconds;
  result.best_point = best;
  result.best = detail.schedule;
  result.quality = detail.quality;
  return result;
}

void check_schedule_fits(const Experiment& e, const ScheduleSummary& summary, const std::string& file) {
  if (summary.capacity_violation > 0 && !e.allow_over_capacity) {
    throw UserError(SourceLocation{file}, "the schedule does not fit the memories: " + summary.capacity_reason +
                                              "; nothing was written (set [schedule] allow_over_capacity = "
                                              "true to report it anyway)");
  }
}

std::string resolved_search_toml(const PreparedExperiment& base, const ExperimentSource& source, const fs::path& dir) {
  std::string out = resolved_toml(base, dir);
  const TomlDocument changed = source.changed_document();  // the [space] as searched, --set included
  if (const toml::node* space = changed.root().get("space")) {
    toml::table t;
    t.insert("space", *space);
    std::ostringstream s;
    s << "\n" << toml::toml_formatter(t) << "\n";
    out += s.str();
  }
  return out;
}

SearchOutput search_output(const Experiment& e, const ExperimentSource& source, const DesignEvaluator& evaluator,
                           const SearchResult& r, const Registry* registry, const fs::path& out_dir) {
  SearchOutput o;
  o.best = best_point(r);
  if (o.best) {
    try {
      o.detail = evaluator.detail(*o.best);
      o.result = run_result(r, *o.best, *o.detail);
    } catch (const UserError& err) {
      spdlog::warn("no point of the search could be evaluated: {}", err.what());
    }
  }
  o.files = {
      {"evaluations.csv", evaluations_csv(evaluator.space(), r)},
      {"pareto.csv", pareto_csv(evaluator.space(), r)},
      {"search.json", search_json(e, evaluator.space(), r, evaluator.stats(), registry)},
      {"journal.jsonl", journal_jsonl(r)},
      {"resolved.toml", resolved_search_toml(evaluator.base(), source, out_dir)},
  };
  if (output_file_names(e).size() > 2) {  // plots are an artefact like the others ([output] artifacts)
    o.files.emplace_back("pareto.svg", pareto_svg(evaluator.space(), r));
    o.files.emplace_back("convergence.svg", convergence_svg(evaluator.space(), r));
  }
  // Other points of the front keep their full results too, spread along it.
  for (std::size_t i : spread_over_front(r.archive, static_cast<std::size_t>(e.artifacts.front_points))) {
    if (o.best && r.archive[i].point.genes == o.best->genes) continue;  // in best/
    const std::string folder = "front/point-" + std::to_string(i);
    std::optional<DesignEvaluator::Detail> found;
    try {
      found = evaluator.detail(r.archive[i].point);
    } catch (const UserError& err) {
      spdlog::warn("front point {} was not kept in {}/: {}", i, folder, err.what());
      continue;
    }
    RunResult run = run_result(r, r.archive[i].point, *found);
    run.evaluations = {r.archive[i]};  // as best/: the counts of the search that found it
    for (auto& [name, content] : output_files(*found->prepared, run, out_dir / folder)) {
      o.files.emplace_back(folder + "/" + name, std::move(content));
    }
    o.kept[i] = folder;
  }
  if (e.artifacts.report) {
    o.files.emplace_back("report.html", search_report_html(e, evaluator.space(), r, o.best,
                                                           o.detail ? o.detail->prepared.get() : nullptr,
                                                           o.detail ? &o.result : nullptr, o.kept));
  }
  if (o.detail) {
    for (auto& [name, content] : output_files(*o.detail->prepared, o.result, out_dir / "best")) {
      o.files.emplace_back("best/" + name, std::move(content));
    }
  }
  return o;
}

}  // namespace monet
