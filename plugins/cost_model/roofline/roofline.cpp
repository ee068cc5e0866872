// Roofline cost model: a tile takes as long as the slower of its arithmetic and its compulsory traffic through
// the busiest memory port of the core's hierarchy; energy is arithmetic plus those accesses. No mapping search:
// every operand crosses every memory level that holds it exactly once (no re-fetches, perfect reuse). Fast and
// optimistic — a lower bound for the loopnest model.
#include <algorithm>
#include <cmath>
#include <map>

#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/entry.hpp"
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
    i.summary = "cycles = max(ops / (PEs x utilization), compulsory bits through the busiest memory port / its bandwidth)";
    i.description =
        "ops = MACs for conv/gemm/matmul, iterations x ops_per_iteration for other kinds (one op per PE per cycle). "
        "Every operand crosses each memory level that holds its slot once, bottom to top of its hierarchy (up to "
        "the level the query's residency names): an input is written into a level from above (port of (slot, fh); "
        "not at its top level) and read out towards the array (port of (slot, tl)); an output is written from below "
        "(fl) and read out upwards (th; not at its top). Bits on the same port add up and take ceil(bits / "
        "(bandwidth_max_bits x instances)) cycles, where instances = array dims the memory does not serve. The "
        "busiest port is the bound. Energy = ops x unit_energy_pj + every access at that level's energy per bit "
        "(read_energy_pj per word of the widest read port; write_energy_pj per word of the widest write port).";
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
    c.compute_energy_pj = ops * core.array.unit_energy_pj * unit_energy_scale(core, op);

    // Compulsory bits through each (memory, port) of every operand's hierarchy, and their energy.
    std::map<std::pair<const MemoryLevel*, const Port*>, std::int64_t> port_bits;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      const Tensor& t = q.graph.tensor(o.tensor);
      const std::int64_t bits = region_elements(op.operand_region(k, q.tile, t)) * o.precision_bits;
      if (bits == 0) continue;
      const std::vector<int> levels = hierarchy(core, o.slot, q.residency.top[static_cast<int>(o.slot)]);
      for (std::size_t j = 0; j < levels.size(); ++j) {
        const MemoryLevel& level = core.memories[static_cast<std::size_t>(levels[j])];
        const bool top = j + 1 == levels.size();
        auto move = [&](Direction d, bool read) {
          const Port* port = level.port_for(o.slot, d);
          if (!port) return;  // check_core guarantees the ports this model needs
          port_bits[{&level, port}] += bits;
          const double e = static_cast<double>(bits) * (read ? level.read_energy_per_bit() : level.write_energy_per_bit());
          c.memory_energy_pj += e;
          if (level.offchip) {
            c.offchip_energy_pj += e;
            (read ? c.offchip_read_bits : c.offchip_write_bits) += bits;
            (read ? c.offchip_read_bits_by_slot : c.offchip_write_bits_by_slot)[static_cast<int>(o.slot)] += bits;
          }
        };
        if (o.is_output()) {
          move(Direction::fl, false);
          if (!top) move(Direction::th, true);
        } else {
          move(Direction::tl, true);
          if (!top) move(Direction::fh, false);
        }
      }
    }
    std::int64_t memory = 0;
    std::string bound = "compute";
    for (const auto& [key, bits] : port_bits) {
      const double bandwidth = static_cast<double>(key.second->bandwidth_max_bits) * static_cast<double>(instances(core, *key.first));
      const auto cycles = static_cast<std::int64_t>(std::ceil(static_cast<double>(bits) / bandwidth));
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
  /// The memories holding a slot, bottom-up, up to `top` (a memory index; -1 = all).
  static std::vector<int> hierarchy(const Core& core, OperandSlot slot, int top) {
    std::vector<int> out;
    for (std::size_t m = 0; m < core.memories.size(); ++m) {
      if (top >= 0 && static_cast<int>(m) > top) break;
      if (core.memories[m].serves(slot)) out.push_back(static_cast<int>(m));
    }
    if (out.empty()) out.push_back(static_cast<int>(&core.top_level(slot) - core.memories.data()));
    return out;
  }

  /// Physical instances of a memory: the product of the array dims it does not serve.
  static double instances(const Core& core, const MemoryLevel& m) {
    double n = 1;
    for (const ArrayDim& d : core.array.dims) {
      if (std::find(m.served_dims.begin(), m.served_dims.end(), d.name) == m.served_dims.end()) n *= static_cast<double>(d.size);
    }
    return n;
  }

  double utilization_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Roofline)
