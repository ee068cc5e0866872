#pragma once
// Evaluation in batches: one checked SearchContext::evaluate call, and the loop of the searches that propose
// points without looking at results (grid, random), one call per fixed-size batch.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "monet/config/params.hpp"
#include "monet/plugin/search_algorithm.hpp"
#include "monet/search/space.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// The `batch` parameter of such searches: points per evaluation call (default 64), one progress step each.
MONET_API ParamSpec batch_parameter();

/// One SearchContext::evaluate call, checked to return one evaluation per point.
MONET_API std::vector<Evaluation> evaluate_batch(SearchContext& context, const std::vector<DesignPoint>& points);

/// Evaluates `count` points drawn in order from `next`, `batch` at a time; the evaluations in that order.
/// SearchStopped from the context propagates.
MONET_API std::vector<Evaluation> evaluate_in_batches(SearchContext& context, std::uint64_t count, std::size_t batch,
                                                      const std::function<DesignPoint()>& next);

}  // namespace monet
