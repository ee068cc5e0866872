#include "monet/search/search_run.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include <unistd.h>

#include "monet/search/pareto.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::vector<double> Normalisation::apply(const std::vector<double>& objectives) const {
  std::vector<double> out(objectives.size());
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    const double range = nadir[k] - ideal[k];
    out[k] = range > 0 ? (objectives[k] - ideal[k]) / range : 0.0;
  }
  return out;
}

Normalisation normalisation(const std::vector<Evaluation>& evaluations) {
  Normalisation n;
  for (const Evaluation& e : evaluations) {
    if (!e.feasible()) continue;
    if (n.ideal.empty()) {
      n.ideal = n.nadir = e.objectives;
      continue;
    }
    for (std::size_t k = 0; k < e.objectives.size(); ++k) {
      n.ideal[k] = std::min(n.ideal[k], e.objectives[k]);
      n.nadir[k] = std::max(n.nadir[k], e.objectives[k]);
    }
  }
  return n;
}

double normalised_hypervolume(const std::vector<Evaluation>& evaluations, const Normalisation& n) {
  if (n.ideal.empty()) return 0;
  std::vector<std::vector<double>> points;
  for (std::size_t i : pareto_front(evaluations)) points.push_back(n.apply(evaluations[i].objectives));
  return hypervolume(points, std::vector<double>(n.ideal.size(), 1.1));
}

std::vector<double> hypervolume_per_batch(const SearchResult& r, const Normalisation& n) {
  std::vector<double> hv;
  std::vector<Evaluation> seen;
  std::size_t next = 0;
  for (std::size_t b = 0; b < r.batches.size(); ++b) {
    while (next < r.archive.size() && r.first_batch[next] <= b) seen.push_back(r.archive[next++]);
    hv.push_back(normalised_hypervolume(seen, n));
  }
  return hv;
}

namespace {

/// A search whose archive alone would not fit this machine's memory is refused before its first batch, with the
/// number it would need (a grid over 10^12 points, a budget of 10^12). What each evaluation keeps, at least: the
/// archive entry and its genes and objectives, the index of points seen, and its rows of evaluations.csv and
/// journal.jsonl (about 2 and 10 characters per gene and objective), built in memory before they are written.
void refuse_beyond_memory_of(std::size_t total, const DesignSpace& space) {
  const double genes = static_cast<double>(space.genes.size());
  const double objectives = static_cast<double>(space.objectives.size());
  const double each = static_cast<double>(sizeof(Evaluation) + sizeof(DesignPoint) + 48 + sizeof(std::size_t)) +
                      2 * 4 * genes + 8 * objectives + 2 * (2 * genes + 10 * objectives);
  const double need = each * static_cast<double>(total);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double have = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
  if (have > 0 && need > have) {
    throw UserError("the search plans " + with_thousands(static_cast<long long>(std::min<double>(static_cast<double>(total), 9e18))) +
                    " evaluations; keeping their results needs at least " + si(need, "B") + " (" +
                    std::to_string(static_cast<long long>(each)) + " bytes each), more than this machine's " +
                    si(have, "B") + " of memory: lower the search's budget or sample the space");
  }
}

class KernelSearchContext final : public SearchContext {
 public:
  KernelSearchContext(const DesignEvaluator& evaluator, std::uint64_t seed, const SearchOptions& options, SearchResult& result)
      : evaluator_(evaluator), seed_(seed), options_(options), result_(result), t0_(std::chrono::steady_clock::now()) {}

  [[nodiscard]] const DesignSpace& space() const override { return evaluator_.space(); }
  [[nodiscard]] std::uint64_t seed() const override { return seed_; }
  [[nodiscard]] std::vector<DesignPoint> seeds() const override { return evaluator_.seeds(); }
  void plan(std::size_t total) override {
    refuse_beyond_memory(total);
    planned_ = total;
  }

