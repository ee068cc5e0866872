// Offline cross-check of monet's search layer against pagmo2 2.18 (Debian libpagmo-dev, not a monet dependency):
// hypervolume against pagmo's exact algorithms, pagmo's nsga2 on the integer grid-ZDT1 of the tests, its answer
// to a constrained problem, and whether its archipelago (islands + migration) repeats itself for fixed seeds.
// Numbers quoted in docs/search.md. Build and run after building monet in build/:
//   apt-get install libpagmo-dev
//   g++ -std=c++20 -O2 scripts/pagmo_crosscheck.cpp -Iframework/include -Lbuild/lib -Wl,-rpath,$PWD/build/lib \
//       -lmonet -lpagmo -ltbb -lboost_serialization -o /tmp/pagmo_crosscheck && /tmp/pagmo_crosscheck
#include <pagmo/algorithm.hpp>
#include <pagmo/algorithms/nsga2.hpp>
#include <pagmo/archipelago.hpp>
#include <pagmo/island.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>
#include <pagmo/topologies/ring.hpp>
#include <pagmo/utils/hypervolume.hpp>
#include <pagmo/utils/multi_objective.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include "monet/search/pareto.hpp"
#include "monet/search/random.hpp"

// grid-ZDT1: 30 integer genes in [0, 100], x = gene / 100.
struct GridZdt1 {
  pagmo::vector_double fitness(const pagmo::vector_double& dv) const {
    const double f1 = dv[0] / 100.0;
    double s = 0;
    for (std::size_t i = 1; i < dv.size(); ++i) s += dv[i] / 100.0;
    const double g = 1 + 9 * s / 29.0;
    return {f1, g * (1 - std::sqrt(f1 / g))};
  }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const {
    return {pagmo::vector_double(30, 0.0), pagmo::vector_double(30, 100.0)};
  }
  pagmo::vector_double::size_type get_nobj() const { return 2; }
  pagmo::vector_double::size_type get_nix() const { return 30; }
};
struct Constrained {  // CONSTR with its two inequality constraints
  pagmo::vector_double fitness(const pagmo::vector_double& x) const {
    return {x[0], (1 + x[1]) / x[0], 6 - x[1] - 9 * x[0], 1 + x[1] - 9 * x[0]};
  }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const { return {{0.1, 0.0}, {1.0, 5.0}}; }
  pagmo::vector_double::size_type get_nobj() const { return 2; }
  pagmo::vector_double::size_type get_nic() const { return 2; }
};

double front_hv(const std::vector<pagmo::vector_double>& f, std::vector<double> ref) {
  std::vector<std::vector<double>> pts;
  auto front = pagmo::non_dominated_front_2d(f);
  for (auto i : front) pts.push_back(f[i]);
  return monet::hypervolume(pts, ref);
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  // 1. Hypervolume against pagmo's exact algorithms (hv2d, hv3d, hvwfg chosen by dimension).
  monet::Random r(1);
  double worst = 0;
  int sets = 0;
  for (int d = 2; d <= 6; ++d) {
    for (int trial = 0; trial < 40; ++trial) {
      const int n = d <= 3 ? 200 : d == 4 ? 100 : 40;
      std::vector<std::vector<double>> pts;
      for (int i = 0; i < n; ++i) {  // points near the sphere: many non-dominated
        std::vector<double> p(d);
        double norm = 0;
        for (double& x : p) norm += (x = 0.01 + r.uniform()) * x;
        for (double& x : p) x = x / std::sqrt(norm) * (0.9 + 0.2 * r.uniform());
        pts.push_back(p);
      }
      std::vector<double> ref(d, 1.2);
      const double ours = monet::hypervolume(pts, ref);
      const double theirs = pagmo::hypervolume(pts, false).compute(ref);
      worst = std::max(worst, std::abs(ours - theirs) / theirs);
      ++sets;
    }
  }
  std::printf("hypervolume: %d random sets in 2..6 objectives (40..200 points): max relative difference to pagmo %.3g\n", sets, worst);

  // 2. NSGA-II on grid-ZDT1 (integer genes), Deb's settings, N = 100, G = 250.
  pagmo::problem zdt{GridZdt1{}};
  double sum = 0, mn = 1e9;
  for (unsigned seed = 1; seed <= 10; ++seed) {
    pagmo::population pop{zdt, 100u, seed};
    pagmo::algorithm algo{pagmo::nsga2(250u, 0.9, 20., 1.0 / 30, 20., seed)};
    pop = algo.evolve(pop);
    const double hv = front_hv(pop.get_f(), {1.1, 1.1});
    sum += hv;
    mn = std::min(mn, hv);
  }
  std::printf("pagmo nsga2 on grid-ZDT1 (30 integer genes 0..100, N 100, G 250, Deb's settings), seeds 1..10: HV(1.1,1.1) mean %.6f min %.6f\n", sum / 10, mn);

  // Same seed twice, one island: identical?
  {
    pagmo::population a{zdt, 40u, 3u}, b{zdt, 40u, 3u};
    a = pagmo::algorithm{pagmo::nsga2(50u, 0.9, 20., 1.0 / 30, 20., 3u)}.evolve(a);
    b = pagmo::algorithm{pagmo::nsga2(50u, 0.9, 20., 1.0 / 30, 20., 3u)}.evolve(b);
    std::printf("pagmo nsga2, one population, same seed twice: %s\n", a.get_f() == b.get_f() ? "identical" : "different");
  }

  // 3. Constraints.
  try {
    pagmo::population pop{pagmo::problem{Constrained{}}, 20u, 1u};
    pagmo::algorithm{pagmo::nsga2(10u)}.evolve(pop);
    std::printf("pagmo nsga2 accepted a constrained problem\n");
  } catch (const std::exception& e) {
    std::string what = e.what();
    const auto at = what.find("Non linear constraints");
    std::printf("pagmo nsga2 on a constrained problem throws: %s\n", (at == std::string::npos ? what : what.substr(at, 140)).c_str());
  }

  // 4. Islands: 4 islands in a ring (migration), same seeds, evolved 20 times x 10 generations, run 5 times.
  for (int run = 0; run < 5; ++run) {
    pagmo::archipelago archi{pagmo::topology{pagmo::ring{}}, 4u, pagmo::algorithm{pagmo::nsga2(10u, 0.9, 20., 1.0 / 30, 20., 7u)}, zdt, 40u, 7u};
    archi.evolve(20);
    archi.wait_check();
    std::vector<pagmo::vector_double> all;
    for (const auto& isl : archi) { const auto pop = isl.get_population(); for (const auto& f : pop.get_f()) all.push_back(f); }
    std::printf("archipelago run %d: HV(1.1,1.1) of all islands' first front %.9f\n", run, front_hv(all, {1.1, 1.1}));
  }
}
