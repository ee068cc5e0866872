#pragma once
// Collectives on a torus tier (docs/datacenter.md#collectives-on-a-torus): a group of chips a fixed stride apart
// maps onto the torus's dimensions and runs as described for TPUs (Jouppi et al., "TPU v4: An Optically
// Reconfigurable Supercomputer", ISCA 2023; Austin et al., "How to Scale Your Model", 2025, part 3): a
// bidirectional ring along each dimension it spans, reduce-scatter along the dimensions in turn (the data shrinks
// by each dimension's extent), all-gather back.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "monet/system/collectives.hpp"

namespace monet {

/// A group's extent along one torus dimension: `ranks` of its chips, `step` chips apart along it.
struct TorusSpan {
  std::int64_t size = 1;   // the dimension's chips
  std::int64_t ranks = 1;  // the group's chips along it
  std::int64_t step = 1;   // hops between consecutive chips of the group along it
  std::size_t dim = 0;     // which dimension (0 = x, the fastest)
  [[nodiscard]] bool whole_ring() const { return ranks * step == size; }
};

/// The dimensions a group of `ranks` chips `stride` apart spans, fastest first (dimensions it does not extend
/// along are left out). A group that does not align with the dimensions (a stride that is not a divisor of a
/// dimension times the chips of the faster ones, or chips that fill a dimension only in part before moving on to the
/// next) is a UserError at the fabric's `torus` key.
MONET_API std::vector<TorusSpan> torus_spans(const Fabric& fabric, std::int64_t ranks, std::int64_t stride);

/// Links hops apart from chip 0 to chip `stride` by the shortest way round every dimension.
MONET_API std::int64_t torus_hops(const Fabric& fabric, std::int64_t stride);

/// The collective of `ranks` chips `stride` apart on a torus tier; `bytes` as in ring_collective. all_to_all and
/// broadcast are not modelled on a torus: a UserError at the fabric's `torus` key.
MONET_API CommCost torus_collective(const Fabric& fabric, CollectiveKind kind, double bytes, std::int64_t ranks,
                                    std::int64_t stride);

}  // namespace monet
