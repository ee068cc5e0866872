#pragma once
// Computation nodes (CNs): the units the scheduler places on cores. A CN is an operator restricted to a
// sub-range of every loop dimension (a tile); layer-by-layer execution has one CN per operator. Edges
// between CNs are derived from the index regions the tiles write and read, never from positions.
#include <cstdint>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/schedule/computation_node.hpp"

namespace monet {

struct CNEdge {
  int src = 0;
  int dst = 0;
  TensorId tensor = kNone;  // the data moved (behind any views the destination reads it through)
  std::int64_t bits = 0;    // data the destination needs from the source
  OperandSlot slot = OperandSlot::I1;  // the destination's operand that reads it
  bool order_only = false;  // an ordering, no data (bits 0): a view after what it aliases, or `Operator::after`
};

/// A region of a tensor without producer (input, weight, optimizer state, buffer) that CNs read from off-chip
/// memory. CNs reading exactly the same region share the item (e.g. every row tile of a convolution reads the
/// same weights), so a core keeps one copy for all of them.
struct SourceItem {
  TensorId tensor = kNone;
  std::int64_t bits = 0;
  int readers = 0;  // CNs that read it
};

struct SourceRead {
  TensorId tensor = kNone;
  OperandSlot slot = OperandSlot::I1;
  std::int64_t bits = 0;
  int item = 0;  // index into CNGraph::source_items
};

struct CNGraph {
  std::vector<ComputationNode> nodes;  // in priority order (earlier = scheduled first when ready)
  std::vector<CNEdge> edges;
  std::vector<std::vector<int>> in_edges;   // per node: indices into edges
  std::vector<std::vector<int>> out_edges;  // per node: indices into edges
  std::vector<std::vector<SourceRead>> source_reads;  // per node
  std::vector<SourceItem> source_items;
  std::vector<std::int64_t> output_bits;    // per node: bits of all outputs its tile writes
  std::vector<std::int64_t> sink_bits;      // per node: bits of graph outputs it writes (stored off-chip)
  std::vector<TensorRole> output_role;      // per node: role of its (first) output tensor
};

/// Builds the CN graph from tiles: checks that the tiles of each operator cover its iteration space exactly
/// once, derives edges from region intersections (data produced by one tile and read by another, through views
/// by their index maps; a view gets only `order_only` edges from what it aliases: it moves nothing; `Operator::after` adds
/// `order_only` edges too) and off-chip reads of source tensors,
/// and checks the result has no cycle. The
/// node order is the fusion strategy's priority order; it need not be a topological order.
MONET_API CNGraph connect_tiles(const Graph& graph, std::vector<ComputationNode> nodes);

/// "conv1" or "conv1[OY 0:8, K 0:16]" for messages and reports.
MONET_API std::string cn_name(const Graph& graph, const ComputationNode& cn);

}  // namespace monet
