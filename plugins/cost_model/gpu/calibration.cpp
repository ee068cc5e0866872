#include "calibration.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "monet/ir/types.hpp"
#include "monet/util/error.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins::gpu {

Calibration Calibration::read(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw UserError(SourceLocation{file}, "cannot read the calibration table (file not found or not readable)");
  Calibration c;
  c.file_ = file;
  std::string line;
  int n = 0;
  bool header = false;
  std::map<Key, int> first_line;
  auto fail = [&](int col, const std::string& msg) {
    throw UserError(SourceLocation{file, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(col)}, msg);
  };
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto cells = split_csv_line(line);
    if (!header) {
      if (cells != std::vector<std::string>{"table", "type", "at_least", "efficiency"}) {
        fail(1, "the header must be 'table,type,at_least,efficiency'");
      }
      header = true;
      continue;
    }
    if (cells.size() != 4) fail(1, "expected 4 cells (table, type, at_least, efficiency), got " + std::to_string(cells.size()));
    Table table{};
    if (cells[0] == "matrix") {
      table = Table::matrix;
    } else if (cells[0] == "vector") {
      table = Table::vector;
    } else if (cells[0] == "hbm") {
      table = Table::hbm;
    } else if (cells[0] == "fused_matrix") {
      table = Table::fused_matrix;
    } else {
      fail(1, "table: expected matrix, fused_matrix, vector or hbm, got '" + cells[0] + "'");
    }
    if (cells[1] != "*" && !parse_element_type(cells[1])) {
      fail(csv_column(line, 1), "type: expected a datatype (" + join(all_element_type_names()) + ") or *, got '" + cells[1] + "'");
    }
    double v[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const std::string& s = cells[static_cast<std::size_t>(2 + k)];
      std::size_t used = 0;
      try {
        v[k] = std::stod(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      const bool ok = !s.empty() && used == s.size() && std::isfinite(v[k]) && (k == 0 ? v[k] >= 0 : v[k] > 0 && v[k] <= 1);
      if (!ok) {
        fail(csv_column(line, static_cast<std::size_t>(2 + k)),
             k == 0 ? "at_least: expected a size >= 0 (FLOP for matrix and vector, bytes for hbm), got '" + s + "'"
                    : "efficiency: expected a fraction in (0, 1], got '" + s + "'");
      }
    }
    const Key key{table, cells[1]};
    auto& rows = c.rows_[key];
    if (std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == v[0]; })) {
      fail(csv_column(line, 2), "a row for " + cells[0] + "," + cells[1] + " at_least " + cells[2] + " appears twice");
    }
    first_line.try_emplace(key, n);
    rows.emplace_back(v[0], v[1]);
  }
  if (!header) throw UserError(SourceLocation{file}, "the calibration table is empty (no header line)");
  for (auto& [key, rows] : c.rows_) {
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (rows.back().first != 0) {
      throw UserError(SourceLocation{file, static_cast<std::uint32_t>(first_line[key]), 1},
                      "the rows of this table and type need one with at_least = 0, so that every size has an efficiency");
    }
  }
  if (!c.has(Table::hbm, "*")) throw UserError(SourceLocation{file}, "the calibration needs hbm rows (type *)");
  return c;
}

bool Calibration::has(Table t, const std::string& type) const {
  if (t == Table::fused_matrix && !rows_.contains(Key{t, type}) && !rows_.contains(Key{t, "*"})) t = Table::matrix;
  return rows_.contains(Key{t, type}) || rows_.contains(Key{t, "*"});
}

const std::vector<std::pair<double, double>>& Calibration::rows(Table t, const std::string& type) const {
  if (t == Table::fused_matrix && !rows_.contains(Key{t, type}) && !rows_.contains(Key{t, "*"})) t = Table::matrix;
  auto it = rows_.find(Key{t, type});
  if (it == rows_.end()) it = rows_.find(Key{t, "*"});
  return it->second;
}

double Calibration::efficiency(Table t, const std::string& type, double size) const {
  for (const auto& [at_least, eff] : rows(t, type)) {
    if (size >= at_least) return eff;
  }
  return rows(t, type).back().second;  // unreachable: the last row has at_least = 0
}

}  // namespace monet::plugins::gpu
