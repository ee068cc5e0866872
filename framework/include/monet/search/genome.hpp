#pragma once
// Genome operators on index-coded design points, shared by every search plugin (and usable by third-party
// ones): mixed-radix enumeration, uniform sampling, the variation operators of NSGA-II per gene kind and a
// one-gene neighbourhood for local search. Randomness only from monet::Random, so results are identical on
// every platform and thread count.
//
// Ordinal genes (ordered values) use Deb's real-coded operators on the index as a real in [0, size-1]:
// bounded SBX (Deb & Agrawal 1995) and polynomial mutation, exactly as in Deb's NSGA-II code (v1.1.6), then
// rounded to the nearest index. Categorical genes use uniform crossover and random reset to another value.
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "monet/search/random.hpp"
#include "monet/search/space.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// Number of points when it fits in 64 bits (nullopt otherwise).
MONET_API std::optional<std::uint64_t> exact_size(const DesignSpace& space);
/// Mixed-radix rank of a point: the last gene varies fastest, so index order is the lexicographic order of
/// points. A bijection between [0, exact_size) and the points; requires exact_size(space).
MONET_API std::uint64_t point_index(const DesignSpace& space, const DesignPoint& point);
MONET_API DesignPoint point_at(const DesignSpace& space, std::uint64_t index);

/// Every gene drawn uniformly.
MONET_API DesignPoint random_point(const DesignSpace& space, Random& random);
/// Genes with at least two values: the ones operators can change.
MONET_API std::size_t mutable_genes(const DesignSpace& space);

/// Bounded SBX of two reals y1 != y2 in [lo, hi] for one uniform draw u: the two children, smaller first
/// (before the random swap), clamped to [lo, hi].
MONET_API std::pair<double, double> sbx(double y1, double y2, double lo, double hi, double eta, double u);
/// Bounded polynomial mutation of y in [lo, hi] (lo < hi) for one uniform draw u, clamped to [lo, hi].
MONET_API double polynomial_mutation(double y, double lo, double hi, double eta, double u);

struct Variation {
  double crossover_probability = 0.9;  // per pair of parents (Deb 2002: 0.9)
  double crossover_eta = 20;           // SBX distribution index η_c (Deb 2002: 20)
  double mutation_probability = 0;     // per gene (Deb 2002: 1/n)
  double mutation_eta = 20;            // polynomial mutation distribution index η_m (Deb 2002: 20)
};

/// With probability crossover_probability, crosses gene by gene: an ordinal gene with probability 0.5 by SBX
/// on its index (children swapped with probability 0.5; equal parents are copied), a categorical gene by
/// swapping the parents' values with probability 0.5. Otherwise the children are copies of the parents.
MONET_API std::array<DesignPoint, 2> crossover(const DesignSpace& space, const DesignPoint& a, const DesignPoint& b,
                                               const Variation& variation, Random& random);

/// Mutates each gene with probability mutation_probability: ordinal genes by polynomial mutation of the
/// index, rounded (on a few values the index rarely moves: with eta_m = 20 the median move is 3 % of the range;
/// forcing a one-step move instead was measured worse on grid ZDT problems, docs/search.md), categorical genes
/// by a reset to another value drawn uniformly.
MONET_API void mutate(const DesignSpace& space, DesignPoint& point, const Variation& variation, Random& random);

/// A neighbour for local search: one mutable gene drawn uniformly and changed; an ordinal gene moves by
/// 1..max_step indices in either direction (uniform over the moves that stay in range), a categorical gene
/// takes another value. The point itself when no gene can change.
MONET_API DesignPoint neighbour(const DesignSpace& space, const DesignPoint& point, std::int32_t max_step,
                                Random& random);

}  // namespace monet
