// Random search without replacement: the configured point, then points drawn uniformly among those not yet
// drawn. The unbiased baseline every other search must beat at the same budget.
#include <limits>
#include <set>
#include <unordered_map>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/search_algorithm.hpp"
#include "monet/search/batches.hpp"
#include "monet/search/genome.hpp"
#include "monet/search/pareto.hpp"
#include "monet/search/random.hpp"

namespace monet::plugins {
namespace {

/// Draws distinct indices of [0, n) uniformly: a Fisher–Yates shuffle that stores only the displaced
/// entries, so memory grows with the draws, not with n.
class IndexShuffle {
 public:
  explicit IndexShuffle(std::uint64_t n) : n_(n) {}
  /// The next index: `forced` (an index not drawn yet) or a uniform one among the rest.
  std::uint64_t draw(Random& random, std::optional<std::uint64_t> forced = std::nullopt) {
    const std::uint64_t j =
        forced ? position_of(*forced) : drawn_ + static_cast<std::uint64_t>(random.below(static_cast<std::int64_t>(n_ - drawn_)));
    const std::uint64_t picked = at(j);
    set(j, at(drawn_));
    set(drawn_, picked);
    position_.erase(picked);
    ++drawn_;
    return picked;
  }

 private:
  [[nodiscard]] std::uint64_t at(std::uint64_t i) const {
    const auto it = slots_.find(i);
    return it == slots_.end() ? i : it->second;
  }
  void set(std::uint64_t i, std::uint64_t value) {
    slots_[i] = value;
    position_[value] = i;
  }
  [[nodiscard]] std::uint64_t position_of(std::uint64_t value) const {
    const auto it = position_.find(value);
    return it == position_.end() ? value : it->second;
  }

  std::uint64_t n_;
  std::uint64_t drawn_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> slots_;     // slot -> index, where they differ
  std::unordered_map<std::uint64_t, std::uint64_t> position_;  // index -> slot, for moved indices
};

class RandomSearch final : public SearchAlgorithm {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::search;
    i.name = "random";
    i.version = "1.0.0";
    i.summary = "Uniform random sampling without replacement, the configured point first";
    i.description =
        "Evaluates the configured point, then points drawn uniformly among those not drawn yet (no point twice); "
        "with a budget at least the size of the space it evaluates every point. Deterministic for a seed "
        "(monet::Random). Returns the feasible Pareto front of what it evaluated (the least violating point if "
        "none is feasible). The default budget equals nsga2's default (64 x 251 evaluations), so the two compare "
        "at equal cost.";
    i.params = {
        ParamSpec::integer("budget", 64 * 251)
            .with_bounds(Bounds::at_least(1))
            .with_unit("evaluations")
            .with_doc("points to evaluate (capped at the size of the space)"),
        batch_parameter(),
    };
    return i;
  }
  explicit RandomSearch(const ParamValues& params)
      : budget_(static_cast<std::uint64_t>(params.get_int("budget"))),
        batch_(static_cast<std::size_t>(params.get_int("batch"))) {}

  [[nodiscard]] std::vector<Evaluation> run(SearchContext& context) const override {
    const DesignSpace& space = context.space();
    Random random(context.seed());
    const auto size = exact_size(space);
    const DesignPoint configured = space.configured();
    if (size && *size <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      const std::uint64_t count = std::min(budget_, *size);
      context.plan(count);
      IndexShuffle shuffle(*size);
      bool first = true;
      return best_front(evaluate_in_batches(context, count, batch_, [&] {
        const auto forced = first ? std::optional(point_index(space, configured)) : std::nullopt;
        first = false;
        return point_at(space, shuffle.draw(random, forced));
      }));
    }
    // More than 2^63 points: a repeat among `budget` uniform draws is vanishingly rare, and rejected.
    context.plan(budget_);
    std::set<DesignPoint> drawn;
    return best_front(evaluate_in_batches(context, budget_, batch_, [&] {
      DesignPoint p = drawn.empty() ? configured : random_point(space, random);
      while (!drawn.insert(p).second) p = random_point(space, random);
      return p;
    }));
  }

 private:
  std::uint64_t budget_;
  std::size_t batch_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::RandomSearch)
