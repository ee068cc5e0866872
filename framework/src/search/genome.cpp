#include "monet/search/genome.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "monet/util/error.hpp"

namespace monet {

std::optional<std::uint64_t> exact_size(const DesignSpace& space) {
  std::uint64_t n = 1;
  for (const Gene& g : space.genes) {
    const auto k = static_cast<std::uint64_t>(g.size());
    if (k == 0) return 0;
    if (n > std::numeric_limits<std::uint64_t>::max() / k) return std::nullopt;
    n *= k;
  }
  return n;
}

std::uint64_t point_index(const DesignSpace& space, const DesignPoint& point) {
  ensure(point.genes.size() == space.genes.size(), "point_index: point and space have different gene counts");
  std::uint64_t index = 0;
  for (std::size_t i = 0; i < space.genes.size(); ++i)
    index = index * static_cast<std::uint64_t>(space.genes[i].size()) + static_cast<std::uint64_t>(point.genes[i]);
  return index;
}

DesignPoint point_at(const DesignSpace& space, std::uint64_t index) {
  DesignPoint p;
  p.genes.resize(space.genes.size());
  for (std::size_t i = space.genes.size(); i-- > 0;) {
    const auto k = static_cast<std::uint64_t>(space.genes[i].size());
    p.genes[i] = static_cast<std::int32_t>(index % k);
    index /= k;
  }
  ensure(index == 0, "point_at: index beyond the size of the space");
  return p;
}

DesignPoint random_point(const DesignSpace& space, Random& random) {
  DesignPoint p;
  p.genes.reserve(space.genes.size());
  for (const Gene& g : space.genes) p.genes.push_back(static_cast<std::int32_t>(random.below(g.size())));
  return p;
}

std::size_t mutable_genes(const DesignSpace& space) {
  return static_cast<std::size_t>(
      std::count_if(space.genes.begin(), space.genes.end(), [](const Gene& g) { return g.size() > 1; }));
}

// ------------------------------------------------------------------------------- Deb's real-coded kernels

namespace {

/// β_q of bounded SBX for the spread factor β of one side (Deb's NSGA-II code, crossover.c).
double sbx_beta_q(double beta, double eta, double u) {
  const double alpha = 2.0 - std::pow(beta, -(eta + 1.0));
  if (u <= 1.0 / alpha) return std::pow(u * alpha, 1.0 / (eta + 1.0));
  return std::pow(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0));
}

std::int32_t round_index(double x, std::int32_t size) {
  const auto i = static_cast<std::int32_t>(std::floor(x + 0.5));
  return std::clamp(i, 0, size - 1);
}

std::int32_t other_value(std::int32_t current, std::int32_t size, Random& random) {
  const auto v = static_cast<std::int32_t>(random.below(size - 1));
  return v >= current ? v + 1 : v;
}

}  // namespace

std::pair<double, double> sbx(double y1, double y2, double lo, double hi, double eta, double u) {
  if (y1 > y2) std::swap(y1, y2);
  const double spread = y2 - y1;
  const double c1 = 0.5 * ((y1 + y2) - sbx_beta_q(1.0 + 2.0 * (y1 - lo) / spread, eta, u) * spread);
  const double c2 = 0.5 * ((y1 + y2) + sbx_beta_q(1.0 + 2.0 * (hi - y2) / spread, eta, u) * spread);
  return {std::clamp(c1, lo, hi), std::clamp(c2, lo, hi)};
}

double polynomial_mutation(double y, double lo, double hi, double eta, double u) {
  const double range = hi - lo;
  const double power = 1.0 / (eta + 1.0);
  double delta_q = 0;
  if (u <= 0.5) {
    const double xy = 1.0 - (y - lo) / range;
    const double val = 2.0 * u + (1.0 - 2.0 * u) * std::pow(xy, eta + 1.0);
    delta_q = std::pow(val, power) - 1.0;
  } else {
    const double xy = 1.0 - (hi - y) / range;
    const double val = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * std::pow(xy, eta + 1.0);
    delta_q = 1.0 - std::pow(val, power);
  }
  return std::clamp(y + delta_q * range, lo, hi);
}

// ------------------------------------------------------------------------------------------- operators

std::array<DesignPoint, 2> crossover(const DesignSpace& space, const DesignPoint& a, const DesignPoint& b,
                                     const Variation& variation, Random& random) {
  std::array<DesignPoint, 2> children{a, b};
  if (!random.chance(variation.crossover_probability)) return children;
  for (std::size_t i = 0; i < space.genes.size(); ++i) {
    const Gene& gene = space.genes[i];
    const bool cross = random.chance(0.5);
    if (!gene.ordinal) {
      if (cross) std::swap(children[0].genes[i], children[1].genes[i]);
      continue;
    }
    if (!cross || a.genes[i] == b.genes[i]) continue;
    const auto [c1, c2] = sbx(a.genes[i], b.genes[i], 0.0, gene.size() - 1.0, variation.crossover_eta, random.uniform());
    const bool swap = random.chance(0.5);
    children[swap ? 1 : 0].genes[i] = round_index(c1, gene.size());
    children[swap ? 0 : 1].genes[i] = round_index(c2, gene.size());
  }
  return children;
}

void mutate(const DesignSpace& space, DesignPoint& point, const Variation& variation, Random& random) {
  for (std::size_t i = 0; i < space.genes.size(); ++i) {
    const Gene& gene = space.genes[i];
    if (gene.size() < 2 || !random.chance(variation.mutation_probability)) continue;
    std::int32_t& value = point.genes[i];
    if (!gene.ordinal) {
      value = other_value(value, gene.size(), random);
      continue;
    }
    value = round_index(polynomial_mutation(value, 0.0, gene.size() - 1.0, variation.mutation_eta, random.uniform()),
                        gene.size());
  }
}

DesignPoint neighbour(const DesignSpace& space, const DesignPoint& point, std::int32_t max_step, Random& random) {
  const std::size_t candidates = mutable_genes(space);
  if (candidates == 0) return point;
  auto pick = static_cast<std::size_t>(random.below(static_cast<std::int64_t>(candidates)));
  std::size_t gene_index = 0;
  for (;; ++gene_index)
    if (space.genes[gene_index].size() > 1 && pick-- == 0) break;
  const Gene& gene = space.genes[gene_index];
  DesignPoint next = point;
  std::int32_t& value = next.genes[gene_index];
  if (!gene.ordinal) {
    value = other_value(value, gene.size(), random);
    return next;
  }
  const std::int32_t lo = std::max(0, value - max_step);
  const std::int32_t hi = std::min(gene.size() - 1, value + max_step);
  const auto v = static_cast<std::int32_t>(random.between(lo, hi - 1));  // hi - lo moves, skipping `value`
  value = v >= value ? v + 1 : v;
  return next;
}

}  // namespace monet
