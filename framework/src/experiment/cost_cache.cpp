#include "monet/experiment/cost_cache.hpp"

#include <tbb/concurrent_unordered_map.h>

#include <cstring>
#include <functional>

namespace monet {

TileSignature tile_signature(const Graph& graph, const Operator& op, std::span<const Range> tile, int core_type) {
  TileSignature key;
  key.reserve(16 + op.dims.size() + op.operands.size() * 12);
  key.push_back(core_type);
  key.push_back(static_cast<std::int64_t>(op.kind));
  key.push_back(static_cast<std::int64_t>(std::hash<std::string>{}(op.type)));
  std::int64_t ops_bits = 0;
  static_assert(sizeof(double) == sizeof(std::int64_t));
  std::memcpy(&ops_bits, &op.ops_per_iteration, sizeof ops_bits);
  key.push_back(ops_bits);
  key.push_back(static_cast<std::int64_t>(op.dims.size()));
  for (const Range& r : tile) key.push_back(r.size());
  key.push_back(static_cast<std::int64_t>(op.operands.size()));
  for (std::size_t i = 0; i < op.operands.size(); ++i) {
    const Operand& o = op.operands[i];
    key.push_back(static_cast<std::int64_t>(o.slot));
    key.push_back(o.precision_bits);
    key.push_back(o.accumulation_bits());
    const Tensor& t = graph.tensor(o.tensor);
    const auto region = op.operand_region(i, tile, t);
    key.push_back(static_cast<std::int64_t>(region.size()));
    for (const Range& r : region) key.push_back(r.size());
    for (const AffineExpr& e : o.access) {
      key.push_back(static_cast<std::int64_t>(e.terms.size()));
      for (const auto& term : e.terms) {
        key.push_back(term.dim);
        key.push_back(term.coeff);
      }
    }
  }
  return key;
}

namespace {
struct SignatureHash {
  std::size_t operator()(const TileSignature& k) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the 64-bit words
    for (std::int64_t v : k) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 1099511628211ULL;
    }
    return static_cast<std::size_t>(h);
  }
};
}  // namespace

struct CostCache::Impl {
  tbb::concurrent_unordered_map<TileSignature, Cost, SignatureHash> map;
};

CostCache::CostCache() : impl_(std::make_unique<Impl>()) {}
CostCache::~CostCache() = default;

const Cost* CostCache::find(const TileSignature& key) const {
  auto it = impl_->map.find(key);
  return it == impl_->map.end() ? nullptr : &it->second;
}

void CostCache::insert(const TileSignature& key, const Cost& cost) { impl_->map.emplace(key, cost); }

std::size_t CostCache::size() const { return impl_->map.size(); }

}  // namespace monet
