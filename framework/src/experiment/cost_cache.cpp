#include "monet/experiment/cost_cache.hpp"

#include <tbb/concurrent_unordered_map.h>

#include <cstring>

namespace monet {

std::uint64_t stable_hash(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

namespace {

/// Accumulates values into a stable 64-bit hash.
class Fingerprint {
 public:
  Fingerprint& add(std::int64_t v) {
    h_ ^= static_cast<std::uint64_t>(v) + 0x9E3779B97F4A7C15ULL + (h_ << 6) + (h_ >> 2);
    return *this;
  }
  Fingerprint& add(double v) {
    std::int64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return add(bits);
  }
  Fingerprint& add(std::string_view s) { return add(static_cast<std::int64_t>(stable_hash(s))); }
  Fingerprint& add(bool b) { return add(static_cast<std::int64_t>(b ? 1 : 0)); }
  [[nodiscard]] std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ULL;
};

std::int64_t as_key(double v) {
  std::int64_t bits = 0;
  static_assert(sizeof(double) == sizeof(std::int64_t));
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

}  // namespace

std::uint64_t core_fingerprint(const Core& core) {
  Fingerprint f;
  f.add(core.name).add(core.cost_model);
  f.add(static_cast<std::int64_t>(core.array.dims.size()));
  for (const ArrayDim& d : core.array.dims) f.add(d.name).add(d.size);
  f.add(core.array.unit_energy_pj);
  f.add(core.array.precision ? static_cast<std::int64_t>(*core.array.precision) : -1).add(core.array.energy_scales_with_width);
  for (OpKind k : core.op_kinds) f.add(static_cast<std::int64_t>(k));
  f.add(static_cast<std::int64_t>(core.memories.size()));
  for (const MemoryLevel& m : core.memories) {
    f.add(m.name).add(m.size_bits).add(m.read_energy_pj).add(m.write_energy_pj).add(m.double_buffering).add(m.offchip);
    for (OperandSlot s : m.operands) f.add(static_cast<std::int64_t>(s));
    f.add(static_cast<std::int64_t>(m.served_dims.size()));
    for (const std::string& d : m.served_dims) f.add(d);
    f.add(static_cast<std::int64_t>(m.ports.size()));
    for (const Port& p : m.ports) {
      f.add(p.name).add(static_cast<std::int64_t>(p.type)).add(p.bandwidth_min_bits).add(p.bandwidth_max_bits);
      for (const PortAllocation& a : p.allocation) f.add(static_cast<std::int64_t>(a.slot)).add(static_cast<std::int64_t>(a.direction));
    }
  }
  for (const auto& [dim, unrollings] : core.dataflow) {
    f.add(dim);
    for (const Unrolling& u : unrollings) f.add(u.loop_dim).add(u.factor);
  }
  f.add(static_cast<std::int64_t>(core.mappings.size()));
  for (const MappingEntry& e : core.mappings) {
    f.add(e.name);
    for (const auto& [dim, unrollings] : e.spatial_mapping) {
      f.add(dim);
      for (const Unrolling& u : unrollings) f.add(u.loop_dim).add(u.factor);
    }
    for (const auto& [dim, loops] : e.spatial_mapping_hint) {
      f.add(dim);
      for (const std::string& l : loops) f.add(l);
    }
    for (const auto& [loop, size] : e.temporal_ordering) f.add(loop).add(size);
  }
  return f.value();
}

std::uint64_t model_fingerprint(const PluginInfo& plugin, const ParamValues& params) {
  Fingerprint f;
  f.add(plugin.name).add(plugin.version);
  for (const auto& [name, entry] : params.entries()) f.add(name).add(to_string(entry.value));
  return f.value();
}

TileSignature tile_signature(const Graph& graph, const Operator& op, std::span<const Range> tile) {
  TileSignature key;
  key.reserve(16 + op.dims.size() * 2 + op.operands.size() * 12);
  key.push_back(static_cast<std::int64_t>(op.kind));
  key.push_back(static_cast<std::int64_t>(stable_hash(op.type)));
  key.push_back(as_key(op.ops_per_iteration));
  key.push_back(static_cast<std::int64_t>(op.dims.size()));
  for (std::size_t d = 0; d < op.dims.size(); ++d) {
    key.push_back(static_cast<std::int64_t>(stable_hash(op.dims[d].name)));
    key.push_back(tile[d].size());
  }
  key.push_back(static_cast<std::int64_t>(op.attributes.size()));
  for (const auto& [name, values] : op.attributes) {
    key.push_back(static_cast<std::int64_t>(stable_hash(name)));
    key.push_back(static_cast<std::int64_t>(values.size()));
    key.insert(key.end(), values.begin(), values.end());
  }
  key.push_back(static_cast<std::int64_t>(op.operands.size()));
  for (std::size_t i = 0; i < op.operands.size(); ++i) {
    const Operand& o = op.operands[i];
    key.push_back(static_cast<std::int64_t>(o.slot));
    key.push_back(o.precision_bits);
    key.push_back(o.accumulation_bits());
    key.push_back(o.indirect ? 1 : 0);
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

TileSignature cost_key(const CostQuery& q, std::uint64_t core_fp, std::uint64_t model_fp) {
  TileSignature key = tile_signature(q.graph, q.op, q.tile);
  key.push_back(static_cast<std::int64_t>(core_fp));
  key.push_back(static_cast<std::int64_t>(model_fp));
  for (int s = 0; s < kSlotCount; ++s) key.push_back(q.residency.top[s]);
  key.push_back(q.offchip_sharers);
  const MappingEntry* m = q.core.mapping_for(q.op.name, q.op.type);
  key.push_back(m ? static_cast<std::int64_t>(m - q.core.mappings.data()) : -1);
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
  tbb::concurrent_unordered_map<TileSignature, Entry, SignatureHash> map;
};

CostCache::CostCache() : impl_(std::make_unique<Impl>()) {}
CostCache::~CostCache() = default;

const CostCache::Entry* CostCache::find(const TileSignature& key) const {
  auto it = impl_->map.find(key);
  return it == impl_->map.end() ? nullptr : &it->second;
}

void CostCache::insert(const TileSignature& key, const Entry& entry) { impl_->map.emplace(key, entry); }

std::size_t CostCache::size() const { return impl_->map.size(); }

std::vector<std::pair<TileSignature, CostCache::Entry>> CostCache::entries() const {
  return {impl_->map.begin(), impl_->map.end()};
}

}  // namespace monet
