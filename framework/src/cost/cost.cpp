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

}  // namespace monet
