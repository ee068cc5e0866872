#pragma once
// A GPU's calibration: step tables of achieved efficiency by operation size (Calculon's form, calculon-ai/calculon
// systems/*.json): the fraction of the tensor-core peak a matrix product of that many FLOP reaches, per datatype;
// the fraction of the vector peak; the fraction of the HBM bandwidth a transfer of that many bytes reaches; and,
// optionally, the fraction a fused kernel's matrix products reach (FlashAttention: its softmax and bookkeeping
// between the products make it slower than a GEMM of its size; without these rows it reads the matrix rows). A data
// file with its source, never constants in code (docs/cost-models.md, `gpu`).
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace monet::plugins::gpu {

enum class Table { matrix, vector, hbm, fused_matrix };

class Calibration {
 public:
  /// Reads the CSV (header `table,type,at_least,efficiency`; # comments); every error names file:line:column.
  static Calibration read(const std::string& file);

  /// Efficiency of the row with the largest at_least <= size for (table, type), else for (table, "*"); a
  /// fused_matrix table without rows for the type or * reads the matrix table.
  /// Call only when has(table, type).
  [[nodiscard]] double efficiency(Table t, const std::string& type, double size) const;
  [[nodiscard]] bool has(Table t, const std::string& type) const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  using Key = std::pair<Table, std::string>;
  const std::vector<std::pair<double, double>>& rows(Table t, const std::string& type) const;
  std::string file_;
  std::map<Key, std::vector<std::pair<double, double>>> rows_;  // (at_least, efficiency), at_least descending
};

}  // namespace monet::plugins::gpu
