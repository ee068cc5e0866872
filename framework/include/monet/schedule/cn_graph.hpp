#pragma once
// Computation nodes (CNs): the units the scheduler places on cores. A CN is an operator restricted to a
// sub-range of every loop dimension (a tile); layer-by-layer execution has one CN per operator. Edges
// between CNs are derived from the index regions the tiles write and read, never from positions.
#include <cstdint>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet {

struct ComputationNode {
  int id = 0;
  OperatorId op = kNone;
  std::vector<Range> ranges;  // one per loop dimension of the operator
  int stack = 0;              // fused stack it belongs to (layer-by-layer: one stack per operator)
};

struct CNEdge {
  int src = 0;
  int dst = 0;
  TensorId tensor = kNone;
  std::int64_t bits = 0;  // data the destination needs from the source
};

/// A tensor without producer (input, weight, buffer) that a CN reads from off-chip memory.
struct SourceRead {
  TensorId tensor = kNone;
  OperandSlot slot = OperandSlot::I1;
  std::int64_t bits = 0;
};

struct CNGraph {
  std::vector<ComputationNode> nodes;  // in a valid execution order (every edge goes forward)
  std::vector<CNEdge> edges;
  std::vector<std::vector<int>> in_edges;   // per node: indices into edges
  std::vector<std::vector<int>> out_edges;  // per node: indices into edges
  std::vector<std::vector<SourceRead>> source_reads;  // per node
  std::vector<std::int64_t> sink_bits;      // per node: bits of graph outputs it writes (stored off-chip)
};

/// Builds the CN graph from tiles: checks that the tiles of each operator cover its iteration space exactly
/// once and come in dependency order, then derives edges from region intersections (data produced by one
/// tile and read by another) and off-chip reads of source tensors. Views pass regions through unchanged.
MONET_API CNGraph connect_tiles(const Graph& graph, std::vector<ComputationNode> nodes);

/// "conv1" or "conv1[OY 0:8, K 0:16]" for messages and reports.
MONET_API std::string cn_name(const Graph& graph, const ComputationNode& cn);

}  // namespace monet
