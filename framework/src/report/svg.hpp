#pragma once
// Small helpers for the SVG plots the reports write (internal to the kernel): escaping, round axis ticks and
// SI-formatted tick labels.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "monet/util/strings.hpp"

namespace monet::svg {

inline std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Round ticks (1, 2 or 5 times a power of ten) covering [lo, hi], about `count` of them.
inline std::vector<double> ticks(double lo, double hi, int count = 5) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

/// "2.1 MJ", "350 pJ": SI prefixes for axis labels (unit "" gives "2.1 M").
inline std::string tick_label(double v, const std::string& unit) { return si(v, unit); }

}  // namespace monet::svg
