// Simulated annealing (Kirkpatrick, Gelatt & Vecchi 1983) on a weighted sum of normalised objectives:
// independent chains, each with its own Random stream, stepped together so that one iteration is one
// evaluation batch. Metropolis acceptance with geometric cooling; Deb's feasibility rule for constraints.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/search_algorithm.hpp"
#include "monet/search/batches.hpp"
#include "monet/search/genome.hpp"
#include "monet/search/random.hpp"

namespace monet::plugins {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// The weighted sum of objectives divided by fixed scales; NaN (an unevaluated objective) counts as +inf.
struct Scalarisation {
  std::vector<double> weights;
  std::vector<double> scales;

  [[nodiscard]] double operator()(const Evaluation& e) const {
    double s = 0;
    for (std::size_t m = 0; m < weights.size(); ++m) {
      if (weights[m] == 0) continue;
      const double term = weights[m] * e.objectives[m] / scales[m];
      if (std::isnan(term)) return kInfinity;
      s += term;
    }
    return std::isnan(s) ? kInfinity : s;
  }

  /// How much worse `candidate` is than `current` (negative: better). Deb's feasibility rule: a feasible point
  /// beats an infeasible one outright (-inf / +inf), two infeasible points compare by violation, two feasible
  /// ones by the scalar. Equal values (also two infinities) differ by 0.
  [[nodiscard]] double worsening(const Evaluation& candidate, const Evaluation& current) const {
    if (candidate.feasible() != current.feasible()) return candidate.feasible() ? -kInfinity : kInfinity;
    const double a = candidate.feasible() ? (*this)(candidate) : candidate.violation;
    const double b = current.feasible() ? (*this)(current) : current.violation;
    return a == b ? 0.0 : a - b;
  }
};

/// Scales from the first feasible evaluation with finite objectives (seeds come first), else the first with
/// finite objectives: |value|, or 1 where it is 0 or not finite. Fixed for the whole run.
std::vector<double> scales_from(const std::vector<Evaluation>& start, std::size_t objectives) {
  auto finite = [](const Evaluation& e) {
    return std::all_of(e.objectives.begin(), e.objectives.end(), [](double v) { return std::isfinite(v); });
  };
  const Evaluation* reference = nullptr;
  for (const Evaluation& e : start)
    if (!reference && e.feasible() && finite(e)) reference = &e;
  for (const Evaluation& e : start)
    if (!reference && finite(e)) reference = &e;
  std::vector<double> scales(objectives, 1.0);
  if (reference)
    for (std::size_t m = 0; m < objectives; ++m)
      if (reference->objectives[m] != 0) scales[m] = std::abs(reference->objectives[m]);
  return scales;
}

class Anneal final : public SearchAlgorithm {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::search;
    i.name = "anneal";
    i.version = "1.0.0";
    i.summary = "Simulated annealing of a weighted sum of normalised objectives, parallel independent chains";
    i.description =
        "Minimises sum_m weights[m] * f_m / s_m, where s_m = |f_m| of the first feasible start point (the "
        "search's seed points come first: the configured point), fixed for the run. `chains` independent chains "
        "start at the seed points, then at uniform random points, and step together (one evaluation batch per "
        "iteration). A step changes one gene: an ordinal gene by 1..max_step indices, a categorical gene to "
        "another value. Metropolis acceptance exp(-delta / T), T = t0 * alpha^(iteration - 1). Constraints by "
        "Deb's feasibility rule: a feasible point always beats an infeasible one, two infeasible points compare by "
        "violation. Each chain draws from its own Random stream (derive_seed(seed, chain)). Returns each chain's "
        "best point, best first (only the feasible ones when there are any).";
    i.params = {
        ParamSpec::integer("iterations", 250)
            .with_bounds(Bounds::non_negative())
            .with_unit("steps")
            .with_doc("annealing steps after the start points (each one evaluation batch)"),
        ParamSpec::integer("chains", 64)
            .with_bounds(Bounds::at_least(1))
            .with_unit("chains")
            .with_doc("independent chains, evaluated together; the defaults match nsga2's budget (64 x 251)"),
        ParamSpec::number("t0", 0.1)
            .with_bounds(Bounds::positive())
            .with_doc("initial temperature, in units of the normalised scalar (the seed point scores sum(weights)); "
                      "0.1 accepts a 1 % worsening with probability 0.9 at first"),
        ParamSpec::number("alpha", 0.97)
            .with_bounds(Bounds::fraction())
            .with_doc("geometric cooling factor per step: 0.97 cools 0.1 to 5e-5 over 250 steps"),
        ParamSpec::number_list("weights", std::vector<double>{})
            .with_bounds(Bounds::non_negative())
            .with_doc("weight of each objective, in the space's objective order; empty: equal weights 1/M"),
        ParamSpec::integer("max_step", 2)
            .with_bounds(Bounds::at_least(1))
            .with_unit("indices")
            .with_doc("largest move of an ordinal gene in one step"),
    };
    return i;
  }
  explicit Anneal(const ParamValues& p)
      : params_(p),
        iterations_(static_cast<std::size_t>(p.get_int("iterations"))),
        chains_(static_cast<std::size_t>(p.get_int("chains"))),
        t0_(p.get_number("t0")),
        alpha_(p.get_number("alpha")),
        max_step_(static_cast<std::int32_t>(p.get_int("max_step"))) {}

