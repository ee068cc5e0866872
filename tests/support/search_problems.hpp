#pragma once
// Search plugins on test problems with known fronts, without any accelerator model: a SearchContext that
// evaluates a function of the genes and records every call, the problems of search.md §4 on integer genes, and
// running a plugin through the registry.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/search/pareto.hpp"
#include "monet/search/random.hpp"

namespace monet::test {

struct TestProblem {
  DesignSpace space;
  std::function<Evaluation(const DesignPoint&)> evaluate;  // objectives and violation of one point
};

/// Evaluates points with the problem's function; records plan() values and batches; can stop (throw
/// SearchStopped) at a given evaluate call, as the kernel does after Ctrl-C.
class ProblemContext final : public SearchContext {
 public:
  ProblemContext(TestProblem problem, std::uint64_t seed) : problem_(std::move(problem)), seed_(seed) {}
  [[nodiscard]] const DesignSpace& space() const override { return problem_.space; }
  [[nodiscard]] std::uint64_t seed() const override { return seed_; }
  void plan(std::size_t total) override { plans.push_back(total); }
  [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) override {
    if (stop_at_call && batches.size() == *stop_at_call) throw SearchStopped();
    batches.push_back(points);
    std::vector<Evaluation> out;
    for (const DesignPoint& p : points) {
      Evaluation e = problem_.evaluate(p);
      e.point = p;
      out.push_back(e);
      archive.push_back(e);
    }
    return out;
  }

  std::optional<std::size_t> stop_at_call;  // throw SearchStopped at this evaluate call (0-based)
  std::vector<std::size_t> plans;
  std::vector<std::vector<DesignPoint>> batches;
  std::vector<Evaluation> archive;  // every evaluation, in call order

