#pragma once
// The multi-core scheduler: places computation nodes on cores in priority order, moves their data over
// links and the off-chip port, and accounts latency, energy and memory. A pure function of its inputs.
#include <cstdint>
#include <functional>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/cost/cost.hpp"
#include "monet/schedule/cn_graph.hpp"

namespace monet {

struct EnergyBreakdown {
  double mac_pj = 0;            // operational arrays (from the cost models)
  double onchip_memory_pj = 0;  // core memories: accesses by the cost models + writing/reading transferred data
  double offchip_pj = 0;        // off-chip memory reads and writes
  double link_pj = 0;           // links and buses
  [[nodiscard]] double total() const { return mac_pj + onchip_memory_pj + offchip_pj + link_pj; }
};

/// The numbers a search compares.
struct ScheduleSummary {
  std::int64_t latency_cycles = 0;
  EnergyBreakdown energy;
  std::vector<std::int64_t> peak_memory_bits;  // per core: peak of data resident in its memories
  std::int64_t offchip_read_bits = 0;
  std::int64_t offchip_write_bits = 0;
  [[nodiscard]] double energy_pj() const { return energy.total(); }
  [[nodiscard]] double edp() const { return energy_pj() * static_cast<double>(latency_cycles); }
};

struct ScheduledNode {
  int cn = 0;
  int core = 0;  // core id; views of off-chip data sit at Accelerator::kOffChip
  std::int64_t start = 0;
  std::int64_t end = 0;
  Cost cost;
};

struct Transfer {
  TensorId tensor = kNone;
  int from = 0;  // core id or Accelerator::kOffChip
  int to = 0;
  int link = -1;  // index into Accelerator::links
  int cn = -1;    // the CN that needs the data (-1: an output written back to off-chip memory)
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t bits = 0;
  double energy_pj = 0;  // link + memories at both ends
};

struct ScheduleResult {
  ScheduleSummary summary;
  std::vector<ScheduledNode> nodes;  // indexed by CN id
  std::vector<Transfer> transfers;   // in the order they were scheduled
};

/// Cost of a CN on a core (cached by the caller).
using CostFunction = std::function<Cost(const ComputationNode& cn, int core)>;

struct ScheduleInputs {
  const Graph& graph;
  const CNGraph& cns;
  const Accelerator& accelerator;
  const std::vector<std::vector<int>>& allowed_cores;  // per operator, sorted core ids
  const std::vector<int>& fixed_core;                  // per operator, -1 = choose among allowed
  const CostFunction& cost;
};

/// List scheduling in CN order. For each CN the core is the fixed one or, among the allowed cores, the one
/// where it finishes first (lowest id on ties). Inputs from other cores cross the widest link between the
/// two (or go through off-chip memory when there is none); source tensors are fetched from off-chip when
/// the core is ready for the CN; graph outputs are written back off-chip. Links and the off-chip port carry
/// one transfer at a time, each placed in the earliest free period long enough for it (so a transfer
/// planned later can use an earlier idle period). Views take no time and stay where their input is.
MONET_API ScheduleResult schedule(const ScheduleInputs& in);

}  // namespace monet
