// The loopnest cost model plugin: per operator tile and core, the best spatial and temporal mapping found by
// a LOMA-class search and its latency and energy from ZigZag's analytical model (docs/cost-models.md).
#include <algorithm>
#include <cmath>

#include "model.hpp"
#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/entry.hpp"

namespace monet::plugins {
namespace {

class LoopnestModel final : public CostModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::cost_model;
    i.name = "loopnest";
    i.version = "1.0.0";
    i.summary = "ZigZag-class mapping search and analytical model: memory hierarchy, ports, stalls, on/off-loading";
    i.description =
        "For each operator (or tile) on a core: spatial mappings from the core's mapping entry (by operator name, "
        "then type, then 'default'), its dataflow, or generated from hints (the best `spatial_mappings` by "
        "utilisation); temporal mappings by LOMA: orderings of the loop prime factors (at most `lpf_limit` of "
        "them), each allocated to the memory levels bottom-up; the best by `objective` (`search` = pruned: the "
        "result of costing every ordering, faster; fast: approximate). The model counts word accesses per memory "
        "level and direction with reuse and stationarity, sliding-window inputs, partial sums, port sharing "
        "stalls, and the loading/write-back not hidden behind compute. compat = \"zigzag\" "
        "reproduces ZigZag 3.8.5 where its behaviour differs from the default (docs/cost-models.md).";
    i.params = {
        ParamSpec::choice("objective", {"latency", "energy", "edp"}, "latency")
            .with_doc("what the mapping search minimises (ties: the other one)"),
        ParamSpec::integer("lpf_limit", 6).with_bounds(Bounds{1, 12}).with_doc(
            "at most this many loop prime factors are permuted (more: slower, possibly better mappings)"),
        ParamSpec::choice("search", {"pruned", "exhaustive", "fast"}, "pruned")
            .with_doc("'pruned': exactly the exhaustive search's mapping and numbers, about 9x faster (orderings "
                      "whose transfer patterns, or mirror images, were costed before are not costed again); "
                      "'exhaustive': every ordering costed in full, as ZigZag; 'fast': APPROXIMATE, about 8x fewer "
                      "orderings (seeds over the two innermost loops, then hill climbing): on ResNet-18-CIFAR's "
                      "training step +0.04 % total latency, +7 % on its worst operator (docs/cost-models.md)"),
        ParamSpec::integer("spatial_mappings", 3).with_bounds(Bounds::at_least(1)).with_doc(
            "spatial mappings evaluated when they are generated from hints"),
        ParamSpec::boolean("mixed_spatial", false).with_doc("allow several loop dims on one array dim when generating"),
        ParamSpec::choice("compat", {"none", "zigzag"}, "none")
            .with_doc("'zigzag': ZigZag 3.8.5's conventions and quirks for parity runs (8-bit operands and 16-bit "
                      "partial sums for float tensors, its loop-dim orders, its on-loading reduction)"),
        ParamSpec::string_list("shared_memories", std::vector<std::string>{})
            .with_doc("memories of the core (by name, on chip) that are one memory for all the cores an operator is "
                      "split over, e.g. a GPU's L2 (the core file gives one core's share): an input every core of the "
                      "split reads whole crosses into it from the level above once for all of them, so each core is "
                      "charged 1/n of that crossing and its own reads out of it in full (set in the core file's "
                      "[cost_model_params]; docs/architectures.md)"),
        ParamSpec::boolean("compat_stream_pooling_channel_loop", false)
            .with_doc("Stream's pooling bug, for parity runs: a pooling tile gets an extra loop C over the operator's "
                      "full channel count that no operand uses (Stream's ONNX parser gives pooling both K and C), so "
                      "it costs channels x its real work (docs/scheduling.md, 'Stream's quirks'); on with [compat] stream = true"),
        ParamSpec::boolean("compat_stream_mapping_objective", false)
            .with_doc("Stream's mapping choice, for parity runs: once a tile streams from off-chip memory, the latency "
                      "objective becomes ceil(off-chip bandwidth / port bandwidth) x latency over the operands with the most "
                      "memory levels (one input counted once, the rest once per sibling), and the first of equal mappings "
                      "in ZigZag's enumeration order wins (docs/scheduling.md); on with [compat] stream = true"),
        ParamSpec::boolean("compat_stream_zigzag_model", false)
            .with_doc("Stream costs every tile with ZigZag, for parity runs: ZigZag's conventions and quirks as with "
                      "compat = \"zigzag\" (on-loading below a level's minimum, the half-shared on-loading assigned, no "
                      "bypassed registers, its loop-dim order); on with [compat] stream = true"),
        ParamSpec::boolean("compat_stream_elementwise_dims", false)
            .with_doc("Stream's loop names for elementwise operators, for parity runs: B, H, D, K by axis (its SIMD "
                      "parser), so a dataflow over K unrolls an activation's last axis (its columns) instead of its "
                      "channels; on with [compat] stream = true"),
        ParamSpec::boolean("compat_stream_bandwidth_rounding", false)
            .with_doc("Stream's bus reservation, for parity runs: a streaming tile's off-chip bandwidth is each operand's "
                      "instantaneous bandwidth rounded up to whole bits/cycle, then summed; on with [compat] stream = true"),
    };
    return i;
  }