 private:
  TestProblem problem_;
  std::uint64_t seed_;
};

using Overrides = std::map<std::string, ParamValue>;

/// Runs the search plugin `name` (found through the registry, default parameters plus `overrides`).
inline std::vector<Evaluation> run_search(const std::string& name, const Overrides& overrides, SearchContext& context) {
  const Registry& registry = Registry::global();
  const PluginHandle& handle = registry.require(PluginKind::search, name, {});
  ParamValues params = default_params(handle.info.params, "test");
  for (const auto& [key, value] : overrides) params.set(key, value);
  return registry.create<SearchAlgorithm>(handle, params)->run(context);
}

inline std::vector<std::vector<double>> objectives_of(const std::vector<Evaluation>& evals) {
  std::vector<std::vector<double>> out;
  for (const Evaluation& e : evals) out.push_back(e.objectives);
  return out;
}

inline double front_hypervolume(const std::vector<Evaluation>& evals, const std::vector<double>& ref) {
  return hypervolume(objectives_of(evals), ref);
}

// ---------------------------------------------------------------------------------------------- spaces

inline Gene gene(const std::string& name, std::int32_t values, bool ordinal, std::int32_t configured = 0) {
  Gene g;
  g.key = name;
  g.name = name;
  for (std::int32_t v = 0; v < values; ++v) g.labels.push_back(std::to_string(v));
  g.ordinal = ordinal;
  g.configured = configured;
  return g;
}

inline DesignSpace space_of(std::vector<Gene> genes, std::vector<std::string> objectives) {
  DesignSpace s;
  s.genes = std::move(genes);
  for (auto& o : objectives) s.objectives.push_back({o, ""});
  return s;
}

inline Evaluation feasible(std::vector<double> objectives) {
  Evaluation e;
  e.objectives = std::move(objectives);
  return e;
}

// -------------------------------------------------------------------------------------------- problems

enum class Zdt { one, two, three };

/// ZDT1-3 with n genes restricted to {0, 1/K, ..., 1} (ordinal indices 0..K, configured at K/2). Front: g = 1,
/// i.e. genes 2..n at 0, f1 = j/K (for ZDT3 only the non-dominated part of those K + 1 points).
inline TestProblem grid_zdt(Zdt which, int n, int k) {
  std::vector<Gene> genes;
  for (int i = 0; i < n; ++i) genes.push_back(gene("x" + std::to_string(i + 1), k + 1, true, k / 2));
  return {space_of(std::move(genes), {"f1", "f2"}), [=](const DesignPoint& p) {
            const double f1 = p.genes[0] / static_cast<double>(k);
            double sum = 0;
            for (int i = 1; i < n; ++i) sum += p.genes[static_cast<std::size_t>(i)] / static_cast<double>(k);
            const double g = 1 + 9 * sum / (n - 1);
            const double r = f1 / g;
            const double h = which == Zdt::one   ? 1 - std::sqrt(r)
                             : which == Zdt::two ? 1 - r * r
                                                 : 1 - std::sqrt(r) - r * std::sin(10 * std::numbers::pi * f1);
            return feasible({f1, g * h});
          }};
}

/// The true front of grid_zdt: the K + 1 points with g = 1 (ZDT3: the hypervolume ignores dominated ones).
inline std::vector<std::vector<double>> grid_zdt_front(Zdt which, int n, int k) {
  const TestProblem p = grid_zdt(which, n, k);
  std::vector<std::vector<double>> front;
  for (int j = 0; j <= k; ++j) {
    DesignPoint x;
    x.genes.assign(static_cast<std::size_t>(n), 0);
    x.genes[0] = j;
    front.push_back(p.evaluate(x).objectives);
  }
  return front;
}

/// OneMinMax on n categorical bits: minimise (-#ones, -#zeros). Every point is Pareto-optimal; the front has
/// n + 1 objective vectors and HV w.r.t. (1, 1) = (n + 1)(n + 2) / 2.
inline TestProblem one_min_max(int n) {
  std::vector<Gene> genes;
  for (int i = 0; i < n; ++i) genes.push_back(gene("b" + std::to_string(i), 2, false));
  return {space_of(std::move(genes), {"minus_ones", "minus_zeros"}), [=](const DesignPoint& p) {
            int ones = 0;
            for (std::int32_t b : p.genes) ones += b;
            return feasible({-static_cast<double>(ones), -static_cast<double>(n - ones)});
          }};
}

/// ZDT5 (Zitzler, Deb, Thiele 2000) on 80 categorical bits: x1 = 30 bits, x2..x11 = 5 bits each.
/// f1 = 1 + u(x1), g = sum v(u(x_i)) with v(u) = 2 + u if u < 5 else 1, f2 = g / f1. Front: g = 10.
inline TestProblem zdt5() {
  std::vector<Gene> genes;
  for (int i = 0; i < 80; ++i) genes.push_back(gene("b" + std::to_string(i), 2, false));
  return {space_of(std::move(genes), {"f1", "f2"}), [](const DesignPoint& p) {
            int u1 = 0;
            for (int i = 0; i < 30; ++i) u1 += p.genes[static_cast<std::size_t>(i)];
            double g = 0;
            for (int block = 0; block < 10; ++block) {
              int u = 0;
              for (int i = 0; i < 5; ++i) u += p.genes[static_cast<std::size_t>(30 + 5 * block + i)];
              g += u < 5 ? 2 + u : 1;
            }
            const double f1 = 1 + u1;
            return feasible({f1, g / f1});
          }};
}

/// Deb's CONSTR on a (K+1) x (K+1) grid: x1 = 0.1 + 0.9 i/K, x2 = 5 j/K; f1 = x1, f2 = (1 + x2) / x1;
/// x2 + 9 x1 >= 6 and 9 x1 - x2 >= 1, violation = sum of relative excesses. Points with x2 > 4.5 cannot be
/// evaluated (NaN objectives, infinite violation), as a point whose operator fits no core.
inline TestProblem grid_constr(int k) {
  return {space_of({gene("x1", k + 1, true, k / 2), gene("x2", k + 1, true, k / 2)}, {"f1", "f2"}),
          [=](const DesignPoint& p) {
            const double x1 = 0.1 + 0.9 * p.genes[0] / k;
            const double x2 = 5.0 * p.genes[1] / k;
            Evaluation e;
            if (x2 > 4.5) {
              e.objectives = {std::nan(""), std::nan("")};
              e.violation = std::numeric_limits<double>::infinity();
              e.reason = "cannot be evaluated";
              return e;
            }
            e.objectives = {x1, (1 + x2) / x1};
            e.violation = std::max(0.0, (6 - x2 - 9 * x1) / 6) + std::max(0.0, (1 + x2 - 9 * x1) / 1);
            if (!e.feasible()) e.reason = "constraint violated";
            return e;
          }};
}

/// An allocation-like problem: `ops` operators, each on one of `cores` cores (categorical genes). Operator o
/// takes t[o][c] cycles and e[o][c] energy on core c (fixed pseudo-random tables); latency = the busiest core's
/// cycles, energy = sum of operator energies + 5 per edge between consecutive operators on different cores.
inline TestProblem allocation(int ops, int cores) {
  std::vector<std::vector<double>> t(static_cast<std::size_t>(ops)), e(static_cast<std::size_t>(ops));
  Random random(2024);
  for (int o = 0; o < ops; ++o)
    for (int c = 0; c < cores; ++c) {
      t[static_cast<std::size_t>(o)].push_back(static_cast<double>(random.between(10, 100)));
      e[static_cast<std::size_t>(o)].push_back(static_cast<double>(random.between(10, 100)));
    }
  std::vector<Gene> genes;
  for (int o = 0; o < ops; ++o) genes.push_back(gene("op" + std::to_string(o), cores, false));
  return {space_of(std::move(genes), {"latency", "energy"}), [=](const DesignPoint& p) {
            std::vector<double> busy(static_cast<std::size_t>(cores), 0.0);
            double energy = 0;
            for (int o = 0; o < ops; ++o) {
              const auto c = static_cast<std::size_t>(p.genes[static_cast<std::size_t>(o)]);
              busy[c] += t[static_cast<std::size_t>(o)][c];
              energy += e[static_cast<std::size_t>(o)][c];
              if (o > 0 && p.genes[static_cast<std::size_t>(o)] != p.genes[static_cast<std::size_t>(o - 1)]) energy += 5;
            }
            return feasible({*std::max_element(busy.begin(), busy.end()), energy});
          }};
}

/// anneal's default scalarisation of a two-objective problem: equal weights, objectives divided by the
/// configured point's (its first start point).
struct DefaultScalarisation {
  std::vector<double> scale;
  explicit DefaultScalarisation(const TestProblem& p) : scale(p.evaluate(p.space.configured()).objectives) {}
  double operator()(const Evaluation& e) const { return 0.5 * e.objectives[0] / scale[0] + 0.5 * e.objectives[1] / scale[1]; }
};

/// The minimum of `f` over every point of the problem (enumerated by the grid plugin).
inline double exhaustive_minimum(const TestProblem& problem, const std::function<double(const Evaluation&)>& f) {
  ProblemContext all(problem, 0);
  (void)run_search("grid", {}, all);
  double minimum = std::numeric_limits<double>::infinity();
  for (const Evaluation& e : all.archive) minimum = std::min(minimum, f(e));
  return minimum;
}

}  // namespace monet::test
