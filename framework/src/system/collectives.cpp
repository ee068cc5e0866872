#include "monet/system/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "monet/system/torus.hpp"

namespace monet {

std::string to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send: return "send";
  }
  return "?";
}

CommCost ring_collective(const Fabric& f, CollectiveKind kind, double bytes, std::int64_t ranks) {
  if (kind != CollectiveKind::send && ranks <= 1) return {};
  const auto n = static_cast<double>(ranks);
  double factor = 1, steps = 1;
  switch (kind) {
    case CollectiveKind::all_reduce: factor = 2 * (n - 1) / n; steps = 2 * (n - 1); break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all: factor = (n - 1) / n; steps = n - 1; break;
    case CollectiveKind::broadcast: factor = 1; steps = n - 1; break;
    case CollectiveKind::send: factor = 1; steps = 1; break;
  }
  CommCost c;
  c.bytes_per_chip = factor * bytes;
  c.seconds = steps * f.latency_s + c.bytes_per_chip / (f.bandwidth_bytes_per_s * f.efficiency);
  // A send moves its bytes once; in a collective every chip of the ring sends factor·bytes.
  const double senders = kind == CollectiveKind::send ? 1 : n;
  c.energy_j = senders * c.bytes_per_chip * 8 * f.energy_pj_per_bit * 1e-12;
  return c;
}

namespace {
// A collective of `ranks` chips `stride` apart (in the tier's own numbering) on one tier: a ring on a switch or a
// ring, the torus algorithm on a torus.
CommCost tier_collective(const Fabric& f, CollectiveKind kind, double bytes, std::int64_t ranks, std::int64_t stride) {
  if (f.topology == "torus") return torus_collective(f, kind, bytes, ranks, stride);
  return ring_collective(f, kind, bytes, kind == CollectiveKind::send ? 2 : ranks);
}

// How many of a group's chips share a node (chips of a node are consecutive).
std::int64_t chips_per_node_of(const System& s, std::int64_t ranks, std::int64_t stride) {
  return stride >= s.chips_per_node ? 1 : std::min(ranks, s.chips_per_node / stride);
}
}  // namespace

namespace {
// The links of one tier a collective holds, as bits from `shift`: one bit for a switch or a ring (every collective
// uses the chip's links of that tier), one per dimension of a torus (each dimension has links of its own).
unsigned tier_links(const Fabric& f, CollectiveKind kind, std::int64_t ranks, std::int64_t stride, unsigned shift) {
  if (f.topology != "torus") return 1u << shift;
  unsigned bits = 0;
  if (kind == CollectiveKind::send) {  // the dimensions its route moves along
    std::int64_t rest = stride;
    for (std::size_t d = 0; d < f.torus.size(); ++d) {
      if (rest % f.torus[d] != 0) bits |= 1u << (shift + d);
      rest /= f.torus[d];
    }
  } else {
    for (const TorusSpan& sp : torus_spans(f, ranks, stride)) bits |= 1u << (shift + sp.dim);
  }
  return bits != 0 ? bits : 1u << shift;
}
}  // namespace

unsigned collective_tiers(const System& s, CollectiveKind kind, std::int64_t ranks, std::int64_t stride) {
  constexpr unsigned inter_shift = kTierLinkBits;
  if (kind != CollectiveKind::send && ranks <= 1) return 0;
  const std::int64_t per_node = chips_per_node_of(s, ranks, stride);
  const std::int64_t node_stride = std::max<std::int64_t>(1, stride / s.chips_per_node);
  if (kind == CollectiveKind::send) {
    return per_node > 1 || s.nodes == 1 ? tier_links(s.intra_node, kind, 2, stride, 0)
                                        : tier_links(s.inter_node, kind, 2, node_stride, inter_shift);
  }
  const std::int64_t nodes = (ranks + per_node - 1) / per_node;
  if (nodes == 1) return tier_links(s.intra_node, kind, ranks, stride, 0);
  const unsigned across = tier_links(s.inter_node, kind, nodes, node_stride, inter_shift);
  if (per_node == 1 || kind == CollectiveKind::broadcast) return across;
  return tier_links(s.intra_node, kind, per_node, stride, 0) | across;
}

