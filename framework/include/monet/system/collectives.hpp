#pragma once
// The α–β cost of collectives over a system's chips (docs/datacenter.md#collectives): ring algorithms, whose
// bandwidth terms are NCCL's bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n,
// reduce-scatter and all-gather (n-1)/n, broadcast 1, all-to-all (n-1)/n), and for a group that spans nodes
// with several of its chips per node, the hierarchical form: reduce-scatter inside the node, the collective of
// 1/k of the data across nodes, all-gather inside the node.
#include <cstdint>
#include <string>

#include "monet/plugin/parallelism_model.hpp"  // CollectiveKind
#include "monet/system/system.hpp"

namespace monet {

MONET_API std::string to_string(CollectiveKind kind);

struct CommCost {
  double seconds = 0;
  double bytes_per_chip = 0;  // bytes each chip of the group sends
  double energy_j = 0;        // every byte sent by every chip of the group, at its tier's energy per bit
  CommCost& operator+=(const CommCost& o) {
    seconds += o.seconds;
    bytes_per_chip += o.bytes_per_chip;
    energy_j += o.energy_j;
    return *this;
  }
};

/// A ring collective over `ranks` chips of one tier. `bytes` is the whole array (nccl-tests' S): what each chip
/// holds before an all-reduce, the gathered result of an all-gather, the input of a reduce-scatter; for `send`,
/// the message. Time = steps·α + factor·bytes / (bandwidth·efficiency).
MONET_API CommCost ring_collective(const Fabric& fabric, CollectiveKind kind, double bytes, std::int64_t ranks);

/// A collective over a group of `ranks` chips spaced `stride` apart in the system's numbering (chips of a node
/// are consecutive): inside one node it is a ring on the intra-node fabric; with one chip per node, a ring on the
/// inter-node network; otherwise hierarchical (above), or for an all-reduce, reduce-scatter or all-gather NCCL's
/// ring through every chip when the system's `rings` says "flat" (docs/datacenter.md#flat-rings). A `send` crosses
/// nodes when stride >= chips_per_node. An all-reduce is NCCL's tree instead when the system's `all_reduce` says
/// "tree", or "fastest" and the tree is faster (docs/datacenter.md#tree-all-reduce; not on a torus).
MONET_API CommCost group_collective(const System& system, CollectiveKind kind, double bytes, std::int64_t ranks,
                                    std::int64_t stride);

/// Links per tier in collective_tiers' bits: a torus of up to three dimensions has a set of links per dimension.
inline constexpr unsigned kTierLinkBits = 3;

/// The links group_collective's collective holds: bits 0-2 the intra-node fabric (a switch or ring: bit 0; a torus:
/// one bit per dimension the group spans), bits 3-5 the inter-node network likewise (both tiers for a hierarchical
/// one; 0 for a group of one chip). Collectives whose bits meet wait for each other (docs/datacenter.md).
MONET_API unsigned collective_tiers(const System& system, CollectiveKind kind, std::int64_t ranks, std::int64_t stride);
/// The share of a chip's compute a collective on `tiers` (collective_tiers' bits) takes while it runs: the
/// largest compute_share of the tiers it uses (a hierarchical collective is one library call).
MONET_API double collective_compute_share(const System& system, unsigned tiers);

}  // namespace monet
