#pragma once
// What a search writes beside the full report of its best point (best/): every evaluation, the Pareto front,
// a summary of the search, the journal that --resume replays, and two plots.
#include <string>
#include <vector>

#include "monet/experiment/experiment.hpp"
#include "monet/search/search_run.hpp"

namespace monet {

/// evaluations.csv: one row per distinct point, in the order first asked for: its batch, one column per gene (by
/// name, the value's TOML text), every objective (by its results.json key), feasibility, violation and reason.
MONET_API std::string evaluations_csv(const DesignSpace& space, const SearchResult& result);
/// pareto.csv: the same columns for the non-dominated feasible points.
MONET_API std::string pareto_csv(const DesignSpace& space, const SearchResult& result);

/// search.json: the space (genes and values, objectives, constraints), the plugin and seed, counts, the front,
/// hypervolume per batch, cache statistics, provenance (monet's version and commit, the seed, the plugins of the
/// configured point, and with `registry` every plugin found, which genes may choose among).
MONET_API std::string search_json(const Experiment& experiment, const DesignSpace& space, const SearchResult& result,
                                  const DesignEvaluator::Stats& stats, const Registry* registry = nullptr);

/// journal.jsonl: every batch (points and results, doubles exact); --resume replays it.
MONET_API std::string journal_jsonl(const SearchResult& result);
MONET_API std::string journal_line(const SearchBatch& batch);
/// Reads a journal back; throws UserError naming the file and line when it does not fit `space`.
MONET_API std::vector<SearchBatch> read_journal(const std::string& text, const std::string& file, const DesignSpace& space);

/// pareto.svg: every evaluated point, the front highlighted; pairwise panels for 3+ objectives.
MONET_API std::string pareto_svg(const DesignSpace& space, const SearchResult& result);
/// convergence.svg: hypervolume of the front (fixed normalisation) and the best value of each objective per batch.
MONET_API std::string convergence_svg(const DesignSpace& space, const SearchResult& result);

}  // namespace monet
