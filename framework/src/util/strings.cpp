#include "monet/util/strings.hpp"

#include <fnmatch.h>

#include <cctype>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace monet {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       std::size_t max_results) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    std::size_t d = edit_distance(word, c);
    const bool prefix = word.size() >= 3 && (c.rfind(word, 0) == 0 || word.rfind(c, 0) == 0);
    const bool total_rewrite = d >= std::max(word.size(), c.size());  // 'W' -> 'O' is no suggestion
    if ((d <= limit && !total_rewrite) || prefix) scored.emplace_back(prefix ? std::min(d, limit) : d, i);
  }
  std::stable_sort(scored.begin(), scored.end(), [](auto& x, auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, i] : scored) {
    if (out.size() == max_results) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto close = closest_names(word, candidates);
  if (close.empty()) return {};
  std::string s = " (did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i) {
    if (i > 0) s += (i + 1 == close.size()) ? " or " : ", ";
    s += "'" + close[i] + "'";
  }
  return s + "?)";
}

std::string join(const std::vector<std::string>& items, std::string_view separator, bool quote) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) s += separator;
    if (quote) s += "'";
    s += items[i];
    if (quote) s += "'";
  }
  return s;
}

std::string with_thousands(long long value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string si(double v, std::string_view unit, int digits) {
  static const char* prefixes[] = {"f", "p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
  int power = 0;  // of 1000
  if (v != 0.0 && std::isfinite(v)) {
    while (std::fabs(v) >= 1000.0 && power < 5) {
      v /= 1000.0;
      ++power;
    }
    while (std::fabs(v) < 1.0 && power > -5) {
      v *= 1000.0;
      --power;
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  if (std::fabs(std::strtod(buf, nullptr)) >= 1000.0 && power < 5) {  // rounded up to the next prefix: 999.96 k
    ++power;
    std::snprintf(buf, sizeof buf, "%.*g", digits, v / 1000.0);
  }
  std::string out = buf;
  if (!unit.empty()) out += ' ';
  return out + prefixes[power + 5] + std::string(unit);
}

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool glob_match(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

std::string format_number(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

std::string si_bytes(std::int64_t bits) { return si(static_cast<double>((bits + 7) / 8), "B"); }

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

int csv_column(const std::string& line, std::size_t cell) {
  int col = 1;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < line.size() && seen < cell; ++i, ++col) {
    if (line[i] == ',') ++seen;
  }
  return col;
}

}  // namespace monet
