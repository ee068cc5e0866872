#pragma once
// An accelerator: core instances (each referring to a core file), an off-chip memory and the links between
// them. Units: bits, bits/cycle, pJ, Hz.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "monet/arch/core.hpp"

namespace monet {

struct CoreInstance {
  int id = 0;
  std::string name;  // instance name, unique in the accelerator ("core0")
  CorePtr core;
  SourceLocation origin;
};

struct OffChipMemory {
  std::string name = "dram";
  std::int64_t size_bits = 0;
  double read_energy_pj_per_bit = 0;
  double write_energy_pj_per_bit = 0;
  double bandwidth_bits_per_cycle = 0;  // of one port (also its access word), shared by the readers and writers on it
  int ports = 1;                        // independent ports (channels); aggregate bandwidth = ports x bandwidth
  SourceLocation origin;                // the [offchip] table, for messages
  [[nodiscard]] double total_bandwidth() const { return bandwidth_bits_per_cycle * ports; }
};

/// Which memory operands (I1, I2, O) of an operator stream from/to off-chip memory while it runs instead of
/// sitting in the core's memories (they do not fit, or the schedule keeps them off chip).
struct StreamedOperands {
  static constexpr int kMaxShift = 6;
  bool slot[3] = {false, false, false};
  /// The streamed operands' highest on-chip memories are used at size >> onchip_shift: what resident data
  /// leaves free for the tiles in flight (0: the whole memory).
  int onchip_shift = 0;
  [[nodiscard]] bool any() const { return slot[0] || slot[1] || slot[2]; }
  [[nodiscard]] int mask() const { return (slot[0] ? 1 : 0) | (slot[1] ? 2 : 0) | (slot[2] ? 4 : 0); }
  bool operator==(const StreamedOperands&) const = default;
};

/// The core as a cost model sees it when operands stream from off-chip memory: the off-chip memory is
/// appended as the top memory level of those operands (one port of its bandwidth, energy per access of one
/// port-wide word, serving the whole array), marked `offchip`; their highest on-chip memories shrink by
/// `onchip_shift`.
MONET_API Core with_offchip(const Core& core, const OffChipMemory& offchip, const StreamedOperands& streamed);

enum class LinkKind : std::uint8_t { point_to_point, bus };
MONET_API std::string to_string(LinkKind k);

struct Link {
  std::string name;
  LinkKind kind = LinkKind::point_to_point;
  std::vector<int> endpoints;  // core ids; Accelerator::kOffChip for the off-chip memory
  double bandwidth_bits_per_cycle = 0;
  double energy_pj_per_bit = 0;
  /// Carries only traffic to and from the off-chip memory (a memory bus, not a path between cores).
  bool offchip_only = false;
  SourceLocation origin;
  [[nodiscard]] MONET_API bool connects(int a, int b) const;
};

class MONET_API Accelerator {
 public:
  static constexpr int kOffChip = -2;

  std::string name;
  std::string file;
  double frequency_hz = 0;  // 0 = not given (no seconds in reports)
  /// Power the chip draws whatever it runs (leakage, clocks, idle memory), charged over a schedule's latency;
  /// 0 = not modelled (the dataflow templates' cost models count the work only).
  double idle_power_w = 0;
  std::vector<CoreInstance> cores;
  OffChipMemory offchip;
  std::vector<Link> links;

  [[nodiscard]] int core_index(std::string_view name) const;  // -1 when absent
  [[nodiscard]] std::vector<std::string> core_names() const;
  /// The link used between two endpoints: the widest one connecting both (first on ties); nullptr if none.
  [[nodiscard]] const Link* link_between(int a, int b) const;
  /// link_between for every pair of endpoints at once (index with link_table_index): what a scheduler looks up
  /// per transfer, built in O(sum of endpoints^2) instead of a scan over every link per lookup.
  [[nodiscard]] std::vector<const Link*> link_table() const;
  [[nodiscard]] std::size_t link_table_index(int a, int b) const {
    const std::size_t n = cores.size() + 1;  // cores, then the off-chip memory
    const auto slot = [&](int e) { return e == kOffChip ? cores.size() : static_cast<std::size_t>(e); };
    return slot(a) * n + slot(b);
  }
  [[nodiscard]] std::string endpoint_name(int endpoint) const;
};

using AcceleratorPtr = std::shared_ptr<const Accelerator>;

/// Reads and validates an accelerator file and the core files it references (relative to it).
MONET_API AcceleratorPtr load_accelerator(const std::filesystem::path& file);

}  // namespace monet
