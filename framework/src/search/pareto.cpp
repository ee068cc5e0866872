#include "monet/search/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>

#include "monet/util/error.hpp"

namespace monet {

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw InternalError("dominates: objective vectors of different lengths");
  bool better = false;
  for (std::size_t m = 0; m < a.size(); ++m) {
    if (!(a[m] <= b[m])) return false;  // also false for NaN: an incomparable value never dominates
    better = better || a[m] < b[m];
  }
  return better;
}

bool constrained_dominates(const Evaluation& a, const Evaluation& b) {
  if (a.feasible() != b.feasible()) return a.feasible();
  if (!a.feasible()) return a.violation < b.violation;
  return dominates(a.objectives, b.objectives);
}

std::vector<std::vector<std::size_t>> non_dominated_fronts(const std::vector<Evaluation>& evals) {
  const std::size_t n = evals.size();
  std::vector<std::vector<std::size_t>> dominated_by(n);  // S_p: the points p dominates
  std::vector<std::size_t> domination_count(n, 0);        // n_p: how many points dominate p
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = p + 1; q < n; ++q) {
      if (constrained_dominates(evals[p], evals[q])) {
        dominated_by[p].push_back(q);
        ++domination_count[q];
      } else if (constrained_dominates(evals[q], evals[p])) {
        dominated_by[q].push_back(p);
        ++domination_count[p];
      }
    }
  }
  std::vector<std::vector<std::size_t>> fronts;
  std::vector<std::size_t> current;
  for (std::size_t p = 0; p < n; ++p)
    if (domination_count[p] == 0) current.push_back(p);
  while (!current.empty()) {
    std::vector<std::size_t> next;
    for (std::size_t p : current)
      for (std::size_t q : dominated_by[p])
        if (--domination_count[q] == 0) next.push_back(q);
    std::sort(next.begin(), next.end());
    fronts.push_back(std::move(current));
    current = std::move(next);
  }
  return fronts;
}

std::vector<double> crowding_distance(const std::vector<Evaluation>& evals, const std::vector<std::size_t>& front) {
  const std::size_t n = front.size();
  std::vector<double> distance(n, 0.0);
  if (n == 0) return distance;
  const std::size_t objectives = evals[front[0]].objectives.size();
  std::vector<std::size_t> order(n);
  for (std::size_t m = 0; m < objectives; ++m) {
    auto value = [&](std::size_t i) { return evals[front[i]].objectives[m]; };
    bool comparable = true;
    for (std::size_t i = 0; i < n; ++i) comparable = comparable && std::isfinite(value(i));
    if (!comparable) continue;  // NaN or infinite values (unevaluable points) carry no spacing information
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
    const double range = value(order.back()) - value(order.front());
    if (range <= 0) continue;
    distance[order.front()] = std::numeric_limits<double>::infinity();
    distance[order.back()] = std::numeric_limits<double>::infinity();
    for (std::size_t k = 1; k + 1 < n; ++k) distance[order[k]] += (value(order[k + 1]) - value(order[k - 1])) / range;
  }
  return distance;
}

std::vector<std::size_t> pareto_front(const std::vector<Evaluation>& evals) {
  // Lexicographic order: a point can only be dominated by (or equal to) a point before it, and every point
  // dominated by an excluded one is dominated by a member of the front (transitivity).
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < evals.size(); ++i) {
    const auto& f = evals[i].objectives;
    if (evals[i].feasible() && std::none_of(f.begin(), f.end(), [](double v) { return std::isnan(v); }))
      order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return evals[a].objectives < evals[b].objectives; });
  std::vector<std::size_t> front;
  const bool two_objectives = !order.empty() && evals[order[0]].objectives.size() == 2;
  double best_f2 = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    const auto& f = evals[i].objectives;
    bool covered = false;
    if (two_objectives) {  // an earlier point has f1 <= this f1: it covers this one iff its f2 <= this f2
      covered = !front.empty() && best_f2 <= f[1];
      best_f2 = std::min(best_f2, f[1]);
    } else {
      covered = std::any_of(front.begin(), front.end(), [&](std::size_t k) {
        return evals[k].objectives == f || dominates(evals[k].objectives, f);
      });
    }
    if (!covered) front.push_back(i);
  }
  std::sort(front.begin(), front.end());
  return front;
}

std::vector<Evaluation> best_front(const std::vector<Evaluation>& evals) {
  std::vector<Evaluation> out;
  for (std::size_t i : pareto_front(evals)) out.push_back(evals[i]);
  std::stable_sort(out.begin(), out.end(), [](const Evaluation& a, const Evaluation& b) { return a.objectives < b.objectives; });
  if (out.empty() && !evals.empty()) {
    out.push_back(*std::min_element(evals.begin(), evals.end(),
                                    [](const Evaluation& a, const Evaluation& b) { return a.violation < b.violation; }));
  }
  return out;
}

