#pragma once
// The estimator plugin kind (`estimator`): energy per access and area of memories and arrays from their parameters.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include <cstdint>
#include <string>
#include <utility>

#include "monet/ir/types.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

/// One instance of a core's memory level, as an estimator sees it.
struct MemoryEstimateQuery {
  std::int64_t size_bits = 0;
  std::int64_t read_word_bits = 0;   // the widest read port: the word read_energy_pj is for
  std::int64_t write_word_bits = 0;  // the widest write port
  int ports = 1;                     // read, write and read-write ports together
  bool offchip = false;              // the accelerator's off-chip memory (DRAM): no on-chip area
  double technology_nm = 0;
};

struct MemoryEstimate {
  double read_energy_pj = 0;   // per read of one read word
  double write_energy_pj = 0;  // per write of one write word
  double area_mm2 = 0;         // one instance
  std::string implementation;  // what the model built it from ("sram", "flip-flops", "dram"), for reports
};

/// A core's operational array: pe_count units, each doing one `operation` on `precision` operands per cycle.
struct ArrayEstimateQuery {
  std::int64_t pe_count = 0;
  ElementType precision = ElementType::int8;
  std::string operation = "mac";  // "mac" (multiply-accumulate) or "add" (vector add / compare)
  double technology_nm = 0;
};

struct ArrayEstimate {
  double unit_energy_pj = 0;  // per operation of one unit
  double area_mm2 = 0;        // the whole array
  std::string implementation;
};

/// Energy per access and area of memories and operational arrays from their parameters (Accelergy's estimators
/// for Timeloop): what lets a search resize hardware consistently. The kernel asks only for numbers a core file
/// leaves out; numbers written in the file always win. A query the model cannot answer (an unsupported
/// precision) is a UserError without location: the kernel adds the key it came from.
class MONET_API Estimator : public Plugin {
 public:
  ~Estimator() override;
  /// Technology nodes the model covers (nm, inclusive); the kernel checks a core's technology_nm against them.
  [[nodiscard]] virtual std::pair<double, double> technology_range_nm() const = 0;
  [[nodiscard]] virtual MemoryEstimate memory(const MemoryEstimateQuery& query) const = 0;
  [[nodiscard]] virtual ArrayEstimate array(const ArrayEstimateQuery& query) const = 0;
};

}  // namespace monet
