// imc_macro: a cost model for an analog in-memory-computing (AIMC) crossbar macro — an out-of-tree monet plugin.
//
// The macro is a rows x cols crossbar of multi-bit cells holding one weight each. A matrix product runs with its
// stationary operand (slot I2: the weights of a convolution or linear layer) programmed into the crossbar, and
// the moving operand (I1) applied bit-serially on the rows: one bit plane per step, each column's current read
// out by an ADC. A layer larger than the crossbar is cut into crossbar tiles (reduction rows x output columns),
// run one after the other; partial sums of row tiles are added digitally.
//
// For a tile of an operator with R reduction elements (rows), K outputs per input vector (columns), W = R x K
// stationary elements and V = MACs / W input vectors:
//   row tiles tr = ceil(R / rows), column tiles tc = ceil(K / cols), k_j the columns of column tile j
//   cycles  = tc x sum_i ceil(r_i / write_rows_per_cycle)                  programming every weight once
//           + V x tr x sum_j input_bits x ceil(k_j / adcs)                  bit planes x ADC sharing
//   energy  = V x tr x K x input_bits x adc_energy_pj                       one conversion per column per plane
//           + V x R x tc x input_bits x dac_energy_pj                       each row driven per plane and column tile
//           + MACs x input_bits x cell_energy_fj / 1000                     analog cell currents
//           + W x weight_bits x write_energy_pj_per_bit                     programming
//           + V x K x (tr - 1) x unit_energy_pj                             digital partial-sum additions
//           + bits read/written in the memory feeding the macro at its energies per bit.
// Programming and computing do not overlap (one crossbar, no ping-pong); the defaults are illustrative values of
// the order reported for 8-bit SAR-ADC SRAM-IMC macros, to be replaced by a measured macro's.
#include <algorithm>
#include <cmath>
#include <string>

#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/entry.hpp"