  [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) override {
    if (options_.stop && options_.stop->load()) throw SearchStopped();
    const DesignSpace& s = space();
    for (const DesignPoint& p : points) {
      ensure(p.genes.size() == s.genes.size(), "search plugin proposed a point with " + std::to_string(p.genes.size()) +
                                                   " genes; the space has " + std::to_string(s.genes.size()));
      for (std::size_t g = 0; g < p.genes.size(); ++g) {
        ensure(p.genes[g] >= 0 && p.genes[g] < s.genes[g].size(), "search plugin proposed a value out of range for gene '" +
                                                                        s.genes[g].name + "'");
      }
    }
    const std::size_t batch = result_.batches.size();
    SearchBatch out;
    bool replayed = false;
    if (batch < options_.replay.size()) {
      // Resuming: this batch was evaluated by the stopped run.
      const SearchBatch& recorded = options_.replay[batch];
      bool same = recorded.evaluations.size() == points.size();
      for (std::size_t i = 0; same && i < points.size(); ++i) same = recorded.evaluations[i].point == points[i];
      if (!same) {
        throw UserError("--resume: batch " + std::to_string(batch) + " asks for other points than the stopped run did: "
                        "the experiment, its seed or the search parameters changed since");
      }
      out = recorded;
      replayed = true;
      for (const Evaluation& e : out.evaluations) remember(e, batch);
    } else {
      // New points are evaluated in parallel; points seen before (in the archive or earlier in this batch) are not.
      std::vector<std::size_t> fresh;
      std::map<DesignPoint, std::size_t> in_batch;
      out.evaluations.resize(points.size());
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (archived(points[i]) || in_batch.contains(points[i])) continue;
        in_batch.emplace(points[i], i);
        fresh.push_back(i);
      }
      // On this process's threads, or spread over the ranks of an MPI run; in point order either way.
      std::vector<DesignPoint> asked;
      asked.reserve(fresh.size());
      for (std::size_t k : fresh) asked.push_back(points[k]);
      Ranks& ranks = options_.ranks ? *options_.ranks : local_ranks();
      std::vector<Evaluation> got;
      try {
        got = ranks.evaluate(asked, result_.archive.size(), [this](const DesignPoint& p) { return evaluator_.evaluate(p); });
      } catch (const PointFailed& f) {
        result_.failure = failure_text(f);
        throw SearchStopped();
      }
      std::vector<bool> evaluated(points.size(), false);
      for (std::size_t k = 0; k < fresh.size(); ++k) {
        out.evaluations[fresh[k]] = std::move(got[k]);
        evaluated[fresh[k]] = true;
      }
      for (std::size_t k : fresh) remember(out.evaluations[k], batch);
      // Repeats take their first evaluation (by position, not by comparing points: a default Evaluation's empty
      // point equals the one point of a space without genes).
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (!evaluated[i]) out.evaluations[i] = result_.archive[index_.at(points[i])];
      }
    }
    result_.requested += points.size();
    result_.batches.push_back(out);
    if (options_.record) options_.record(out);
    report(replayed);
    return out.evaluations;
  }

 private:
  [[nodiscard]] bool archived(const DesignPoint& p) const { return index_.contains(p); }

  /// "rank 1 failed on point 17 (core = core2, ...): what": the point by its genes, as evaluations.csv has it.
  [[nodiscard]] std::string failure_text(const PointFailed& f) const {
    std::string genes;
    const DesignSpace& s = space();
    for (std::size_t g = 0; g < s.genes.size() && g < f.point.genes.size(); ++g) {
      if (g == 6) {
        genes += ", ...";
        break;
      }
      genes += (g ? ", " : "") + s.genes[g].name + " = " + s.genes[g].labels[static_cast<std::size_t>(f.point.genes[g])];
    }
    return "rank " + std::to_string(f.rank) + " failed on point " + std::to_string(f.index) + " (batch " +
           std::to_string(result_.batches.size()) + (genes.empty() ? "" : "; " + genes) + "): " + f.reason;
  }

  void remember(const Evaluation& e, std::size_t batch) {
    if (archived(e.point)) return;
    index_.emplace(e.point, result_.archive.size());
    result_.archive.push_back(e);
    result_.first_batch.push_back(batch);
    if (!e.feasible()) return;
    // The running front (non-dominated feasible points), kept incrementally: searches archive 10^4+ points.
    ++feasible_;
    for (std::size_t f : front_) {
      const auto& o = result_.archive[f].objectives;
      if (o == e.objectives || dominates(o, e.objectives)) return;
    }
    std::erase_if(front_, [&](std::size_t f) { return dominates(e.objectives, result_.archive[f].objectives); });
    front_.push_back(result_.archive.size() - 1);
  }

  void report(bool replayed) {
    if (!options_.progress) return;
    SearchProgress p;
    p.batch = result_.batches.size();
    p.done = result_.requested;
    p.planned = planned_;
    p.evaluated = result_.archive.size();
    p.feasible = feasible_;
    p.front = front_.size();
    std::vector<Evaluation> front;
    for (std::size_t f : front_) front.push_back(result_.archive[f]);
    p.hypervolume = normalised_hypervolume(front, normalisation(front));
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    p.replayed = replayed;
    options_.progress(p);
  }

  const DesignEvaluator& evaluator_;
  std::uint64_t seed_;
  const SearchOptions& options_;
  SearchResult& result_;
  std::chrono::steady_clock::time_point t0_;
  void refuse_beyond_memory(std::size_t total) const { refuse_beyond_memory_of(total, space()); }
  std::size_t planned_ = 0;
  std::map<DesignPoint, std::size_t> index_;  // point -> archive index
  std::vector<std::size_t> front_;            // archive indices of the running Pareto front
  std::size_t feasible_ = 0;
};

}  // namespace

SearchResult run_search(const DesignEvaluator& evaluator, const SearchAlgorithm& search, std::uint64_t seed,
                        const SearchOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult result;
  Ranks& ranks = options.ranks ? *options.ranks : local_ranks();
  ranks.reset_loads();
  KernelSearchContext context(evaluator, seed, options, result);
  try {
    result.chosen = search.run(context);
  } catch (const SearchStopped&) {
    result.stopped = true;
  }
  result.ranks = ranks.loads();
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace monet
