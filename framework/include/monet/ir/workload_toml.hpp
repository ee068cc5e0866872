#pragma once
// Writes a graph in monet's native TOML workload format (docs/workloads.md): stored tensors as [[tensors]],
// every operator as a generic `loopnest` layer with its dims, operands, access expressions, precisions and
// attributes. Reading the file back with the `toml` frontend gives the same graph, operator for operator.
#include <string>

#include "monet/ir/graph.hpp"

namespace monet {

MONET_API std::string workload_toml(const Graph& graph);

}  // namespace monet