namespace imc {
namespace {

using monet::Bounds;
using monet::ParamSpec;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class ImcMacro final : public monet::CostModel {
 public:
  static monet::PluginInfo describe() {
    monet::PluginInfo i;
    i.kind = monet::PluginKind::cost_model;
    i.name = "imc_macro";
    i.version = "1.0.0";
    i.summary = "analog in-memory-computing crossbar: weights programmed into rows x cols cells, bit-serial inputs, shared ADCs";
    i.description =
        "The core's operational array has two dims: crossbar rows (reduction) and columns (outputs). The stationary "
        "operand (I2) is cut into ceil(R/rows) x ceil(K/cols) crossbar tiles, each programmed once "
        "(write_rows_per_cycle rows per cycle) and then fed V input vectors bit-serially (input_bits planes, each "
        "column converted by one of `adcs` shared ADCs). Energy: ADC conversions, row drivers, cell currents, "
        "programming, digital partial-sum additions (the array's unit_energy_pj) and the accesses to the memory "
        "feeding the macro. Programming is not overlapped with computing.";
    i.params = {
        ParamSpec::integer("input_bits", 8).with_bounds(Bounds{1.0, 32.0}).with_unit("bits")
            .with_doc("bit planes an input element is applied in (bit-serial inputs)"),
        ParamSpec::integer("adcs", 16).with_bounds(Bounds::at_least(1)).with_unit("ADCs")
            .with_doc("ADCs shared by the columns; a bit plane takes ceil(columns used / adcs) cycles"),
        ParamSpec::number("adc_energy_pj", 1.5).with_bounds(Bounds::non_negative()).with_unit("pJ per conversion")
            .with_doc("energy of one ADC conversion"),
        ParamSpec::number("dac_energy_pj", 0.05).with_bounds(Bounds::non_negative()).with_unit("pJ per row and plane")
            .with_doc("energy of driving one row for one bit plane"),
        ParamSpec::number("cell_energy_fj", 1.0).with_bounds(Bounds::non_negative()).with_unit("fJ per MAC and plane")
            .with_doc("analog energy of one cell for one bit plane"),
        ParamSpec::number("write_energy_pj_per_bit", 0.5).with_bounds(Bounds::non_negative()).with_unit("pJ/bit")
            .with_doc("energy of programming one weight bit into the crossbar"),
        ParamSpec::integer("write_rows_per_cycle", 1).with_bounds(Bounds::at_least(1)).with_unit("rows/cycle")
            .with_doc("crossbar rows programmed per cycle"),
    };
    return i;
  }

  explicit ImcMacro(const monet::ParamValues& p)
      : input_bits_(p.get_int("input_bits")),
        adcs_(p.get_int("adcs")),
        adc_pj_(p.get_number("adc_energy_pj")),
        dac_pj_(p.get_number("dac_energy_pj")),
        cell_fj_(p.get_number("cell_energy_fj")),
        write_pj_bit_(p.get_number("write_energy_pj_per_bit")),
        write_rows_(p.get_int("write_rows_per_cycle")) {}

  /// The macro computes matrix products only and reads a rows x cols crossbar off the core's array.
  void check_core(const monet::Core& core) const override {
    const monet::SourceLocation where{core.file};
    if (core.array.dims.size() != 2) {
      throw monet::UserError(where, "core '" + core.name + "': imc_macro needs an array of two dims (crossbar rows, "
                                    "columns), the core has " + std::to_string(core.array.dims.size()));
    }
    for (monet::OpKind k : core.op_kinds) {
      if (!monet::is_mac_kind(k)) {
        throw monet::UserError(where, "core '" + core.name + "': imc_macro computes matrix products only; op_kinds "
                                      "lists '" + monet::to_string(k) + "'");
      }
    }
    for (monet::OperandSlot s : {monet::OperandSlot::I1, monet::OperandSlot::I2, monet::OperandSlot::O}) {
      if (core.levels_of(s).empty()) {
        throw monet::UserError(where, "core '" + core.name + "': no memory holds operand " + monet::to_string(s));
      }
    }
  }

  [[nodiscard]] monet::Cost evaluate(const monet::CostQuery& q) const override {
    const monet::Operator& op = q.op;
    monet::Cost c;
    if (!monet::is_mac_kind(op.kind)) return c;  // check_core keeps other kinds off this core
    std::int64_t macs = 1;
    for (const monet::Range& r : q.tile) macs *= r.size();
    std::int64_t rows_needed = 1;  // R: the reduction dims of the tile
    for (int d : op.reduction_dims()) rows_needed *= q.tile[static_cast<std::size_t>(d)].size();
    std::int64_t elements[monet::kSlotCount] = {0, 0, 0};
    std::int64_t bits[monet::kSlotCount] = {0, 0, 0};
    int weight_bits = 0;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const monet::Operand& o = op.operands[k];
      const std::int64_t n = monet::region_elements(op.operand_region(k, q.tile, q.graph.tensor(o.tensor)));
      elements[static_cast<int>(o.slot)] += n;
      bits[static_cast<int>(o.slot)] += n * o.precision_bits;
      if (o.slot == monet::OperandSlot::I2) weight_bits = std::max(weight_bits, o.precision_bits);
    }
    const std::int64_t w = std::max<std::int64_t>(elements[1], 1);
    const std::int64_t cols_needed = std::max<std::int64_t>(w / std::max<std::int64_t>(rows_needed, 1), 1);  // K
    const std::int64_t vectors = ceil_div(macs, w);                                                      // V
    const std::int64_t rows = q.core.array.dims[0].size;
    const std::int64_t cols = q.core.array.dims[1].size;
    const std::int64_t tr = ceil_div(rows_needed, rows);
    const std::int64_t tc = ceil_div(cols_needed, cols);

    std::int64_t program = 0;  // cycles to program one column tile's worth of rows, summed over row tiles
    for (std::int64_t i = 0; i < tr; ++i) program += ceil_div(std::min(rows, rows_needed - i * rows), write_rows_);
    std::int64_t planes = 0;   // cycles of one input vector through one row of column tiles
    for (std::int64_t j = 0; j < tc; ++j) planes += input_bits_ * ceil_div(std::min(cols, cols_needed - j * cols), adcs_);
    const std::int64_t compute = vectors * tr * planes;
    c.cycles = tc * program + compute;
    c.ideal_cycles = ceil_div(macs, rows * cols);
    c.bound = "compute";

    const auto ib = static_cast<double>(input_bits_);
    const double adc = static_cast<double>(vectors * tr * cols_needed) * ib * adc_pj_;
    const double dac = static_cast<double>(vectors * rows_needed * tc) * ib * dac_pj_;
    const double cell = static_cast<double>(macs) * ib * cell_fj_ / 1000.0;
    const double write = static_cast<double>(w * weight_bits) * write_pj_bit_;
    const double adds = static_cast<double>(vectors * cols_needed * (tr - 1)) * q.core.array.unit_energy_pj;
    c.compute_energy_pj = adc + dac + cell + write + adds;

    // The memory feeding the macro: inputs read once per column tile, weights once, outputs written once.
    const auto feed = [&](monet::OperandSlot s) -> const monet::MemoryLevel& {
      return q.core.memories[static_cast<std::size_t>(q.core.levels_of(s).front())];
    };
    c.memory_energy_pj = static_cast<double>(bits[0] * tc) * feed(monet::OperandSlot::I1).read_energy_per_bit() +
                         static_cast<double>(bits[1]) * feed(monet::OperandSlot::I2).read_energy_per_bit() +
                         static_cast<double>(bits[2]) * feed(monet::OperandSlot::O).write_energy_per_bit();
    c.energy_pj = c.compute_energy_pj + c.memory_energy_pj;
    c.mapping = "imc: R=" + std::to_string(rows_needed) + " K=" + std::to_string(cols_needed) + " V=" +
                std::to_string(vectors) + " on " + std::to_string(tr) + "x" + std::to_string(tc) + " crossbar tiles";
    return c;
  }

 private:
  std::int64_t input_bits_, adcs_;
  double adc_pj_, dac_pj_, cell_fj_, write_pj_bit_;
  std::int64_t write_rows_;
};

}  // namespace
}  // namespace imc

MONET_EXPORT_PLUGINS(imc::ImcMacro)
