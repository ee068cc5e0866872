#pragma once
// The question a core cost model answers: this operator (or a tile of it) on this core — how many cycles,
// how much energy, with which mapping.
#include <cstdint>
#include <span>
#include <string>

#include "monet/arch/core.hpp"
#include "monet/ir/graph.hpp"

namespace monet {

/// Where an operator's operands live when it starts (inputs) and ends (output): per memory operand slot
/// (I1, I2, O), the index in core.memories of the highest memory holding it; -1 = the operand's top memory.
/// Memories above it are not used for that operand (data kept on chip between layers, for instance).
struct Residency {
  int top[kSlotCount] = {-1, -1, -1};
  bool operator==(const Residency&) const = default;
  [[nodiscard]] bool is_default() const { return top[0] < 0 && top[1] < 0 && top[2] < 0; }
};

struct CostQuery {
  const Graph& graph;
  const Operator& op;
  std::span<const Range> tile;  // one range per loop dimension of op (the full ranges for a whole operator)
  const Core& core;
  Residency residency{};
  /// Tiles that stream from off-chip memory at the same time as this one (its inter-core siblings), sharing the
  /// off-chip port: a model may prefer mappings that need less off-chip bandwidth.
  int offchip_sharers = 1;
};

struct Cost {
  std::int64_t cycles = 0;        // latency of the tile on the core (cycles)
  std::int64_t ideal_cycles = 0;  // compute-only lower bound at full spatial utilization (cycles)
  double energy_pj = 0;           // compute_energy_pj + memory_energy_pj
  double compute_energy_pj = 0;   // MACs / vector ops in the operational array
  double memory_energy_pj = 0;    // on-chip memory accesses inside the core
  std::string bound;              // what limits the latency: "compute" or the memory/port that does
  std::string mapping;            // the chosen mapping, human readable
  // Breakdown of the latency where the model has one (cycles; exact values may be fractional).
  double exact_cycles = 0;        // the model's latency before rounding up to whole cycles (0: = cycles)
  double stall_cycles = 0;        // memory-port contention
  double onloading_cycles = 0;    // initial data loading not hidden behind compute
  double offloading_cycles = 0;   // final write-back not hidden behind compute
  double spatial_utilization = 0; // ideal cycles / temporal cycles (0: not modelled)
  std::string spatial_mapping;    // per array dimension, the unrolled loops
  std::string temporal_mapping;   // per memory level (bottom-up), the loops it holds
  std::int64_t mappings_evaluated = 0;
  // Accesses to memory levels marked `offchip` (operands streamed from off-chip memory while the tile runs):
  // their energy (part of memory_energy_pj) and the bits moved, which the scheduler carries over the links.
  double offchip_energy_pj = 0;
  std::int64_t offchip_read_bits = 0;
  std::int64_t offchip_write_bits = 0;
  /// The same bits per operand slot (I1, I2, O): they sum to the totals above (a model reporting off-chip bits
  /// reports them per slot; the scheduler records one transfer per streamed operand and direction).
  std::int64_t offchip_read_bits_by_slot[kSlotCount] = {0, 0, 0};
  std::int64_t offchip_write_bits_by_slot[kSlotCount] = {0, 0, 0};
  /// Bits each memory operand (I1, I2, O) occupies in its highest on-chip memory while the tile runs, as the
  /// model's mapping stages it (all instances); -1: the model does not say. The scheduler counts these for
  /// operands that stream from off-chip memory (resident operands are copies it tracks itself).
  std::int64_t onchip_bits[kSlotCount] = {-1, -1, -1};
  /// Off-chip bandwidth of its bursts (bits/cycle; 0 = not modelled), as Stream reserves it on the links for
  /// streamed operands: the instantaneous bandwidth towards the array, scaled by temporal cycles / latency.
  double offchip_peak_bandwidth = 0;
};

/// Tile sizes per loop dimension of a tile.
MONET_API std::vector<std::int64_t> tile_sizes(std::span<const Range> tile);
/// Elements × precision bits of every operand region of a tile, summed per slot (I1, I2, O).
struct OperandTraffic {
  std::int64_t bits[kSlotCount] = {0, 0, 0};
};
/// The factor on the core's unit_energy_pj for one operation of `op` (docs/cost-models.md#operand-width-and-mac-energy):
/// 1 unless the array declares energy_scaling = "operand_bits" and a precision p; then a MAC array's units cost
/// (a x b) / p^2, a and b the widths of the operator's two widest input operands (a multiplier's energy grows with
/// the product of its operand widths), an adder array's a / p (a ripple of a bits).
MONET_API double unit_energy_scale(const Core& core, const Operator& op);
MONET_API OperandTraffic operand_bits(const Graph& graph, const Operator& op, std::span<const Range> tile);

}  // namespace monet
