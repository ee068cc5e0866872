#pragma once
// The loopnest cost model: ZigZag's analytical single-core model and LOMA mapping search, re-implemented
// (../shared/design/cost-model-zigzag.md; section numbers below refer to it). Internal to the plugin.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "monet/arch/core.hpp"
#include "monet/cost/cost.hpp"

namespace monet::loopnest {

inline constexpr int kSlots = 3;  // memory operands: 0 = I1, 1 = I2, 2 = O

/// A loop of a mapping: a layer dimension (or a decoupled partially-relevant code) and its size.
struct Loop {
  int dim = 0;
  double size = 1;
};
using Nest = std::vector<Loop>;  // innermost first

/// Distinct values of ca·a + cb·b over A values of a and B of b (the extent of a sliding window; ZigZag's
/// calc_tensor_dim).
inline double pr_size(double A, std::int64_t sa, double B, std::int64_t sb) {
  const std::int64_t g = std::gcd(sa, sb);
  return A * B - std::max(0.0, B - static_cast<double>(sa / g)) * (A - static_cast<double>(sb / g));
}

/// ix = ca·a + cb·b, clipped to `limit` (the input extent: padding is implicit).
struct Relation {
  int a = 0;
  std::int64_t ca = 1;
  int b = 0;
  std::int64_t cb = 1;
  double limit = 0;
};

enum class Rel : std::uint8_t { none, relevant, irrelevant };

struct LayerOperand {
  char name = 'O';       // O, W, I (ZigZag's layer operands)
  int slot = 2;          // memory operand
  bool output = false;
  std::vector<Rel> rel;  // per layer dim (non-decoupled; pr dims of a pr operand are `none`)
  std::vector<int> relations;  // indices into Layer::relations for a pr operand
  double precision = 8;        // bits (outputs: partial sums)
  double precision_final = 8;  // outputs: final values
  /// Relevancy of a loop code in decoupled nests: decoupled r codes are relevant, ir codes irrelevant.
  [[nodiscard]] Rel decoupled(int code, int ndims) const {
    if (code < ndims) return rel[static_cast<std::size_t>(code)];
    return ((code - ndims) % 2 == 0) ? Rel::relevant : Rel::irrelevant;
  }
  [[nodiscard]] bool pr() const { return !relations.empty(); }
};

/// ZigZag's view of one operator (or tile).
struct Layer {
  std::string name;
  std::string type;
  std::vector<std::string> dims;
  std::vector<std::int64_t> size;
  std::vector<Relation> relations;
  std::vector<LayerOperand> ops;  // the output first
  double macs = 0;
  [[nodiscard]] int ndims() const { return static_cast<int>(dims.size()); }
  [[nodiscard]] int dim(const std::string& n) const {
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == n) return static_cast<int>(i);
    }
    return -1;
  }
};

/// How the temporal mapping search goes through the orderings (docs/cost-models.md, "Search modes").
enum class Search : std::uint8_t {
  exhaustive,  // every ordering allocated and evaluated in full (ZigZag's LOMA)
  pruned,      // the same result; orderings proven to give an earlier mapping's numbers are not finished
  fast,        // approximate: fewer orderings
};

struct Options {
  bool zigzag_compat = false;      // ZigZag's conventions: precisions, loop-dim order, input extents, bypassing
  // ZigZag 3.8.5's quirks, each on in compat mode (docs/cost-models.md, "Deviations"); separate so that
  // their effect can be measured one by one.
  bool negative_onloading = false;   // issue #125: the water-filling of one-shot loads may go below the minimum
  bool half_shared_assigned = false; // the half-shared on-loading part is assigned, not accumulated
  bool truncated_extents = false;    // input extents from integer-truncated loop products (OX 3.5 -> 3)
  bool stream_pooling_channel_loop = false;  // Stream's extra pooling loop C (full channel count, used by no operand)
  /// Stream's mapping choice: with an off-chip level, the latency weighted by ceil(off-chip bandwidth / port) as
  /// its MinimalBandwidthLatencyStage computes it, the first of equal mappings kept in ZigZag's LOMA order.
  bool stream_mapping_objective = false;
  /// Stream's names of an elementwise operator's loops (B, H, D, K by axis: a dataflow over K unrolls the last axis).
  bool stream_elementwise_dims = false;
  /// Stream's bus reservation of a streaming CN: each operand's bandwidth rounded up before they are summed.
  bool stream_bandwidth_rounding = false;
  void set_compat(bool on) { zigzag_compat = negative_onloading = half_shared_assigned = truncated_extents = on; }
  /// CNs that stream from off-chip memory at the same time as this one (inter-core siblings). With more than one,
  /// the latency objective weighs each mapping by how many times its off-chip bandwidth exceeds one port
  /// (Stream's MinimalBandwidthLatencyStage: one input counted once as if broadcast, the others per sibling).
  int offchip_sharers = 1;
  /// Per memory operand (I1, I2, O): whether every sibling reads the same data whole (the operand does not depend
  /// on any dim the split cut). Such an operand crosses into a `shared` memory once for all the siblings.
  std::array<bool, 3> sibling_shared{};
  /// Memories of the core that are one memory for all the cores an operator is split over (a GPU's L2), by name.
  std::vector<std::string> shared_memories;
  std::string objective = "latency";  // latency | energy | edp
  int lpf_limit = 6;
  Search search = Search::pruned;
  int spatial_candidates = 3;      // spatial mappings evaluated when the mapping is generated
  bool mixed_spatial = false;      // allow several loop dims on one array dim when generating
};

