#pragma once
// Rebuilding a graph with its operators in another order (recomputations inserted, operators moved) gives them new
// ids; the references between operators (`after`, `derived_from`) must follow.
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// For every operator of the old graph that `new_id` maps to its copy in `b` (kNone: not copied), rewrites the
/// copy's `after` and `derived_from` from old ids to new ones.
MONET_API void follow_moved_operators(GraphBuilder& b, const std::vector<OperatorId>& new_id);

}  // namespace monet