  [[nodiscard]] std::vector<Evaluation> run(SearchContext& context) const override {
    const DesignSpace& space = context.space();
    const std::size_t objectives = space.objectives.size();
    Scalarisation scalar{weights(objectives), {}};
    context.plan(chains_ * (iterations_ + 1));

    std::vector<Random> streams;
    for (std::size_t c = 0; c < chains_; ++c) streams.emplace_back(derive_seed(context.seed(), c));
    const std::vector<DesignPoint> seeds = context.seeds();
    std::vector<DesignPoint> starts;
    for (std::size_t c = 0; c < chains_; ++c) starts.push_back(c < seeds.size() ? seeds[c] : random_point(space, streams[c]));
    std::vector<Evaluation> current = evaluate_batch(context, starts);
    scalar.scales = scales_from(current, objectives);
    std::vector<Evaluation> best = current;

    double temperature = t0_;
    for (std::size_t step = 1; step <= iterations_; ++step) {
      std::vector<DesignPoint> moves;
      for (std::size_t c = 0; c < chains_; ++c) moves.push_back(neighbour(space, current[c].point, max_step_, streams[c]));
      std::vector<Evaluation> proposed = evaluate_batch(context, moves);
      for (std::size_t c = 0; c < chains_; ++c) {
        const double delta = scalar.worsening(proposed[c], current[c]);
        if (delta <= 0 || streams[c].uniform() < std::exp(-delta / temperature)) current[c] = proposed[c];
        if (scalar.worsening(current[c], best[c]) < 0) best[c] = current[c];
      }
      temperature *= alpha_;
    }

    std::stable_sort(best.begin(), best.end(),
                     [&](const Evaluation& a, const Evaluation& b) { return scalar.worsening(a, b) < 0; });
    std::vector<Evaluation> chosen;
    std::set<DesignPoint> seen;
    const bool any_feasible = best.front().feasible();  // then infeasible chain ends are not choices
    for (Evaluation& e : best)
      if ((e.feasible() || !any_feasible) && seen.insert(e.point).second) chosen.push_back(std::move(e));
    return chosen;
  }

 private:
  [[nodiscard]] std::vector<double> weights(std::size_t objectives) const {
    std::vector<double> w = params_.get_numbers("weights");
    if (w.empty()) return std::vector<double>(objectives, 1.0 / static_cast<double>(objectives));
    if (w.size() != objectives)
      params_.fail("weights", "has " + std::to_string(w.size()) + " values but the search has " +
                                  std::to_string(objectives) + " objectives; give one weight per objective");
    if (std::all_of(w.begin(), w.end(), [](double v) { return v == 0; }))
      params_.fail("weights", "all weights are 0; give at least one objective a positive weight");
    return w;
  }


  ParamValues params_;
  std::size_t iterations_;
  std::size_t chains_;
  double t0_;
  double alpha_;
  std::int32_t max_step_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Anneal)