double collective_compute_share(const System& s, unsigned tiers) {
  constexpr unsigned intra = (1u << kTierLinkBits) - 1;
  double share = 0;
  if (tiers & intra) share = s.intra_node.compute_share;
  if (tiers & ~intra) share = std::max(share, s.inter_node.compute_share);
  return share;
}

namespace {
// Ring algorithms on one tier, hierarchical or flat over both (the header's group_collective without the tree).
CommCost ring_group_collective(const System& s, CollectiveKind kind, double bytes, std::int64_t ranks, std::int64_t stride);

// NCCL's tree all-reduce (src/graph/tuning.cc): a chain through the group's chips of each node and a double binary
// tree across the nodes, reducing up and broadcasting down, pipelined. Its latency is 2·((k − 1)·α_fabric +
// ⌈log₂ N⌉·α_network); its bus bandwidth NCCL takes as 0.92 of the graph's, and the algorithm bandwidth as half
// the bus bandwidth, so the bandwidth term is 2·S / (0.92·B). B is the slower of the fabric per chip and the
// node's network ports (one per chip of the group) when both are used. Every edge of the trees carries the data
// up once and the result down once: 2·S over each of a node's k − 1 chain links and each of the N − 1 links
// between nodes (as many bytes on each tier as the hierarchical ring moves).
CommCost tree_all_reduce(const System& s, const CommCost& ring, double bytes, std::int64_t per_node, std::int64_t nodes) {
  const Fabric& in = s.intra_node;
  const Fabric& net = s.inter_node;
  const double k = static_cast<double>(per_node);
  double latency = 2 * (k - 1) * in.latency_s, bandwidth = in.bandwidth_bytes_per_s * in.efficiency;
  if (nodes > 1) {
    latency += 2 * std::ceil(std::log2(static_cast<double>(nodes))) * net.latency_s;
    const double ports = k * net.bandwidth_bytes_per_s * net.efficiency;
    bandwidth = per_node > 1 ? std::min(bandwidth, ports) : ports;
  }
  CommCost c = ring;
  c.seconds = latency + 2 * bytes / (0.92 * bandwidth);
  const auto N = static_cast<double>(nodes);
  c.energy_j = 2 * bytes * 8e-12 * (N * (k - 1) * in.energy_pj_per_bit + (N - 1) * net.energy_pj_per_bit);
  return c;
}
}  // namespace

CommCost group_collective(const System& s, CollectiveKind kind, double bytes, std::int64_t ranks, std::int64_t stride) {
  if (kind == CollectiveKind::all_reduce && ranks > 1 && s.all_reduce != "ring") {
    const std::int64_t per_node = chips_per_node_of(s, ranks, stride);
    const std::int64_t nodes = (ranks + per_node - 1) / per_node;
    const bool torus = (per_node > 1 && s.intra_node.topology == "torus") || (nodes > 1 && s.inter_node.topology == "torus");
    if (!torus) {  // a torus runs its own algorithm (torus.hpp)
      const CommCost ring = ring_group_collective(s, kind, bytes, ranks, stride);
      const CommCost tree = tree_all_reduce(s, ring, bytes, per_node, nodes);
      return s.all_reduce == "tree" || tree.seconds < ring.seconds ? tree : ring;
    }
  }
  return ring_group_collective(s, kind, bytes, ranks, stride);
}

