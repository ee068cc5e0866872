// What a run writes, by [output] artifacts.
#include "gzip.hpp"
#include "monet/report/html_report.hpp"
#include "monet/report/plots.hpp"
#include "monet/report/report.hpp"
#include "../util/parallel.hpp"

namespace monet {

std::vector<std::string> output_file_names(const Experiment& e) {
  std::vector<std::string> names{"results.json", "resolved.toml"};
  if (e.artifacts.csv) names.insert(names.end(), {"schedule.csv", "transfers.csv"});
  if (e.artifacts.trace) names.emplace_back("trace.json.gz");
  if (e.artifacts.plots) names.insert(names.end(), {"schedule.svg", "memory.svg"});
  if (e.artifacts.report) names.emplace_back("report.html");
  return names;
}

std::vector<std::pair<std::string, std::string>> output_files(const PreparedExperiment& p, const RunResult& r,
                                                              const std::filesystem::path& output_dir) {
  // Each file reads the run and writes only its own string, so they are made in parallel: after the costing, the
  // plots and the compressed trace are most of what a single run still does on one core.
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& name : output_file_names(p.experiment)) files.emplace_back(name, std::string());
  detail::parallel_for(std::size_t{0}, files.size(), [&](std::size_t i) {
    const std::string& name = files[i].first;
    std::string& content = files[i].second;
    if (name == "results.json") content = results_json(p, r);
    if (name == "resolved.toml") content = resolved_toml(p, output_dir);
    if (name == "schedule.csv") content = schedule_csv(p, r);
    if (name == "transfers.csv") content = transfers_csv(p, r);
    if (name == "trace.json.gz") content = detail::gzip(trace_json(p, r));
    if (name == "schedule.svg") content = schedule_svg(p, r);
    if (name == "memory.svg") content = memory_svg(p, r);
    if (name == "report.html") content = run_report_html(p, r);
  });
  return files;
}

}  // namespace monet
