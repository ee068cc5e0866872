#pragma once
// Running a search plugin over a design space: the kernel's side of SearchContext. It evaluates each batch in
// parallel (results in point order, identical for any thread count), serves points evaluated before from the
// archive, keeps every evaluation, reports progress, stops after the running batch when asked, and replays a
// journal of recorded batches to resume a stopped search exactly.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "monet/distributed/ranks.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/search/design_evaluator.hpp"

namespace monet {

struct SearchProgress {
  std::size_t batch = 0;       // batches done (generations, iterations)
  std::size_t done = 0;        // evaluations requested so far (incl. those served from the archive)
  std::size_t planned = 0;     // what the plugin announced (0: unknown)
  std::size_t evaluated = 0;   // distinct points evaluated
  std::size_t feasible = 0;    // of those, feasible
  std::size_t front = 0;       // size of the Pareto front of the feasible evaluations
  double hypervolume = 0;      // of that front, objectives normalised by the feasible ranges seen so far, ref 1.1
  double elapsed_s = 0;
  bool replayed = false;       // the batch came from a resume journal
};

/// One call of SearchContext::evaluate: the points asked for and what they got.
struct SearchBatch {
  std::vector<Evaluation> evaluations;
};

struct SearchOptions {
  std::function<void(const SearchProgress&)> progress;  // after every batch
  const std::atomic<bool>* stop = nullptr;              // set (e.g. by Ctrl-C): stop after the running batch
  std::vector<SearchBatch> replay;                      // batches of a stopped run, replayed without evaluation
  /// Called after every batch with it (to journal it while the search runs).
  std::function<void(const SearchBatch&)> record;
  /// The processes that evaluate (world_ranks() under mpirun); null: this process alone (local_ranks()).
  Ranks* ranks = nullptr;
};

struct SearchResult {
  std::vector<Evaluation> chosen;      // what the plugin returned, best first (empty when stopped)
  std::vector<Evaluation> archive;     // every distinct point evaluated, in the order first asked for
  std::vector<SearchBatch> batches;    // every evaluate() call, in order (resume journal)
  std::vector<std::size_t> first_batch;  // per archive entry: the batch that first asked for it
  std::size_t requested = 0;           // evaluations asked for (duplicates included)
  bool stopped = false;
  /// A point's evaluation threw (on some rank): the search stopped before that batch (stopped = true, resumable),
  /// this says which rank and point.
  std::string failure;
  std::vector<RankLoad> ranks;  // per rank: points evaluated and busy time (load balance)
  double wall_seconds = 0;
};

/// Runs `search` over `evaluator`'s space with `seed`. A UserError from the plugin (e.g. a grid too large)
/// propagates; SearchStopped ends the search early with stopped = true, and so does a point whose evaluation
/// throws (with `failure` set).
MONET_API SearchResult run_search(const DesignEvaluator& evaluator, const SearchAlgorithm& search, std::uint64_t seed,
                                  const SearchOptions& options = {});

/// Objectives normalised over the feasible evaluations of an archive (ideal 0, nadir 1), their Pareto front and
/// hypervolume with reference point 1.1 in every objective; the normalisation is fixed by the whole archive, so
/// values per batch are comparable (convergence).
struct Normalisation {
  std::vector<double> ideal, nadir;
  [[nodiscard]] std::vector<double> apply(const std::vector<double>& objectives) const;
};
MONET_API Normalisation normalisation(const std::vector<Evaluation>& evaluations);
MONET_API double normalised_hypervolume(const std::vector<Evaluation>& evaluations, const Normalisation& n);
/// The hypervolume of everything evaluated up to each batch of a search, under one normalisation.
MONET_API std::vector<double> hypervolume_per_batch(const SearchResult& result, const Normalisation& n);

}  // namespace monet
