#pragma once
// A core: an operational array of processing elements and a memory hierarchy listed bottom-up (the
// conventions of ZigZag/Stream core descriptions, so their files convert one to one). Units: sizes and
// bandwidths in bits and bits/cycle, energies in pJ.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monet/ir/types.hpp"
#include "monet/util/error.hpp"

namespace monet {

enum class PortType : std::uint8_t { read, write, read_write };
/// Data-movement directions of a memory port (ZigZag): tl = read towards the level below (or the array),
/// fh = write of data coming from the level above, th = read towards the level above, fl = write of data
/// coming from below (outputs).
enum class Direction : std::uint8_t { tl, fh, th, fl };
MONET_API std::string to_string(PortType t);
MONET_API std::string to_string(Direction d);
[[nodiscard]] inline bool is_read(Direction d) { return d == Direction::tl || d == Direction::th; }

/// Where a number of a core comes from: written in its file (pinned), left to the core's estimator and not
/// estimated yet (pending: apply_estimators fills it), or filled by the estimator.
enum class ValueOrigin : std::uint8_t { pinned, pending, estimated };
MONET_API std::string to_string(ValueOrigin o);

struct PortAllocation {
  OperandSlot slot = OperandSlot::I1;
  Direction direction = Direction::tl;
  bool operator==(const PortAllocation&) const = default;
};

struct Port {
  std::string name;
  PortType type = PortType::read_write;
  std::int64_t bandwidth_min_bits = 0;  // bits/cycle of the narrowest access
  std::int64_t bandwidth_max_bits = 0;  // bits/cycle when fully used
  std::vector<PortAllocation> allocation;
  [[nodiscard]] bool serves(OperandSlot s, Direction d) const;
};

struct MemoryLevel {
  std::string name;
  std::int64_t size_bits = 0;     // capacity of one instance
  double read_energy_pj = 0;      // per read access of one word (word = widest read port)
  double write_energy_pj = 0;     // per write access of one word (word = widest write port)
  std::vector<OperandSlot> operands;
  std::vector<Port> ports;
  std::vector<std::string> served_dims;  // array dims one instance spans; [] = one instance per PE
  bool double_buffering = false;
  /// The accelerator's off-chip memory, not a memory of the core: ZigZag-style cores list DRAM as their top
  /// level (`offchip = true` in the core file), and the kernel appends it for operands that stream. Data there
  /// is off-chip data: it does not count against the core's capacity and its accesses are off-chip energy.
  bool offchip = false;
  ValueOrigin read_energy_origin = ValueOrigin::pinned;
  ValueOrigin write_energy_origin = ValueOrigin::pinned;
  std::optional<double> area_mm2;  // of one instance: pinned (area_mm2 key) or estimated; nullopt: unknown
  ValueOrigin area_origin = ValueOrigin::pinned;
  std::string implementation;      // what the estimator built it from ("sram", "flip-flops", ...); "" if none
  SourceLocation origin;

