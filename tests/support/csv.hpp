#pragma once
// The CSV files of an output folder (schedule.csv, transfers.csv), read back for the end-to-end tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace monet::test {

/// One row: cells by column name.
struct CsvRow {
  std::map<std::string, std::string> cells;
  [[nodiscard]] const std::string& operator[](const std::string& column) const {
    auto it = cells.find(column);
    if (it == cells.end()) throw std::out_of_range("no column '" + column + "'");
    return it->second;
  }
  [[nodiscard]] double number(const std::string& column) const { return std::stod((*this)[column]); }
  [[nodiscard]] long long integer(const std::string& column) const { return std::stoll((*this)[column]); }
};

/// Splits CSV text (RFC 4180 quoting) into rows of cells.
inline std::vector<std::vector<std::string>> csv_cells(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(cell));
      cell.clear();
      rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (!rows.back().empty() || !cell.empty()) {
    rows.back().push_back(std::move(cell));
  } else {
    rows.pop_back();
  }
  return rows;
}

/// The rows of a CSV file with a header line.
inline std::vector<CsvRow> read_csv(const std::filesystem::path& file) {
  const auto cells = csv_cells(read_file(file));
  std::vector<CsvRow> rows;
  if (cells.empty()) return rows;
  const std::vector<std::string>& header = cells.front();
  for (std::size_t r = 1; r < cells.size(); ++r) {
    EXPECT_EQ(cells[r].size(), header.size()) << file << " row " << r;
    CsvRow row;
    for (std::size_t c = 0; c < header.size() && c < cells[r].size(); ++c) row.cells[header[c]] = cells[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace monet::test