namespace {
CommCost ring_group_collective(const System& s, CollectiveKind kind, double bytes, std::int64_t ranks, std::int64_t stride) {
  if (kind != CollectiveKind::send && ranks <= 1) return {};
  const std::int64_t per_node = chips_per_node_of(s, ranks, stride);
  // The network numbers nodes, not chips (a torus between nodes has one chip per node: read_system).
  const std::int64_t node_stride = std::max<std::int64_t>(1, stride / s.chips_per_node);
  if (kind == CollectiveKind::send) {
    if (per_node > 1 || s.nodes == 1) return tier_collective(s.intra_node, kind, bytes, 2, stride);
    return tier_collective(s.inter_node, kind, bytes, 2, node_stride);
  }
  const std::int64_t nodes = (ranks + per_node - 1) / per_node;
  if (nodes == 1) return tier_collective(s.intra_node, kind, bytes, ranks, stride);
  if (per_node == 1) return tier_collective(s.inter_node, kind, bytes, ranks, node_stride);
  const double k = static_cast<double>(per_node);
  CommCost c;
  if (s.rings == "flat" && (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter ||
                            kind == CollectiveKind::all_gather)) {
    // NCCL's ring through all n chips (src/graph/tuning.cc): its steps cross the network N − 1 times per pass
    // (twice as many passes for an all-reduce), the others the fabric; it runs as many rings (channels) as the
    // node has network ports, pipelined over both tiers, so the bus bandwidth is the slower of the fabric per chip
    // and the node's k ports. Of every chip's factor·S, the share that crosses the network is N of the n edges.
    const double n = static_cast<double>(ranks), N = static_cast<double>(nodes);
    const bool twice = kind == CollectiveKind::all_reduce;
    const double factor = (twice ? 2 : 1) * (n - 1) / n, steps = (twice ? 2 : 1) * (n - 1);
    const double network_steps = (twice ? 2 : 1) * (N - 1);
    const Fabric& in = s.intra_node;
    const Fabric& net = s.inter_node;
    const double bandwidth = std::min(in.bandwidth_bytes_per_s * in.efficiency, k * net.bandwidth_bytes_per_s * net.efficiency);
    c.bytes_per_chip = factor * bytes;
    c.seconds = (steps - network_steps) * in.latency_s + network_steps * net.latency_s + c.bytes_per_chip / bandwidth;
    c.energy_j = n * c.bytes_per_chip * 8e-12 * ((n - N) / n * in.energy_pj_per_bit + N / n * net.energy_pj_per_bit);
    return c;
  }
  // Hierarchical over `nodes` nodes of `per_node` chips: the inter-node part carries 1/per_node of the data on
  // each chip's own network port (per_node rings at once).
  // Each phase runs as several rings at once (one per node inside nodes, one per chip of a node across them):
  // the time is one ring's, the energy every ring's.
  auto inside = [&](CollectiveKind k2, double b) {
    CommCost r = tier_collective(s.intra_node, k2, b, per_node, stride);
    r.energy_j *= static_cast<double>(nodes);
    c += r;
  };
  auto across = [&](CollectiveKind k2, double b) {
    CommCost r = ring_collective(s.inter_node, k2, b, nodes);
    r.energy_j *= k;
    c += r;
  };
  switch (kind) {
    case CollectiveKind::all_reduce:
      inside(CollectiveKind::reduce_scatter, bytes);
      across(CollectiveKind::all_reduce, bytes / k);
      inside(CollectiveKind::all_gather, bytes);
      break;
    case CollectiveKind::reduce_scatter:
      inside(CollectiveKind::reduce_scatter, bytes);
      across(CollectiveKind::reduce_scatter, bytes / k);
      break;
    case CollectiveKind::all_gather:
      across(CollectiveKind::all_gather, bytes / k);
      inside(CollectiveKind::all_gather, bytes);
      break;
    case CollectiveKind::all_to_all: {
      // Each chip sends an S/n piece to every other chip: the k − 1 pieces for its own node over the fabric, the
      // n − k others through its network port, both at once (NCCL's point-to-point all-to-all); the slower ends it.
      const double n = static_cast<double>(ranks), S = bytes;
      const Fabric& in = s.intra_node;
      const Fabric& net = s.inter_node;
      const double inside_s = (k - 1) * in.latency_s + (k - 1) / n * S / (in.bandwidth_bytes_per_s * in.efficiency);
      const double across_s = static_cast<double>(nodes - 1) * net.latency_s +
                              (n - k) / n * S / (net.bandwidth_bytes_per_s * net.efficiency);
      c.seconds = std::max(inside_s, across_s);
      c.bytes_per_chip = (n - 1) / n * S;
      c.energy_j = n * S * 8e-12 * ((k - 1) / n * in.energy_pj_per_bit + (n - k) / n * net.energy_pj_per_bit);
      return c;
    }
    default:  // broadcast: one ring over the slower network
      return tier_collective(s.inter_node, kind, bytes, ranks, node_stride);
  }
  return c;
}

}  // namespace

}  // namespace monet
