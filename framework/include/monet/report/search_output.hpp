#pragma once
// What `monet run` keeps of a finished (or stopped) search plugin's run, shared by the CLI and the Python module
// (python/): the point whose full report is written, its RunResult, the check a single run's schedule must pass,
// and the files of a search's output folder.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "monet/search/search_run.hpp"

namespace monet {

/// The point whose full report goes to best/: the plugin's first choice, else (a stopped search) the front's
/// point with the smallest first objective, else the least violating point; none when nothing was evaluated.
MONET_API std::optional<DesignPoint> best_point(const SearchResult& result);

/// What the reports of `best` need: the search's evaluations and counts with the point's schedule and quality.
MONET_API RunResult run_result(const SearchResult& result, const DesignPoint& best, const DesignEvaluator::Detail& detail);

/// A run of an experiment without a [space]: UserError located at `file` when the schedule does not fit the
/// memories and the experiment does not set [schedule] allow_over_capacity (nothing is written then).
MONET_API void check_schedule_fits(const Experiment& experiment, const ScheduleSummary& summary, const std::string& file);

/// The resolved experiment of the base point with the [space] it searched, so that running it again reproduces the
/// search.
MONET_API std::string resolved_search_toml(const PreparedExperiment& base, const ExperimentSource& source,
                                           const std::filesystem::path& dir);

/// A search's output folder: every evaluation, the front, the plots, the journal, resolved.toml, report.html, the
/// best point's full report in best/ and other points of the front in front/point-I/ (I = row of evaluations.csv).
struct SearchOutput {
  std::vector<std::pair<std::string, std::string>> files;  // relative path, content
  std::optional<DesignPoint> best;
  std::optional<DesignEvaluator::Detail> detail;  // of `best`, when it could be evaluated
  RunResult result;                               // of `best` (run_result), when `detail`
  std::map<std::size_t, std::string> kept;        // archive index -> front/point-I
};
/// Points that cannot be evaluated again are skipped with a warning. `registry`: listed in search.json.
MONET_API SearchOutput search_output(const Experiment& experiment, const ExperimentSource& source,
                                     const DesignEvaluator& evaluator, const SearchResult& result,
                                     const Registry* registry, const std::filesystem::path& out_dir);

}  // namespace monet
