#pragma once
// What a view operator (reshape, transpose, slice, split, concat, expand and their gradients) reads: the index
// region of one of its inputs that a region of its output comes from. Views have no loop nest of their own;
// this is how tiles on either side of a view connect exactly (a few rows through a reshape, one head through a
// transpose, one part through a concat) instead of through the whole tensor.
#include <span>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet {

/// The region of the view's input operand `operand` (an index into `view.operands`) that the output region
/// `out` reads: exact for transposes, slices, splits, concatenations and broadcasts; for reshapes the bounding
/// box, per group of axes whose sizes multiply to the same number (exact when a tile keeps whole rows of the
/// merged or split axes). Unknown views read their whole input. The result may be empty (a concatenation part
/// the region does not touch).
MONET_API std::vector<Range> view_input_region(const Graph& graph, const Operator& view, std::size_t operand,
                                               std::span<const Range> out);

}  // namespace monet