/// Steps a mixed-radix counter (digit k counts up to `radix(k)`, the last digit fastest), as used to walk the
/// cartesian product of per-dimension choices. Returns false, with every digit back at 0, after the last value.
template <class Radix>
bool next_index(std::vector<std::size_t>& idx, Radix radix) {
  for (std::size_t k = idx.size(); k-- > 0;) {
    if (++idx[k] < radix(k)) return true;
    idx[k] = 0;
  }
  return false;
}

/// ZigZag's layer from a monet operator tile. Throws UserError for loop nests it cannot express.
Layer make_layer(const Graph& graph, const Operator& op, std::span<const Range> tile, const Options& options);

/// Per memory operand (I1, I2, O): whether the tile's inputs are the operator's whole input along every dim the
/// tile cuts (the operand does not depend on it), so that the siblings of a split all read the same data.
std::array<bool, 3> read_whole_by_siblings(const Layer& layer, const Operator& op, std::span<const Range> tile);

// ------------------------------------------------------------------------------------------- hardware

/// Memory hierarchy per memory operand: the core's memories that hold it, bottom-up. With a residency, an
/// operand is dropped from the memories above its top (ZigZag's inter-layer data locality, section 9).
struct Hierarchy {
  const Core* core = nullptr;
  std::vector<int> levels[kSlots];  // memory indices, bottom-up
  [[nodiscard]] int level_of(int slot, int memory) const;
  [[nodiscard]] bool holds(int slot, int memory) const { return level_of(slot, memory) >= 0; }
  /// The memory operands a memory holds here, in the memory's own operand order.
  [[nodiscard]] std::vector<OperandSlot> operands_at(int memory) const;
};
Hierarchy make_hierarchy(const Core& core, const Residency& residency = {});

// ------------------------------------------------------------------------------------------- mappings

/// A spatial mapping as the user writes it: array dim index -> (layer dim, factor) list.
using UserSpatial = std::vector<std::vector<std::pair<int, double>>>;

/// Candidate spatial mappings (sections 4.2-4.5), best first.
std::vector<UserSpatial> spatial_candidates(const Layer& layer, const Hierarchy& h, const MappingEntry* entry,
                                            const Options& options);

/// A spatial mapping converted per operand and level (4.6): `frac` for energy, `integer` for latency.
struct Spatial {
  std::vector<std::vector<Nest>> frac;     // [operand][entry 0..L]
  std::vector<std::vector<Nest>> integer;  // [operand][entry 0..L]
  std::vector<double> temporal;            // per layer dim: temporal loop count (5.1)
  double used_units = 1;                   // MACs in use (fractional)
  std::string text;                        // "D1: K 32, D2: C 32"
};
Spatial convert_spatial(const Layer& layer, const Hierarchy& h, const UserSpatial& user);

/// A temporal mapping: per operand, L levels of loops (innermost first).
using Temporal = std::vector<std::vector<Nest>>;

/// Result of one evaluated mapping.
struct Evaluation {
  double energy = 0;
  double mac_energy = 0;
  double latency = 0;  // latency_total2
  double ideal_cycle = 0;
  double ideal_temporal_cycle = 0;
  double stall = 0;
  double onloading = 0;
  double offloading = 0;
  double spatial_utilization = 0;
  double rank = 0;  // what the latency objective minimises (the latency, or Stream's bandwidth-weighted latency)
  std::string temporal_text;
  std::vector<std::vector<double>> memory_energy;  // [operand][level], pJ
  std::vector<std::vector<double>> level_bits;     // [operand][level]: data held there (bits, all instances)
  std::vector<std::vector<std::array<double, 4>>> word_accesses;  // [operand][level][tl, fh, fl, th]
  /// Instantaneous bandwidth (bits/cycle) per operand, level and direction: the data of one period over the
  /// window it must move in (ZigZag's req_mem_bw_inst), from the fractional spatial mapping.
  std::vector<std::vector<std::array<double, 4>>> inst_bandwidth;
  /// The same as ZigZag 3.8 reports it (req_mem_bw_inst, Stream's source): from the integer spatial mapping,
  /// the average truncated to whole bits/cycle before and after its scaling. Empty unless a Stream quirk reads it.
  std::vector<std::vector<std::array<double, 4>>> inst_bandwidth_truncated;
};
/// The analytical model (sections 6-8) of one spatial + temporal mapping.
Evaluation evaluate(const Layer& layer, const Hierarchy& h, const Spatial& spatial, const Temporal& temporal,
                    const Options& options);

/// ZigZag's size of each operand of a whole layer (operand_size_bit: elements × precision, partial-sum precision
/// for the output), per memory operand slot.
OperandTraffic layer_operand_bits(const Layer& layer);

/// LOMA (section 5): the best temporal mapping for a spatial mapping, searched as `options.search` says; nullopt
/// when none fits. `evaluated` counts the orderings that fit; `why` (optional) receives the first reason an
/// ordering did not fit.
std::optional<Evaluation> search_temporal(const Layer& layer, const Hierarchy& h, const Spatial& spatial,
                                          const MappingEntry* entry, const Options& options, std::int64_t* evaluated,
                                          std::string* why = nullptr);

/// What the search compares of an evaluation.
struct Score {
  double rank = 0;
  double energy = 0;
  double latency = 0;
};
/// Whether `a` is better than `b` for the objective (ties keep `b`). A strict weak order.
bool better(const Score& a, const Score& b, const std::string& objective);
inline bool better(const Evaluation& a, const Evaluation& b, const std::string& objective) {
  return better(Score{a.rank, a.energy, a.latency}, Score{b.rank, b.energy, b.latency}, objective);
}

/// Python's round(): half to even.
double py_round(double x);

}  // namespace monet::loopnest
