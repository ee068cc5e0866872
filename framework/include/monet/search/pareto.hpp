#pragma once
// Multi-objective building blocks shared by the kernel (archive, Pareto filter, progress, convergence) and
// search plugins: dominance, Deb's constrained domination, fast non-dominated sorting, crowding distance and
// the hypervolume indicator. Every objective is minimised. Deterministic: ties are broken by index, never by
// chance, so results do not depend on thread counts.
#include <cstddef>
#include <vector>

#include "monet/search/space.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// a ≺ b: a is no worse in every objective and better in at least one.
MONET_API bool dominates(const std::vector<double>& a, const std::vector<double>& b);

/// Deb's constrained domination (Deb 2000): a feasible point dominates an infeasible one; of two infeasible
/// points the smaller violation dominates; two feasible points compare by `dominates`.
MONET_API bool constrained_dominates(const Evaluation& a, const Evaluation& b);

/// Fast non-dominated sort (Deb et al. 2002) under constrained domination: fronts of indices into `evals`,
/// best first; indices ascending within a front. O(M N^2) time and O(N^2) memory: meant for populations.
MONET_API std::vector<std::vector<std::size_t>> non_dominated_fronts(const std::vector<Evaluation>& evals);

/// Crowding distance of the members of one front (indices into `evals`), in the order of `front`; boundary
/// points of each objective get +infinity; an objective with zero range, or with a NaN or infinite value among
/// the members (unevaluated points), adds nothing. Ties in an objective are ordered by position in `front`.
MONET_API std::vector<double> crowding_distance(const std::vector<Evaluation>& evals, const std::vector<std::size_t>& front);

/// Indices of the feasible, non-dominated evaluations (duplicated objective vectors keep the first; NaN
/// objectives are never on the front), ascending. O(N log N) for 2 objectives, O(N F) otherwise (F = front size).
MONET_API std::vector<std::size_t> pareto_front(const std::vector<Evaluation>& evals);

/// What a search returns as its choice: the feasible non-dominated evaluations (pareto_front), ordered by their
/// objective vectors lexicographically (best first in the first objective); when none is feasible, the first
/// evaluation of least violation alone.
MONET_API std::vector<Evaluation> best_front(const std::vector<Evaluation>& evals);

/// At most `n` points of the Pareto front (pareto_front) spread along it: ordered by their objective vectors, the
/// two extremes and evenly spaced ones between; indices into `evals`, ascending. All of the front when it has <= n.
MONET_API std::vector<std::size_t> spread_over_front(const std::vector<Evaluation>& evals, std::size_t n);

/// Hypervolume (Lebesgue measure) dominated by `points` and bounded by the reference point `ref`; only points
/// strictly better than `ref` in every objective count. Exact: a sweep for 2 objectives, a dimension sweep for
/// 3, WFG for more.
MONET_API double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& ref);

}  // namespace monet
