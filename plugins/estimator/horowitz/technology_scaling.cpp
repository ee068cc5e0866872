#include "technology_scaling.hpp"

#include <array>
#include <cstddef>

namespace monet::plugins::horowitz {

namespace {

struct Node {
  double nm;
  double area_from_45;  // Stillmaker & Baas area scaling factor from 45 nm to this node
  double a, b, c;       // energy of this node relative to 180 nm: a·V² + b·V + c
};

// Area: the 45 nm row of the paper's area table. Energy: its fitted polynomials; 130–65 nm have one device
// family, 45 and 32 nm the high-performance (HP) rows, 20–7 nm the HP rows (FinFET).
constexpr std::array<Node, 10> kNodes{{
    {130, 6.4, 7.171, -6.709, 2.904},
    {90, 2.8, 4.762, -4.781, 2.092},
    {65, 1.5, 3.755, -4.398, 1.975},
    {45, 1.0, 1.018, -0.3107, 0.1539},
    {32, 0.46, 0.8367, -0.4341, 0.1701},
    {20, 0.21, 0.373, -0.1582, 0.04104},
    {16, 0.19, 0.2958, -0.1241, 0.03024},
    {14, 0.17, 0.2363, -0.09675, 0.02239},
    {10, 0.1, 0.2068, -0.09311, 0.02375},
    {7, 0.059, 0.1776, -0.09097, 0.02447},
}};

double relative_energy(const Node& n, double vdd) { return n.a * vdd * vdd + n.b * vdd + n.c; }

/// f(nm) linear in nm between the two table nodes around nm (nodes are sorted from large to small).
template <class F>
double interpolate(double nm, F&& f) {
  for (std::size_t i = 0; i + 1 < kNodes.size(); ++i) {
    const Node& hi = kNodes[i];
    const Node& lo = kNodes[i + 1];
    if (nm <= hi.nm && nm >= lo.nm) {
      const double t = (hi.nm - nm) / (hi.nm - lo.nm);
      return (1 - t) * f(hi) + t * f(lo);
    }
  }
  return f(nm > kNodes.front().nm ? kNodes.front() : kNodes.back());  // callers check the range
}

}  // namespace

double area_factor(double nm) {
  return interpolate(nm, [](const Node& n) { return n.area_from_45; });
}

double energy_factor(double nm, double vdd) {
  const double at_node = interpolate(nm, [&](const Node& n) { return relative_energy(n, vdd); });
  const double at_source = interpolate(kSourceNm, [&](const Node& n) { return relative_energy(n, kSourceVdd); });
  return at_node / at_source;
}

}  // namespace monet::plugins::horowitz