  explicit LoopnestModel(const ParamValues& p) {
    options_.objective = p.get_string("objective");
    options_.lpf_limit = static_cast<int>(p.get_int("lpf_limit"));
    const std::string search = p.get_string("search");
    options_.search = search == "exhaustive" ? loopnest::Search::exhaustive
                      : search == "fast"     ? loopnest::Search::fast
                                             : loopnest::Search::pruned;
    options_.spatial_candidates = static_cast<int>(p.get_int("spatial_mappings"));
    options_.mixed_spatial = p.get_bool("mixed_spatial");
    options_.set_compat(p.get_string("compat") == "zigzag" || p.get_bool("compat_stream_zigzag_model"));
    options_.stream_pooling_channel_loop = p.get_bool("compat_stream_pooling_channel_loop");
    options_.stream_mapping_objective = p.get_bool("compat_stream_mapping_objective");
    options_.stream_bandwidth_rounding = p.get_bool("compat_stream_bandwidth_rounding");
    options_.stream_elementwise_dims = p.get_bool("compat_stream_elementwise_dims");
    if (options_.stream_mapping_objective && options_.objective == "latency") options_.objective = "stream";
    options_.shared_memories = p.get_strings("shared_memories");
    shared_where_ = p.where("shared_memories");
  }

  void check_core(const Core& core) const override {
    for (OperandSlot s : {OperandSlot::I1, OperandSlot::I2, OperandSlot::O}) {
      if (core.levels_of(s).empty()) {
        throw UserError(SourceLocation{core.file}, "loopnest: core '" + core.name + "' has no memory for " + to_string(s));
      }
    }
    for (const std::string& name : options_.shared_memories) {
      auto m = std::find_if(core.memories.begin(), core.memories.end(), [&](const MemoryLevel& x) { return x.name == name; });
      if (m == core.memories.end()) {
        throw UserError(shared_where_, "shared_memories: core '" + core.name + "' has no memory '" + name + "'");
      }
      if (m->offchip) {
        throw UserError(shared_where_, "shared_memories: '" + name + "' is the off-chip memory; list the on-chip level the cores share");
      }
    }
  }

