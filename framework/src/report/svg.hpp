#pragma once
// Small helpers for the SVG plots the reports write (internal to the kernel): escaping, round axis ticks and
// SI-formatted tick labels.
#include <algorithm>
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

/// Round ticks (1, 2 or 5 times a power of ten), about `count` of them, from a tick at or below `lo` to one at
/// or above `hi`: the first and last are the axis ends.
inline std::vector<double> ticks(double lo, double hi, int count = 5) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.01;
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
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; t <= hi + step * (1 - 1e-9); t += step) out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  if (out.back() < hi) out.push_back(out.back() + step);
  return out;
}

/// Tick labels with an SI prefix and as many digits as the tick step needs to tell neighbours apart
/// ("2.3241 mJ", "2.3242 mJ" when the axis spans a few nJ).
inline std::string tick_label(double v, const std::string& unit, const std::vector<double>& all) {
  double step = 0, top = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    top = std::max(top, std::abs(all[i]));
    if (i > 0) step = all[i] - all[i - 1];
  }
  int digits = 3;
  if (step > 0 && top > 0) digits = std::clamp(static_cast<int>(std::ceil(std::log10(top / step))) + 1, 2, 10);
  return si(v, unit, digits);
}

}  // namespace monet::svg
