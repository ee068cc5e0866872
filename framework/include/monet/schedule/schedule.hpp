#pragma once
// The multi-core scheduler: places computation nodes on cores in priority order, moves their data over
// links, buses and the off-chip ports, keeps every core's memory within its capacity (spilling to off-chip
// memory and fetching back), and accounts latency, energy by cause and memory over time. A pure function of
// its inputs: no shared mutable state, so many schedules can run in parallel.
#include <array>
#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/cost/cost.hpp"
#include "monet/schedule/cn_graph.hpp"

namespace monet {

struct EnergyBreakdown {
  double mac_pj = 0;            // operational arrays (from the cost models)
  double onchip_memory_pj = 0;  // core memories: accesses by the cost models + reading/writing transferred data
  double offchip_pj = 0;        // off-chip memory: operands streamed during CNs, fetches, write-backs of outputs
  double link_pj = 0;           // links and buses
  double spill_pj = 0;          // spilling data to off-chip memory when a core is full, and fetching it back
  double idle_pj = 0;           // the chip's idle power over the latency (Accelerator::idle_power_w)
  /// What the work itself costs: everything but the idle power.
  [[nodiscard]] double dynamic() const { return mac_pj + onchip_memory_pj + offchip_pj + link_pj + spill_pj; }
  [[nodiscard]] double total() const { return dynamic() + idle_pj; }
};

/// The numbers a search compares.
struct ParallelStep;  // system/parallel_step.hpp

struct ScheduleSummary {
  std::int64_t latency_cycles = 0;
  EnergyBreakdown energy;
  std::vector<std::int64_t> peak_memory_bits;  // per core: peak of data resident in its memories
  std::int64_t peak_offchip_bits = 0;          // peak of data held in off-chip memory
  std::int64_t offchip_read_bits = 0;
  std::int64_t offchip_write_bits = 0;
  std::int64_t spilled_bits = 0;               // written to off-chip memory because a core was full
  /// Offloading (ScheduleInputs::offloaded): cycles CNs waited for offloaded data to come back, beyond the time
  /// their core and every other input were ready.
  std::int64_t offload_stall_cycles = 0;
  /// Offloaded bits paged out: written off chip (`offload` transfers) or already there after a spill.
  std::int64_t offloaded_bits = 0;
  bool over_capacity = false;                  // a core had to hold more than its capacity (nothing left to spill)
  bool offchip_over_capacity = false;          // the off-chip memory held more than its size
  /// Sum over memories (cores' on-chip capacity, off-chip size) of (peak - capacity) / capacity where the peak
  /// exceeds it: 0 for a feasible schedule; Deb's constraint violation for searches.
  double capacity_violation = 0;
  std::string capacity_reason;                 // which memories exceed their capacity, and by how much (bits)
  /// A step on a system of chips: this schedule is one tensor-parallel rank's whole-depth step on one chip, and
  /// this is the system's step made of it (the off-chip capacity is then the chip's, checked per stage). Null
  /// for one chip.
  std::shared_ptr<const ParallelStep> parallel;
  [[nodiscard]] double energy_pj() const { return energy.total(); }
  [[nodiscard]] double edp() const { return energy_pj() * static_cast<double>(latency_cycles); }
};

struct ScheduledNode {
  int cn = 0;
  int core = 0;  // core id; views of off-chip data sit at Accelerator::kOffChip
  std::int64_t start = 0;
  std::int64_t end = 0;
  Cost cost;
  StreamedOperands streamed;  // operands that streamed from/to off-chip memory while it ran
};

enum class TransferCause : std::uint8_t {
  input,       // a predecessor's output moved to the consumer's core
  fetch,       // a source tensor (input, weight, state) read from off-chip memory
  writeback,   // a graph output (or an operand streamed off chip) written to off-chip memory
  spill,       // data written to off-chip memory because its core was full
  refetch,     // spilled data fetched back
  stream,      // bandwidth held on the off-chip path while a CN streams operands
  offload,     // a saved activation written to off-chip memory after its forward readers (ScheduleInputs::offloaded)
  prefetch,    // an offloaded activation fetched back for a backward (or recompute) reader
};
MONET_API std::string to_string(TransferCause c);

/// One movement of data over one link (data between unlinked cores makes two, via off-chip memory). Every
/// record follows one rule: `tensor` is the data moved (a `stream` record: the streamed operand's tensor, one
/// record per streamed operand and direction), `from` → `to` is the direction the data flows (a read from
/// off-chip memory is kOffChip → core), and energy_pj = read_energy_pj + link_energy_pj + write_energy_pj.
struct Transfer {
  TensorId tensor = kNone;
  int from = 0;  // core id or Accelerator::kOffChip
  int to = 0;
  int link = -1;  // index into Accelerator::links
  int cn = -1;    // the CN the data is for (or that streams); -1: not tied to one CN (a spill)
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t bits = 0;
  double bandwidth = 0;  // bits/cycle held on the link
  TransferCause cause = TransferCause::input;
  /// Reading the data at `from` (off-chip memory, or the core's top memory of the operand) and writing it at
  /// `to`. For `stream` records both are 0: the accesses of a streamed operand are the cost model's (it decides
  /// how often each word is read), part of the CN's cost and counted there once.
  double read_energy_pj = 0;
  double link_energy_pj = 0;  // bits × the link's energy per bit
  double write_energy_pj = 0;
  double energy_pj = 0;  // read + link + write
};

/// What data in a core's memory is for: its tensor's role, with activations that checkpointing recomputes in
/// the backward pass apart from those the forward pass produced.
enum class MemoryUse : std::uint8_t { activations, recomputed, weights, gradients, optimizer_states, streaming, other };
inline constexpr std::size_t kMemoryUses = 7;
MONET_API std::string to_string(MemoryUse u);

/// Memory held on a core (or off chip) over time: usage in bits from each time point on.
struct MemoryTimeline {
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;  // (time, bits), sorted by time
  /// Cores only (empty off chip): per step, the bits held for each MemoryUse; they add up to the step's bits.
  std::vector<std::array<std::int64_t, kMemoryUses>> by_use;
};

/// What occupied a core's memory at its peak, by tensor role.
struct PeakComposition {
  std::int64_t time = 0;
  std::int64_t activations = 0;  // forward activations (incl. those saved for the backward pass)
  std::int64_t recomputed = 0;   // activations recomputed in the backward pass (activation checkpointing)
  std::int64_t weights = 0;      // parameters and buffers
  std::int64_t gradients = 0;    // activation and weight gradients
  std::int64_t optimizer_states = 0;
  std::int64_t streaming = 0;    // tiles of operands streaming from off-chip memory, in flight in the core's memories
  std::int64_t other = 0;        // inputs, labels, losses
};

struct ScheduleResult {
  ScheduleSummary summary;
  std::vector<ScheduledNode> nodes;  // indexed by CN id
  std::vector<Transfer> transfers;   // in the order they were scheduled
  std::vector<MemoryTimeline> memory;  // per core
  MemoryTimeline offchip_memory;
  std::vector<PeakComposition> peak_composition;  // per core
};

/// Cost of a CN on a core with some operands streaming from off-chip memory (cached by the caller).
using CostFunction = std::function<Cost(const ComputationNode& cn, int core, const StreamedOperands& streamed)>;

/// Modelling choices of the scheduler ([schedule] in an experiment).
struct ScheduleOptions {
  /// A CN streaming operands holds, on the path to off-chip memory, its average off-chip bandwidth (false) or
  /// its burst bandwidth (true: Cost::offchip_peak_bandwidth, Stream's choice) for its whole run.
  bool peak_offchip_bandwidth = false;
  /// The first CN of an operator whose predecessors' CNs all come earlier in the priority order waits until every
  /// core is idle (Stream's synchronisation at layer boundaries).
  bool layer_barrier = false;
  /// A CN reading part of another CN's output receives the whole output tile (Stream: an edge carries the
  /// producer's full output, e.g. a Relu split by columns gets every column of its producer's rows), instead
  /// of the exact region it reads.
  bool whole_tile_transfers = false;
  /// A CN that reads a source tensor (a network input, weights) fetches it from off-chip memory even when another
  /// core holds a copy (Stream: every CN's tile of a source is a tensor of its own), instead of the nearest copy.
  bool sources_from_offchip = false;
  /// A tile is costed as its operator's largest tile along each dimension (Stream pads a split that does not
  /// divide a dimension: 14 columns in 4 parts are four tiles of 4); its data dependencies stay exact.
  bool padded_tiles = false;
};

struct ScheduleInputs {
  const Graph& graph;
  const CNGraph& cns;
  const Accelerator& accelerator;
  const std::vector<std::vector<int>>& allowed_cores;  // per operator, sorted core ids
  const std::vector<int>& fixed_core;                  // per operator, -1 = by group or choose among allowed
  const CostFunction& cost;
  ScheduleOptions options{};
  const std::vector<int>* cn_core = nullptr;  // per CN: a fixed core that wins over fixed_core, or -1
  /// Record MemoryTimeline::by_use (what each core's memory holds at every step, for the plots). A search's
  /// points skip it: only the composition at the peak enters their metrics.
  bool memory_by_use = true;
  /// Per tensor (or null): saved activations that are offloaded (POET-style paging, docs/training.md). The output of
  /// a CN writing one leaves its core once every reader outside the backward pass has run — written to off-chip
  /// memory (cause `offload`) and freed on chip — and comes back (cause `prefetch`) for its backward and
  /// recompute readers, as a refetch does, overlapping the core's previous CN where the links allow.
  const std::vector<bool>* offloaded = nullptr;
};

/// Event-driven list scheduling (docs/evaluation.md):
/// - the ready CN (all predecessors scheduled) that comes first in the fusion strategy's order goes next;
/// - its core: the fixed one; else group g of an operator split over exactly as many allowed cores as groups
///   runs on the g-th; else the allowed core where it is estimated to finish first;
/// - its operands stream from off-chip memory when the fusion strategy says so or when they cannot fit in
///   the core's memory together (largest first); streamed inputs must be in off-chip memory first, and the CN
///   holds its average off-chip bandwidth on the path to the off-chip memory while it runs;
/// - other inputs are brought to the core: predecessor outputs over the widest link between the cores (or via
///   off-chip memory), source tensors from off-chip memory; a transfer gets the link bandwidth divided by the
///   CN's number of inter-core groups (siblings run in parallel) and, from/to off-chip memory, at most one port;
///   it starts in the earliest window where its bandwidth is free on every link and port it uses;
/// - data stays on a core until its last reader has run; when a core is full, resident data that is not needed
///   now is spilled (written to off-chip memory unless already there), fewest-remaining-readers × size first,
///   and fetched back by its later readers;
/// - graph outputs are written to off-chip memory after their CN.
MONET_API ScheduleResult schedule(const ScheduleInputs& in);

}  // namespace monet
