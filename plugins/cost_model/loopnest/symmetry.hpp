#pragma once
// Mirror symmetry of a layer: a swap of loop dims that maps the layer and its spatial mapping onto themselves,
// such as (OY, FY) <-> (OX, FX) of a convolution with a square image and kernel. An ordering and its mirror
// image get bit-identical numbers when every product the model forms is an exact integer (checked here), so
// the pruned search costs only the one of each pair that comes first (docs/cost-models.md, "Search modes").
#include <vector>

#include "model.hpp"

namespace monet::loopnest {

/// The mirror as a permutation of layer dims (an involution), or empty when none is proven. Requires: equal
/// sizes and temporal counts, the same relevancy for every operand, sliding-window relations mapped onto
/// relations with the same coefficients and extent, none of the swapped dims spatially unrolled, integer spatial
/// factors, and tile sizes small enough for every product to be exact in a double.
std::vector<int> find_mirror(const Layer& layer, const Spatial& spatial);

}  // namespace monet::loopnest