  [[nodiscard]] Cost evaluate(const CostQuery& q) const override {
    Cost c;
    if (q.op.is_view()) return c;
    const loopnest::Layer layer = loopnest::make_layer(q.graph, q.op, q.tile, options_);
    loopnest::Hierarchy h = loopnest::make_hierarchy(q.core, q.residency);
    // A memory that cannot hold one element of an operand (a 16-bit register for 32-bit partial sums) is
    // bypassed by that operand; ZigZag instead finds no mapping at all.
    if (!options_.zigzag_compat) bypass_small_levels(layer, h);
    const MappingEntry* entry = q.core.mapping_for(q.op.name, q.op.type);
    loopnest::Options options = options_;
    options.offchip_sharers = std::max(1, q.offchip_sharers);
    if (options.offchip_sharers > 1) options.sibling_shared = loopnest::read_whole_by_siblings(layer, q.op, q.tile);
    std::optional<loopnest::Evaluation> best;
    std::string best_spatial;
    std::int64_t evaluated = 0;
    std::string why;
    for (const auto& user : loopnest::spatial_candidates(layer, h, entry, options)) {
      const loopnest::Spatial sp = loopnest::convert_spatial(layer, h, user);
      auto ev = loopnest::search_temporal(layer, h, sp, entry, options, &evaluated, &why);
      if (ev && (!best || loopnest::better(*ev, *best, options.objective))) {
        best = std::move(ev);
        best_spatial = sp.text;
      }
    }
    if (!best) {
      throw UserError(SourceLocation{q.core.file}, "loopnest: no mapping of operator '" + q.op.name + "' fits core '" +
                                                       q.core.name + "': " + (why.empty() ? "no loop ordering fits" : why));
    }
    c.exact_cycles = best->latency;
    c.cycles = static_cast<std::int64_t>(std::ceil(best->latency - 1e-9));
    c.ideal_cycles = static_cast<std::int64_t>(best->ideal_cycle);
    // The array's energy per operation at the operands' widths (a constant factor: it ranks no mapping differently).
    c.compute_energy_pj = best->mac_energy * unit_energy_scale(q.core, q.op);
    c.memory_energy_pj = best->energy - best->mac_energy;
    c.energy_pj = c.compute_energy_pj + c.memory_energy_pj;
    c.stall_cycles = best->stall;
    c.onloading_cycles = best->onloading;
    c.offloading_cycles = best->offloading;
    c.spatial_utilization = best->spatial_utilization;
    c.spatial_mapping = best_spatial;
    c.temporal_mapping = best->temporal_text;
    c.mappings_evaluated = evaluated;
    // Stream scales the instantaneous bandwidth by temporal cycles / latency.
    const double bandwidth_scale = best->latency > 0 ? best->ideal_temporal_cycle / best->latency : 1.0;
    // Off-chip levels (operands streamed from DRAM): their share of the energy and the bits they move.
    for (std::size_t o = 0; o < layer.ops.size(); ++o) {
      const auto& levels = h.levels[layer.ops[o].slot];
      for (std::size_t m = 0; m < levels.size() && m < best->memory_energy[o].size(); ++m) {
        const MemoryLevel& mem = q.core.memories[static_cast<std::size_t>(levels[m])];
        if (!mem.offchip) continue;
        c.offchip_energy_pj += best->memory_energy[o][m];
        const auto& w = best->word_accesses[o][m];  // rd_out_to_low, wr_in_by_high, wr_in_by_low, rd_out_to_high
        const auto word = static_cast<double>(mem.read_word_bits());
        const auto read = static_cast<std::int64_t>((w[0] + w[3]) * word);
        const auto written = static_cast<std::int64_t>((w[1] + w[2]) * word);
        c.offchip_read_bits += read;
        c.offchip_write_bits += written;
        c.offchip_read_bits_by_slot[layer.ops[o].slot] += read;
        c.offchip_write_bits_by_slot[layer.ops[o].slot] += written;
        // Towards the array: reads of inputs (tl), writes of outputs (fl), as Stream counts them.
        const auto& ib = best->inst_bandwidth[o][m];
        if (options_.stream_bandwidth_rounding) {  // Stream: each operand's ZigZag bandwidth, scaled, rounded up
          const auto& zz = best->inst_bandwidth_truncated[o][m];
          c.offchip_peak_bandwidth += std::ceil((layer.ops[o].output ? zz[2] : zz[0]) * bandwidth_scale - 1e-9);
        } else {
          c.offchip_peak_bandwidth += (layer.ops[o].output ? ib[2] : ib[0]) * bandwidth_scale;
        }
      }
    }
    // What each operand keeps in its highest on-chip memory while the tile runs.
    for (std::size_t o = 0; o < layer.ops.size(); ++o) {
      const auto& levels = h.levels[layer.ops[o].slot];
      for (std::size_t m = levels.size(); m-- > 0;) {
        if (q.core.memories[static_cast<std::size_t>(levels[m])].offchip) continue;
        std::int64_t& bits = c.onchip_bits[layer.ops[o].slot];
        bits = std::max<std::int64_t>(bits, 0) + static_cast<std::int64_t>(std::ceil(best->level_bits[o][m]));
        break;
      }
    }
    c.bound = best->stall > 0 ? "memory ports" : "compute";
    c.mapping = best_spatial + " ; " + best->temporal_text;
    return c;
  }

  [[nodiscard]] OperandTraffic footprint_bits(const CostQuery& q) const override {
    if (q.op.is_view()) return {};
    return loopnest::layer_operand_bits(loopnest::make_layer(q.graph, q.op, q.tile, options_));
  }

 private:
  static void bypass_small_levels(const loopnest::Layer& layer, loopnest::Hierarchy& h) {
    for (const loopnest::LayerOperand& op : layer.ops) {
      auto& levels = h.levels[op.slot];
      const double bits = std::max(op.precision, op.precision_final);
      for (std::size_t m = 0; m + 1 < levels.size();) {
        if (static_cast<double>(h.core->memories[static_cast<std::size_t>(levels[m])].size_bits) < bits) {
          levels.erase(levels.begin() + static_cast<std::ptrdiff_t>(m));
        } else {
          ++m;
        }
      }
    }
  }

  loopnest::Options options_;
  SourceLocation shared_where_;  // where shared_memories was set (the core file, the experiment)
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::LoopnestModel)
