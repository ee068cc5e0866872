#pragma once
// Memoised cost-model results keyed by what determines them: the tile's content (kind, type, loop dims with
// names and tile sizes, attributes, per-operand slot, precisions, indirection, region extents, access
// coefficients), the core's content (core_fingerprint) and the cost model with its parameters
// (model_fingerprint). Equal cores of different design points, files or architectures share entries; so do
// `monet run` and `monet cost`. "Does not fit" is a result like any other: it is cached and raised again as the
// same UserError. Safe for concurrent use.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monet/config/params.hpp"
#include "monet/cost/cost.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

using TileSignature = std::vector<std::int64_t>;

/// A stable 64-bit hash (FNV-1a) of a string: the same in every run and build, unlike std::hash.
MONET_API std::uint64_t stable_hash(std::string_view text, std::uint64_t seed = 1469598103934665603ULL);

/// Everything a cost model may read from a core: array, memories (sizes, energies, operands, ports, served dims,
/// flags), op kinds, dataflow and mapping entries.
MONET_API std::uint64_t core_fingerprint(const Core& core);
/// A cost model instance: plugin name, version and resolved parameter values.
MONET_API std::uint64_t model_fingerprint(const PluginInfo& plugin, const ParamValues& params);

/// The content of a tile of an operator: equal signatures on equal cores and models have equal costs.
MONET_API TileSignature tile_signature(const Graph& graph, const Operator& op, std::span<const Range> tile);

/// The full key of a cost query: the tile, the core, the model, the residency, the off-chip sharers and the
/// index of the core's mapping entry that applies to the operator (-1: none).
MONET_API TileSignature cost_key(const CostQuery& q, std::uint64_t core_fp, std::uint64_t model_fp);

class MONET_API CostCache {
 public:
  CostCache();
  ~CostCache();
  CostCache(const CostCache&) = delete;
  CostCache& operator=(const CostCache&) = delete;

  /// Returns the cached cost or computes it with `compute` (which may run twice under contention: costs are
  /// deterministic, so both results are equal). A UserError from `compute` is cached and thrown again.
  template <class F>
  Cost get(const TileSignature& key, F&& compute) {
    if (const Entry* c = find(key)) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      if (c->error) throw UserError(*c->error);
      return c->cost;
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    try {
      Cost c = compute();
      insert(key, Entry{c, nullptr});
      return c;
    } catch (const UserError& e) {
      insert(key, Entry{Cost{}, std::make_shared<const UserError>(e)});
      throw;
    }
  }
  [[nodiscard]] bool contains(const TileSignature& key) const { return find(key) != nullptr; }
  [[nodiscard]] std::uint64_t hits() const { return hits_.load(); }
  [[nodiscard]] std::uint64_t misses() const { return misses_.load(); }
  [[nodiscard]] std::size_t size() const;

  struct Entry {
    Cost cost;
    std::shared_ptr<const UserError> error;  // set when nothing fits
  };
  /// Every entry, for persisting (order unspecified).
  [[nodiscard]] std::vector<std::pair<TileSignature, Entry>> entries() const;
  void insert(const TileSignature& key, const Entry& entry);

 private:
  [[nodiscard]] const Entry* find(const TileSignature& key) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace monet
