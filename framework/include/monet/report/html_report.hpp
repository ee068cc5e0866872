#pragma once
// report.html: one self-contained page per run and per search (no network, no server). The page is a template
// kept in the repository (framework/src/report/report_template.html with its report.css, report.js and
// report_search.js, compiled into libmonet) with the data embedded as one JSON document; its script draws the
// views (docs/experiments.md#reporthtml).
#include <map>
#include <optional>
#include <string>

#include "monet/experiment/runner.hpp"
#include "monet/search/search_run.hpp"

namespace monet {

/// report.html of a run: summary with units, Gantt chart of cores and links, memory over time, energy breakdown,
/// training memory table.
MONET_API std::string run_report_html(const PreparedExperiment& prepared, const RunResult& result);

/// report.html of a search: every evaluated point and the front (axis choice, filters, hover, click), hypervolume
/// per batch; `best` (when a point's full report was kept in best/) adds that point's schedule to its details.
/// `kept`: the folders (relative to the search's) holding the full results of evaluations other than the best,
/// by index into result.archive; the page links each point to its folder's report.html.
MONET_API std::string search_report_html(const Experiment& experiment, const DesignSpace& space, const SearchResult& result,
                                         const std::optional<DesignPoint>& best_point,
                                         const PreparedExperiment* best_prepared, const RunResult* best,
                                         const std::map<std::size_t, std::string>& kept = {});

/// The data a run's page shows, as JSON (columnar arrays: compact for 10^5 CNs).
MONET_API std::string run_report_data(const PreparedExperiment& prepared, const RunResult& result);

/// The page: `page_template` with `data_json` in place of its data marker, escaped so that no text inside it
/// ends the <script> element or opens a comment ("</script>", "<!--" : every '<' becomes \u003c).
/// Throws std::logic_error when the template has no marker.
MONET_API std::string embed_report_data(const std::string& page_template, const std::string& data_json);

/// The template compiled into the library: report_template.html with report.css, report.js and report_search.js in their places.
MONET_API const std::string& report_template();

}  // namespace monet