std::vector<std::size_t> spread_over_front(const std::vector<Evaluation>& evals, std::size_t n) {
  std::vector<std::size_t> front = pareto_front(evals);
  if (front.size() <= n) return front;
  std::stable_sort(front.begin(), front.end(),
                   [&](std::size_t a, std::size_t b) { return evals[a].objectives < evals[b].objectives; });
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < n; ++k) {
    // Positions 0 and size-1 (the extremes of the first objective) and evenly spaced ones between.
    const std::size_t at = n == 1 ? 0 : (k * (front.size() - 1) + (n - 1) / 2) / (n - 1);
    out.push_back(front[at]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ------------------------------------------------------------------------------------------- hypervolume

namespace {

using Points = std::vector<std::vector<double>>;

/// Points that are not weakly dominated by another (duplicates keep one).
Points non_dominated(Points points) {
  std::sort(points.begin(), points.end());
  Points out;
  for (auto& p : points) {
    const bool covered = std::any_of(out.begin(), out.end(), [&](const std::vector<double>& q) {
      return std::equal(q.begin(), q.end(), p.begin(), [](double a, double b) { return a <= b; });
    });
    if (!covered) out.push_back(std::move(p));
  }
  return out;
}

double hv_2d(Points points, const std::vector<double>& ref) {
  std::sort(points.begin(), points.end());  // by f1, ties by f2
  double volume = 0;
  double best_f2 = ref[1];
  for (const auto& p : points) {
    if (p[1] < best_f2) {
      volume += (ref[0] - p[0]) * (best_f2 - p[1]);
      best_f2 = p[1];
    }
  }
  return volume;
}

/// The 2-D staircase of the points seen so far (x ascending, y descending) and the area it dominates.
class Staircase {
 public:
  explicit Staircase(double ref_x, double ref_y) : ref_x_(ref_x), ref_y_(ref_y) {}
  [[nodiscard]] double area() const { return area_; }

  void insert(double x, double y) {
    auto right = steps_.upper_bound(x);  // first step with a larger x
    const bool has_left = right != steps_.begin();
    if (has_left && std::prev(right)->second <= y) return;  // weakly dominated: no new area
    // Height of the old staircase just right of x, then walk over the steps (x' >= x, y' >= y) that the new
    // point dominates, adding the strips between the new and the old outline.
    double top = has_left ? std::prev(right)->second : ref_y_;
    double at = x;
    auto it = steps_.lower_bound(x);
    while (it != steps_.end() && it->second >= y) {
      area_ += (it->first - at) * (top - y);
      at = it->first;
      top = it->second;
      it = steps_.erase(it);
    }
    const double end = it == steps_.end() ? ref_x_ : it->first;
    area_ += (end - at) * (top - y);
    steps_.emplace(x, y);
  }

 private:
  double ref_x_, ref_y_;
  double area_ = 0;
  std::map<double, double> steps_;
};

/// Dimension sweep along f3 (Fonseca, Paquete, López-Ibáñez 2006): O(n log n).
double hv_3d(Points points, const std::vector<double>& ref) {
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a[2] < b[2]; });
  Staircase stairs(ref[0], ref[1]);
  double volume = 0;
  double z = points.empty() ? ref[2] : points.front()[2];
  for (const auto& p : points) {
    volume += stairs.area() * (p[2] - z);
    z = p[2];
    stairs.insert(p[0], p[1]);
  }
  return volume + stairs.area() * (ref[2] - z);
}

double hv_any(Points points, const std::vector<double>& ref);

/// WFG (While, Bradstreet, Barone, IEEE TEVC 16(1), 2012): the sum of each point's exclusive volume against the
/// points after it. With the points sorted by the last objective, descending, every point of a limit set shares
/// the last coordinate of the point it is limited by, so exclusive volumes are computed one dimension lower.
double hv_wfg(Points points, const std::vector<double>& ref) {
  const std::size_t d = ref.size();
  std::sort(points.begin(), points.end(), [d](const auto& a, const auto& b) { return a[d - 1] > b[d - 1]; });
  const std::vector<double> ref_low(ref.begin(), ref.end() - 1);
  double volume = 0;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::vector<double>& p = points[k];
    double box = 1;
    for (std::size_t m = 0; m + 1 < d; ++m) box *= ref[m] - p[m];
    Points limited;
    limited.reserve(points.size() - k - 1);
    for (std::size_t j = k + 1; j < points.size(); ++j) {
      std::vector<double> w(d - 1);
      for (std::size_t m = 0; m + 1 < d; ++m) w[m] = std::max(p[m], points[j][m]);
      limited.push_back(std::move(w));
    }
    volume += (ref[d - 1] - p[d - 1]) * (box - hv_any(non_dominated(std::move(limited)), ref_low));
  }
  return volume;
}

double hv_any(Points points, const std::vector<double>& ref) {
  if (points.empty()) return 0;
  switch (ref.size()) {
    case 1: {
      double best = ref[0];
      for (const auto& p : points) best = std::min(best, p[0]);
      return ref[0] - best;
    }
    case 2: return hv_2d(std::move(points), ref);
    case 3: return hv_3d(std::move(points), ref);
    default: return hv_wfg(std::move(points), ref);
  }
}

}  // namespace

double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& ref) {
  if (ref.empty()) throw InternalError("hypervolume: empty reference point");
  Points inside;
  for (const auto& p : points) {
    if (p.size() != ref.size()) throw InternalError("hypervolume: point and reference point of different dimensions");
    bool strictly_better = true;
    for (std::size_t m = 0; m < p.size(); ++m) strictly_better = strictly_better && p[m] < ref[m];  // NaN: false
    if (strictly_better) inside.push_back(p);
  }
  // The sweeps skip dominated points by themselves; WFG's slicing needs a non-dominated set.
  return hv_any(ref.size() >= 4 ? non_dominated(std::move(inside)) : std::move(inside), ref);
}

}  // namespace monet
