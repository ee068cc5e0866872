// Exhaustive search: every point of the space in mixed-radix order (the last gene varies fastest), so the
// i-th evaluation is point_at(space, i) and a stopped sweep is resumable by index.
#include <sstream>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/search_algorithm.hpp"
#include "monet/search/batches.hpp"
#include "monet/search/genome.hpp"
#include "monet/search/pareto.hpp"

namespace monet::plugins {
namespace {

class Grid final : public SearchAlgorithm {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::search;
    i.name = "grid";
    i.version = "1.0.0";
    i.summary = "Evaluates every point of the design space (exhaustive, mixed-radix order)";
    i.description = "Enumerates the space in mixed-radix order: the first gene is the most significant digit, the "
                    "last varies fastest, so point i is a fixed function of i. Refuses spaces with more points than "
                    "`limit`. Returns the feasible Pareto front of all points (the least violating point if none is "
                    "feasible). No randomness.";
    i.params = {
        ParamSpec::integer("limit", 100000)
            .with_bounds(Bounds::at_least(1))
            .with_unit("points")
            .with_doc("largest space the sweep accepts; raise it to enumerate a bigger space on purpose"),
        batch_parameter(),
    };
    return i;
  }
  explicit Grid(const ParamValues& params)
      : params_(params), limit_(params.get_int("limit")), batch_(static_cast<std::size_t>(params.get_int("batch"))) {}

  [[nodiscard]] std::vector<Evaluation> run(SearchContext& context) const override {
    const DesignSpace& space = context.space();
    const auto size = exact_size(space);
    if (!size || *size > static_cast<std::uint64_t>(limit_)) {
      std::ostringstream points;
      if (size) points << *size; else points << space.size();
      params_.fail("limit", "the design space has " + points.str() + " points, more than limit = " +
                                std::to_string(limit_) + "; raise `limit` to at least " + points.str() +
                                " to enumerate it all, or use a sampling search");
    }
    context.plan(*size);
    std::uint64_t index = 0;
    return best_front(evaluate_in_batches(context, *size, batch_, [&] { return point_at(space, index++); }));
  }

 private:
  ParamValues params_;
  std::int64_t limit_;
  std::size_t batch_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Grid)
