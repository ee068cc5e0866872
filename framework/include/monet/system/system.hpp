#pragma once
// A system of chips (architectures/systems/, docs/datacenter.md): identical chips, each an accelerator file,
// grouped in nodes, an intra-node fabric (NVLink, xGMI, ICI) and an inter-node network (InfiniBand, RoCE). Chips
// are numbered node by node; what the collective model and the pipeline schedule need of each tier is its
// bandwidth per chip and direction, its latency per message step, the fraction of that bandwidth collectives
// achieve, and its energy per bit.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "monet/util/error.hpp"
#include "monet/util/export.hpp"

namespace monet {

struct Fabric {
  std::string name;
  std::string topology = "switch";   // switch | ring | torus (docs/datacenter.md#collectives-on-a-torus)
  // topology = "torus": chips per dimension, x first (the tier's chips are numbered x fastest, then y, then z);
  // their product is the number of chips the tier joins. Each chip has two links per dimension (one when the
  // dimension holds two chips).
  std::vector<std::int64_t> torus;
  SourceLocation torus_where;        // the `torus` key, where a group that does not align with it is refused
  double bandwidth_bytes_per_s = 0;  // per chip and direction; on a torus per link and direction
  double latency_s = 0;              // α: per message step of a collective, per point-to-point message
  double efficiency = 1;             // achieved bus bandwidth / bandwidth (nccl-tests' busbw over the link rate)
  double energy_pj_per_bit = 0;      // per bit sent over the tier
  // The fraction of each chip's compute rate a collective on this tier takes while it runs beside the chip's
  // operators: the communication library's kernels (NCCL runs a thread block per channel on an SM). 0: none.
  double compute_share = 0;
  SourceLocation where;
};

struct System {
  std::filesystem::path file;
  std::string name;
  std::filesystem::path chip;       // the accelerator file of every chip
  std::int64_t chips_per_node = 1;
  std::int64_t nodes = 1;
  Fabric intra_node;                // chips of one node (unused when chips_per_node = 1)
  Fabric inter_node;                // between nodes (unused when nodes = 1)
  // The all-reduce algorithm, as NCCL_ALGO: "ring", "tree" (NCCL's chain inside a node, double binary tree across
  // nodes) or "fastest" (as NCCL by default: the one predicted faster for the message).
  std::string all_reduce = "ring";
  // How a ring collective spans nodes: "hierarchical" (inside each node, across the nodes with 1/k of the data,
  // inside again: its phases one after another) or "flat" (NCCL's ring through every chip of the group, pipelined
  // over both tiers: the slower of the fabric and the node's k network ports sets its bandwidth).
  std::string rings = "hierarchical";
  SourceLocation where;             // the [system] table
  [[nodiscard]] std::int64_t chips() const { return chips_per_node * nodes; }
};

/// A change to a system file's [system] table before it is read: `path` below it ("intra_node.compute_share"), the
/// new value as TOML text, and where it was written (an experiment's [architecture.system_set]).
struct SystemChange {
  std::string path;
  std::string value;
  SourceLocation where;
};

/// Reads and checks a system file, with `changes` applied first; every mistake is a UserError at its key (at the
/// change's own place for a changed key).
MONET_API System read_system(const std::filesystem::path& file, const std::vector<SystemChange>& changes = {});

}  // namespace monet
