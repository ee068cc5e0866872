#include "monet/cost/cost.hpp"

namespace monet {

std::vector<std::int64_t> tile_sizes(std::span<const Range> tile) {
  std::vector<std::int64_t> s;
  s.reserve(tile.size());
  for (const Range& r : tile) s.push_back(r.size());
  return s;
}

OperandTraffic operand_bits(const Graph& graph, const Operator& op, std::span<const Range> tile) {
  OperandTraffic t;
  for (std::size_t i = 0; i < op.operands.size(); ++i) {
    const Operand& o = op.operands[i];
    const Tensor& tensor = graph.tensor(o.tensor);
    const auto region = op.operand_region(i, tile, tensor);
    t.bits[static_cast<int>(o.slot)] += region_elements(region) * o.precision_bits;
  }
  return t;
}

double unit_energy_scale(const Core& core, const Operator& op) {
  if (!core.array.energy_scales_with_width || !core.array.precision) return 1.0;
  const double p = bits_of(*core.array.precision);
  std::int64_t a = 0, b = 0;  // the two widest inputs, a >= b
  for (const Operand& o : op.operands) {
    if (o.is_output()) continue;
    if (o.precision_bits > a) {
      b = a;
      a = o.precision_bits;
    } else if (o.precision_bits > b) {
      b = o.precision_bits;
    }
  }
  if (a == 0) return 1.0;
  if (core.array.operation == "add") return static_cast<double>(a) / p;
  return static_cast<double>(a) * static_cast<double>(b > 0 ? b : a) / (p * p);
}

}  // namespace monet
