// NSGA-II exactly as Deb, Pratap, Agarwal & Meyarivan (IEEE TEVC 6(2), 2002): fast non-dominated sorting
// under Deb's constrained domination, crowding distance, binary tournament with the crowded-comparison
// operator, (mu + lambda) elitist survival with mu = lambda = population. Variation per gene kind
// (monet/search/genome.hpp). Duplicate elimination against every point proposed so far, not only the
// population: on small discrete spaces repeats would otherwise take a large share of the budget.
// One SearchContext::evaluate call per generation; the initial population is generation 0.
#include <algorithm>
#include <numeric>
#include <set>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/search_algorithm.hpp"
#include "monet/search/batches.hpp"
#include "monet/search/genome.hpp"
#include "monet/search/pareto.hpp"
#include "monet/search/random.hpp"

namespace monet::plugins {
namespace {

/// A population with each member's non-domination rank (0 = first front) and crowding distance.
struct Population {
  std::vector<Evaluation> members;
  std::vector<std::size_t> rank;
  std::vector<double> crowding;
};

/// Deb's (mu + lambda) survival: whole fronts while they fit, the split front by crowding distance
/// (descending; ties keep the earlier member, parents before offspring). With `size` = all members it just
/// ranks and crowds them.
Population survive(std::vector<Evaluation> all, std::size_t size) {
  Population next;
  const auto fronts = non_dominated_fronts(all);
  for (std::size_t r = 0; r < fronts.size() && next.members.size() < size; ++r) {
    const auto& front = fronts[r];
    const std::vector<double> distance = crowding_distance(all, front);
    std::vector<std::size_t> order(front.size());
    std::iota(order.begin(), order.end(), 0);
    if (next.members.size() + front.size() > size)
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return distance[a] > distance[b]; });
    for (std::size_t k = 0; k < order.size() && next.members.size() < size; ++k) {
      next.members.push_back(std::move(all[front[order[k]]]));
      next.rank.push_back(r);
      next.crowding.push_back(distance[order[k]]);
    }
  }
  return next;
}

/// Binary tournaments with the crowded-comparison operator (lower rank, then larger crowding distance, then
/// a coin). Contestants come from shuffled permutations of the population, as in Deb's code, so every member
/// takes part equally often.
class Tournament {
 public:
  Tournament(const Population& population, Random& random) : population_(population), random_(random) {}
  std::size_t winner() {
    const std::size_t a = contestant();
    const std::size_t b = contestant();
    const auto& p = population_;
    if (p.rank[a] != p.rank[b]) return p.rank[a] < p.rank[b] ? a : b;
    if (p.crowding[a] != p.crowding[b]) return p.crowding[a] > p.crowding[b] ? a : b;
    return random_.chance(0.5) ? a : b;
  }

 private:
  std::size_t contestant() {
    if (next_ == order_.size()) {
      order_.resize(population_.members.size());
      std::iota(order_.begin(), order_.end(), 0);
      for (std::size_t i = order_.size(); i > 1; --i)
        std::swap(order_[i - 1], order_[static_cast<std::size_t>(random_.below(static_cast<std::int64_t>(i)))]);
      next_ = 0;
    }
    return order_[next_++];
  }

  const Population& population_;
  Random& random_;
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

/// Collects `size` points never seen before (not in `seen`, which it extends). The caller offers operator
/// children while patient() (fewer than `patience` refusals), then random points; after 2 x `patience`
/// refusals repeats are accepted (a space smaller than the budget).
class NovelPoints {
 public:
  NovelPoints(std::set<DesignPoint>& seen, std::size_t size, std::size_t patience)
      : seen_(seen), size_(size), patience_(patience) {}
  [[nodiscard]] bool full() const { return points_.size() == size_; }
  [[nodiscard]] bool patient() const { return refused_ < patience_; }
  void offer(const DesignPoint& p) {
    if (full()) return;
    if (seen_.insert(p).second || refused_ >= 2 * patience_) {
      points_.push_back(p);
    } else {
      ++refused_;
    }
  }
  std::vector<DesignPoint> take() { return std::move(points_); }

