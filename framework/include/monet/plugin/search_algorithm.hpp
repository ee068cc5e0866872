#pragma once
// The search-algorithm plugin kind (`search`): explores a design space through the kernel's SearchContext.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "monet/plugin/plugin.hpp"
#include "monet/search/space.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// Thrown by SearchContext::evaluate when the user stopped the search (Ctrl-C, SIGTERM): the batch that was
/// running has been recorded; the plugin lets it propagate (the kernel writes what was evaluated and keeps a
/// journal that `--resume` replays).
class MONET_API SearchStopped : public std::runtime_error {
 public:
  SearchStopped();
  ~SearchStopped() override;
};

/// Services the kernel offers a running search. A search plugin must be a deterministic function of the space,
/// the seed and the evaluations it receives (use monet::Random seeded from seed()): the kernel resumes a stopped
/// search by running the plugin again and replaying the recorded evaluations.
class MONET_API SearchContext {
 public:
  virtual ~SearchContext();
  [[nodiscard]] virtual const DesignSpace& space() const = 0;
  [[nodiscard]] virtual std::uint64_t seed() const = 0;
  /// Points a search should start from, best guesses first: the experiment's configured point, then any the
  /// kernel knows to be good (e.g. checkpointing policies the DP solved). Valid points of space().
  [[nodiscard]] virtual std::vector<DesignPoint> seeds() const { return {space().configured()}; }
  /// Announces how many evaluations the search plans in all (for progress and ETA; 0 = unknown).
  virtual void plan(std::size_t total_evaluations) = 0;
  /// Evaluates a batch of points: in parallel (threads, MPI ranks), results in the order of the points and
  /// identical for any thread or rank count. Points evaluated before come from the archive. Each call is one
  /// generation / iteration in the progress line and in convergence.svg. Throws SearchStopped (see above).
  [[nodiscard]] virtual std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) = 0;
};

/// Explores the design space; returns the points it chose (best first; the kernel also reports the Pareto
/// front of every evaluation it made).
class MONET_API SearchAlgorithm : public Plugin {
 public:
  ~SearchAlgorithm() override;
  [[nodiscard]] virtual std::vector<Evaluation> run(SearchContext& context) const = 0;
};

}  // namespace monet
