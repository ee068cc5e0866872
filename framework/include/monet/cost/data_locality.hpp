#pragma once
// Inter-layer data locality on one core (ZigZag's SearchInterLayerDataLocalityStage): in a layer-by-layer
// run, which memory can keep a layer's output for the next layer (so neither goes through DRAM) and which
// memory can keep every weight of the network. The result is a Residency per layer, for CostQuery.
#include <span>
#include <vector>

#include "monet/arch/core.hpp"
#include "monet/cost/cost.hpp"
#include "monet/ir/graph.hpp"

namespace monet {

/// One layer of the study: the operator and the bits of its operands per slot (CostModel::footprint_bits).
struct LocalityLayer {
  const Operator* op = nullptr;
  OperandTraffic bits;
};

/// Residency per layer (same order as `layers`). `layers` are the operators the study costs, in a
/// topological order; other operators (views, activations a parity run treats as free) only connect them.
/// The rules (docs/cost-models.md, "Data locality"):
/// - layer edges: u -> v when v reads, directly or through non-layer operators, what u writes (or lists u in
///   its `after` dependencies);
/// - a layer that starts a branch (several successors) or ends one (its successor has several predecessors)
///   writes its output to the output's top memory; otherwise the output goes to the lowest memory that holds
///   both this output and the next layer's input and fits this layer's input + output (+ every weight of the
///   network if it also holds weights), counting all instances of the memory;
/// - a layer reads its input where its first predecessor left it (the first layer: where it fits);
/// - weights live in the lowest memory that serves every array dimension and fits all the network's weights;
/// - a layer with two activation inputs (an addition) keeps both where its input lives.
MONET_API std::vector<Residency> data_locality(const Graph& graph, const Core& core, std::span<const LocalityLayer> layers);

}  // namespace monet
