#include "monet/search/batches.hpp"

#include <algorithm>
#include <iterator>

#include "monet/util/error.hpp"

namespace monet {

ParamSpec batch_parameter() {
  return ParamSpec::integer("batch", 64)
      .with_bounds(Bounds::at_least(1))
      .with_unit("points")
      .with_doc("points handed to the evaluator at once (one progress step each)");
}

std::vector<Evaluation> evaluate_batch(SearchContext& context, const std::vector<DesignPoint>& points) {
  std::vector<Evaluation> evaluated = context.evaluate(points);
  ensure(evaluated.size() == points.size(), "SearchContext::evaluate returned a different number of evaluations");
  return evaluated;
}

std::vector<Evaluation> evaluate_in_batches(SearchContext& context, std::uint64_t count, std::size_t batch,
                                            const std::function<DesignPoint()>& next) {
  ensure(batch > 0, "evaluate_in_batches: batch of 0 points");
  std::vector<Evaluation> all;
  all.reserve(static_cast<std::size_t>(count));
  std::vector<DesignPoint> points;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(batch, count - done);
    points.clear();
    for (std::uint64_t i = 0; i < n; ++i) points.push_back(next());
    std::vector<Evaluation> evaluated = evaluate_batch(context, points);
    std::move(evaluated.begin(), evaluated.end(), std::back_inserter(all));
    done += n;
  }
  return all;
}

}  // namespace monet
