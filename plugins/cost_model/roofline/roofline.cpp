// Roofline cost model: a tile takes as long as the slower of its arithmetic and its traffic through the
// memory port that bounds it; energy is arithmetic plus memory accesses. No mapping search: every operand is
// read (outputs written) once at the top memory level that holds it. Fast and optimistic — a lower bound
// for the loopnest model.
#include <cmath>
#include <map>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

class Roofline final : public CostModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::cost_model;
    i.name = "roofline";
    i.version = "1.0.0";
    i.summary = "cycles = max(ops / (PEs x utilization), bits through the busiest memory port / its bandwidth)";
    i.description =
        "ops = MACs for conv/gemm/matmul, iterations x ops_per_iteration for other kinds (one op per PE per cycle). "
        "Each input operand is read once from the top memory level holding its slot (I1, I2) through the port "
        "allocated to (slot, tl); each output is written once into the top level of O through the port allocated "
        "to (O, fl); bits on the same port add up and take ceil(bits / bandwidth_max_bits) cycles. "
        "Energy = ops x unit_energy_pj + bits x access energy per bit of that level (read_energy_pj per word of "
        "the widest read port; write_energy_pj per word of the widest write port).";
    i.params = {ParamSpec::number("utilization", 1.0)
                    .with_bounds(Bounds::fraction())
                    .with_unit("fraction of PEs")
                    .with_doc("fraction of the operational array doing useful work every cycle")};
    return i;
  }

  explicit Roofline(const ParamValues& p) : utilization_(p.get_number("utilization")) {}

  [[nodiscard]] Cost evaluate(const CostQuery& q) const override {
    const Operator& op = q.op;
    const Core& core = q.core;
    Cost c;
    if (op.is_view()) return c;

    std::int64_t iterations = 1;
    for (const Range& r : q.tile) iterations *= r.size();
    double ops = 0;
    if (is_mac_kind(op.kind)) {
      ops = static_cast<double>(iterations);
    } else if (op.kind != OpKind::copy) {
      ops = static_cast<double>(iterations) * op.ops_per_iteration;
    }
    const auto pes = static_cast<double>(core.array.pe_count());
    const auto compute = static_cast<std::int64_t>(std::ceil(ops / (pes * utilization_)));
    c.ideal_cycles = static_cast<std::int64_t>(std::ceil(ops / pes));
    c.compute_energy_pj = ops * core.array.unit_energy_pj;

    // Bits through each (memory, port), and memory energy.
    std::map<std::pair<const MemoryLevel*, const Port*>, std::int64_t> port_bits;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      const Tensor& t = q.graph.tensor(o.tensor);
      const std::int64_t bits = region_elements(op.operand_region(k, q.tile, t)) * o.precision_bits;
      const MemoryLevel& level = core.top_level(o.slot);
      const Direction dir = o.is_output() ? Direction::fl : Direction::tl;
      const Port* port = level.port_for(o.slot, dir);
      port_bits[{&level, port}] += bits;
      c.memory_energy_pj += static_cast<double>(bits) *
                            (o.is_output() ? level.write_energy_per_bit() : level.read_energy_per_bit());
    }
    std::int64_t memory = 0;
    std::string bound = "compute";
    for (const auto& [key, bits] : port_bits) {
      const auto cycles = static_cast<std::int64_t>(
          std::ceil(static_cast<double>(bits) / static_cast<double>(key.second->bandwidth_max_bits)));
      if (cycles > memory) {
        memory = cycles;
        if (memory > compute) bound = key.first->name + "." + key.second->name;
      }
    }
    c.cycles = std::max(compute, memory);
    c.bound = memory > compute ? bound : "compute";
    c.energy_pj = c.compute_energy_pj + c.memory_energy_pj;
    c.mapping = "roofline: " + format_number(ops) + " ops on " + std::to_string(core.array.pe_count()) +
                " PEs = " + std::to_string(compute) + " cycles; memory " + std::to_string(memory) + " cycles";
    return c;
  }

 private:
  double utilization_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Roofline)
