#pragma once
// Memoised cost-model results keyed by what determines them: the tile's signature (kind, type, loop
// sizes, per-operand slot, precision and region extents, access coefficients) and the core type.
// Safe for concurrent use.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "monet/cost/cost.hpp"

namespace monet {

using TileSignature = std::vector<std::int64_t>;

/// The signature of a tile of an operator for a core type; equal signatures have equal costs.
MONET_API TileSignature tile_signature(const Graph& graph, const Operator& op, std::span<const Range> tile, int core_type);

class MONET_API CostCache {
 public:
  CostCache();
  ~CostCache();
  CostCache(const CostCache&) = delete;
  CostCache& operator=(const CostCache&) = delete;

  /// Returns the cached cost or computes it with `compute` (which may run twice under contention: costs
  /// are deterministic, so both results are equal).
  template <class F>
  Cost get(const TileSignature& key, F&& compute) {
    if (const Cost* c = find(key)) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return *c;
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    Cost c = compute();
    insert(key, c);
    return c;
  }
  [[nodiscard]] std::uint64_t hits() const { return hits_.load(); }
  [[nodiscard]] std::uint64_t misses() const { return misses_.load(); }
  [[nodiscard]] std::size_t size() const;

 private:
  const Cost* find(const TileSignature& key) const;
  void insert(const TileSignature& key, const Cost& cost);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace monet