 private:
  std::set<DesignPoint>& seen_;
  std::size_t size_, patience_;
  std::size_t refused_ = 0;
  std::vector<DesignPoint> points_;
};

class Nsga2 final : public SearchAlgorithm {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::search;
    i.name = "nsga2";
    i.version = "1.0.0";
    i.summary = "NSGA-II (Deb et al. 2002) with Deb's constraint handling, per-gene-kind operators";
    i.description =
        "Deb's NSGA-II: fast non-dominated sorting under constrained domination (feasible beats infeasible, less "
        "violation beats more), crowding distance, binary tournament with the crowded-comparison operator, "
        "(mu + lambda) elitist survival with mu = lambda = population. Ordinal genes: SBX and polynomial mutation "
        "on the value index, rounded to the nearest index; categorical genes: uniform crossover and reset to "
        "another value. Duplicate elimination: an offspring equal to any point proposed before (not only the "
        "current population) is replaced by another child, or by a random new point when the operators keep "
        "repeating themselves. The initial population holds the search's seed points (the configured point first) and "
        "uniform random points. One evaluation batch per generation, population x (generations + 1) "
        "evaluations. Returns the feasible first front of the final population.";
    i.params = {
        ParamSpec::integer("population", 64)
            .with_bounds(Bounds::at_least(2))
            .with_unit("points")
            .with_doc("population size N = offspring per generation (Stream's GA default 64)"),
        ParamSpec::integer("generations", 250)
            .with_bounds(Bounds::non_negative())
            .with_unit("generations")
            .with_doc("generations after the initial population (Stream's GA default 250)"),
        ParamSpec::number("crossover_probability", 0.9)
            .with_bounds(Bounds{0.0, 1.0, false, false})
            .with_unit("probability")
            .with_doc("probability that a pair of parents is crossed (Deb 2002: 0.9)"),
        ParamSpec::number("crossover_eta", 20.0)
            .with_bounds(Bounds::non_negative())
            .with_doc("SBX distribution index eta_c for ordinal genes; larger keeps children nearer their parents "
                      "(Deb 2002: 20)"),
        ParamSpec::number("mutated_genes", 1.0)
            .with_bounds(Bounds::non_negative())
            .with_unit("genes")
            .with_doc("expected number of mutated genes per child: each gene mutates with probability "
                      "mutated_genes / n, n = genes with two or more values (Deb 2002: 1/n)"),
        ParamSpec::number("mutation_eta", 20.0)
            .with_bounds(Bounds::non_negative())
            .with_doc("polynomial-mutation distribution index eta_m for ordinal genes (Deb 2002: 20)"),
        ParamSpec::boolean("seed_population", true)
            .with_doc("start from the search's seed points (the configured point first); false: all random"),
    };
    return i;
  }
  explicit Nsga2(const ParamValues& p)
      : population_(static_cast<std::size_t>(p.get_int("population"))),
        generations_(static_cast<std::size_t>(p.get_int("generations"))),
        mutated_genes_(p.get_number("mutated_genes")),
        seed_population_(p.get_bool("seed_population")) {
    variation_.crossover_probability = p.get_number("crossover_probability");
    variation_.crossover_eta = p.get_number("crossover_eta");
    variation_.mutation_eta = p.get_number("mutation_eta");
  }

  [[nodiscard]] std::vector<Evaluation> run(SearchContext& context) const override {
    const DesignSpace& space = context.space();
    Random random(context.seed());
    Variation variation = variation_;
    variation.mutation_probability =
        std::min(1.0, mutated_genes_ / static_cast<double>(std::max<std::size_t>(1, mutable_genes(space))));
    context.plan(population_ * (generations_ + 1));

    std::set<DesignPoint> evaluated;  // every point proposed so far: offspring are always new points
    NovelPoints initial(evaluated, population_, patience());
    if (seed_population_)
      for (const DesignPoint& p : context.seeds()) initial.offer(p);
    while (!initial.full()) initial.offer(random_point(space, random));
    Population population = survive(evaluate_batch(context, initial.take()), population_);

    for (std::size_t generation = 1; generation <= generations_; ++generation) {
      std::vector<Evaluation> offspring = evaluate_batch(context, make_offspring(space, population, evaluated, variation, random));
      std::vector<Evaluation> all = std::move(population.members);
      std::move(offspring.begin(), offspring.end(), std::back_inserter(all));
      population = survive(std::move(all), population_);
    }
    return best_front(population.members);
  }

 private:
  [[nodiscard]] std::size_t patience() const { return 10 * population_; }

  /// Tournament, crossover and mutation until `population` new distinct children; random points when the
  /// operators keep repeating the population.
  std::vector<DesignPoint> make_offspring(const DesignSpace& space, const Population& population, std::set<DesignPoint>& evaluated,
                                          const Variation& variation, Random& random) const {
    NovelPoints children(evaluated, population_, patience());
    Tournament tournament(population, random);
    while (!children.full() && children.patient()) {
      const std::size_t a = tournament.winner();
      const std::size_t b = tournament.winner();
      auto pair = crossover(space, population.members[a].point, population.members[b].point, variation, random);
      for (DesignPoint& child : pair) {
        mutate(space, child, variation, random);
        children.offer(child);
      }
    }
    while (!children.full()) children.offer(random_point(space, random));
    return children.take();
  }

  std::size_t population_;
  std::size_t generations_;
  double mutated_genes_;
  bool seed_population_;
  Variation variation_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Nsga2)