  [[nodiscard]] MONET_API bool serves(OperandSlot s) const;
  [[nodiscard]] MONET_API const Port* port_for(OperandSlot s, Direction d) const;
  [[nodiscard]] MONET_API std::int64_t read_word_bits() const;
  [[nodiscard]] MONET_API std::int64_t write_word_bits() const;
  [[nodiscard]] double read_energy_per_bit() const {
    return read_word_bits() > 0 ? read_energy_pj / static_cast<double>(read_word_bits()) : 0.0;
  }
  [[nodiscard]] double write_energy_per_bit() const {
    return write_word_bits() > 0 ? write_energy_pj / static_cast<double>(write_word_bits()) : 0.0;
  }
};

struct ArrayDim {
  std::string name;
  std::int64_t size = 1;
};

struct OperationalArray {
  std::vector<ArrayDim> dims;
  double unit_energy_pj = 0;  // per MAC (or per vector op)
  ValueOrigin unit_energy_origin = ValueOrigin::pinned;
  std::optional<ElementType> precision;  // operand type its units are built for (what an estimator needs)
  std::string operation = "mac";         // what one unit does per cycle: "mac" or "add" (vector add, compare)
  /// [array] energy_scaling = "operand_bits": a unit's energy follows the width of what it computes on, from
  /// unit_energy_pj at `precision` (unit_energy_scale, docs/cost-models.md#operand-width-and-mac-energy); "none"
  /// (the default): every operation costs unit_energy_pj, as a fixed-width datapath does.
  bool energy_scales_with_width = false;
  std::optional<double> area_mm2;        // of the whole array: pinned or estimated; nullopt: unknown
  ValueOrigin area_origin = ValueOrigin::pinned;
  std::string implementation;
  SourceLocation precision_origin;        // the precision key (or the [array] table), for messages
  [[nodiscard]] std::int64_t pe_count() const {
    std::int64_t n = 1;
    for (const ArrayDim& d : dims) n *= d.size;
    return n;
  }
};

/// One spatial unrolling factor: loop dimension `loop_dim` unrolled `factor` times on an array dimension.
struct Unrolling {
  std::string loop_dim;
  std::int64_t factor = 1;
};

/// A mapping entry of a core (ZigZag's mapping file): chosen for an operator by its name, else its type,
/// else "default".
struct MappingEntry {
  std::string name;  // operator name, operator type, or "default"
  /// array dim -> (loop dim, factor) unrollings; empty: generate from the hints
  std::map<std::string, std::vector<Unrolling>> spatial_mapping;
  std::map<std::string, std::vector<std::string>> spatial_mapping_hint;  // array dim -> allowed loop dims
  /// Temporal loops innermost first: (loop dim or "*", size or 0 for "*").
  std::vector<std::pair<std::string, std::int64_t>> temporal_ordering;
};

class TomlDocument;

/// The estimator plugin a core names ([core] estimator, technology_nm, [estimator_params]).
struct EstimatorChoice {
  std::string name;
  std::string version;               // the plugin's version, once apply_estimator has run (for provenance)
  double technology_nm = 0;
  SourceLocation name_origin;        // the estimator key
  SourceLocation technology_origin;  // the technology_nm key
  std::shared_ptr<const TomlDocument> params;  // the core document when it has [estimator_params]
};

struct Core {
  std::string name;                 // type name (the [core] name of the file)
  std::string file;                 // path it was read from ("" when built in code)
  std::string cost_model;           // cost-model plugin costing this core
  SourceLocation cost_model_origin; // its `cost_model` key (the [core] table when defaulted), for messages
  OperationalArray array;
  std::vector<MemoryLevel> memories;  // bottom-up
  std::vector<OpKind> op_kinds;     // kinds this core can run
  std::map<std::string, std::vector<Unrolling>> dataflow;  // array dim -> unrollings (optional)
  std::vector<MappingEntry> mappings;  // [mapping.<name>] entries, file order
  /// [cost_model_params]: the core's own parameters for its cost model (a measured core's table, ...),
  /// checked when the model is created; paths in it are relative to the core file.
  std::shared_ptr<const TomlDocument> cost_model_params;
  std::optional<EstimatorChoice> estimator;

  [[nodiscard]] MONET_API bool runs(OpKind k) const;
  /// Indices of the memory levels that hold a slot, bottom-up.
  [[nodiscard]] MONET_API std::vector<int> levels_of(OperandSlot s) const;
  /// The highest level holding a slot (may be off chip for ZigZag-style cores).
  [[nodiscard]] MONET_API const MemoryLevel& top_level(OperandSlot s) const;
  /// Index of the highest on-chip level holding a slot: where tensors resident on this core live; -1: none.
  [[nodiscard]] MONET_API int top_onchip_index(OperandSlot s) const;
  /// The slot's top level is the off-chip memory: its operands always stream from/to off-chip memory.
  [[nodiscard]] MONET_API bool lives_offchip(OperandSlot s) const;
  /// On-chip capacity available to tensors resident on the core: the distinct top on-chip levels, every
  /// instance (bits).
  [[nodiscard]] MONET_API std::int64_t resident_capacity_bits() const;
  /// Physical instances of a memory level: the product of the array dims it does not serve.
  [[nodiscard]] MONET_API std::int64_t memory_instances(const MemoryLevel& m) const;
  /// Numbers the file leaves to the estimator that apply_estimators (monet/arch/estimation.hpp) has not filled.
  [[nodiscard]] MONET_API bool estimates_pending() const;
  /// Area of the core: the array plus every on-chip memory level times its instances (off-chip levels are not
  /// part of the core); nullopt when one of them is unknown.
  [[nodiscard]] MONET_API std::optional<double> area_mm2() const;
  /// The mapping entry for an operator: exact name, then type, then "default"; nullptr when none.
  [[nodiscard]] MONET_API const MappingEntry* mapping_for(const std::string& op_name, const std::string& op_type) const;
};

using CorePtr = std::shared_ptr<const Core>;

/// Reads and validates a core file (see docs/architectures.md). Errors carry file:line:column.
MONET_API CorePtr load_core(const std::filesystem::path& file);
/// The same from a parsed (possibly changed) core document.
MONET_API CorePtr core_from_document(const TomlDocument& doc);

class TomlDocument;
/// [mapping.<name>] tables of a TOML document, checked against a core's array (a separate mapping file).
MONET_API std::vector<MappingEntry> parse_mappings(const TomlDocument& doc, const Core& core);

}  // namespace monet
