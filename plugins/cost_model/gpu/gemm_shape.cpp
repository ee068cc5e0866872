#include "gemm_shape.hpp"

#include <algorithm>
#include <vector>

namespace monet::plugins::gpu {
namespace {

/// Does operand `o` index loop dim `d` in any of its axes?
bool indexes(const Operand& o, int d) {
  return std::any_of(o.access.begin(), o.access.end(), [d](const AffineExpr& e) {
    return std::any_of(e.terms.begin(), e.terms.end(), [d](const AffineExpr::Term& t) { return t.dim == d && t.coeff != 0; });
  });
}

}  // namespace

GemmShape gemm_shape(const Operator& op, std::span<const Range> tile) {
  GemmShape g;
  // A fused kernel whose operands do not show its GEMM (FlashAttention) names the dims of M, N and K.
  const auto named = [&](const char* key) { return op.attributes.find(key); };
  if (named("gemm_m") != op.attributes.end() && named("gemm_n") != op.attributes.end() &&
      named("gemm_k") != op.attributes.end()) {
    for (std::size_t d = 0; d < op.dims.size(); ++d) {
      const std::int64_t size = tile[d].size();
      auto in = [&](const char* key) {
        const auto& dims = named(key)->second;
        return std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) != dims.end();
      };
      (in("gemm_m") ? g.m : in("gemm_n") ? g.n : in("gemm_k") ? g.k : g.batch) *= size;
    }
    g.fused = true;
    return g;
  }
  for (std::size_t d = 0; d < op.dims.size(); ++d) {
    const std::int64_t size = tile[d].size();
    if (size <= 1) continue;
    bool out = false;
    bool i1 = false;
    bool i2 = false;
    for (const Operand& o : op.operands) {
      const bool uses = indexes(o, static_cast<int>(d));
      if (o.is_output()) out = out || uses;
      if (o.slot == OperandSlot::I1) i1 = i1 || uses;
      if (o.slot == OperandSlot::I2) i2 = i2 || uses;
    }
    if (!out) {
      g.k *= size;
    } else if (i1 && i2) {
      g.batch *= size;
    } else if (i2) {
      g.n *= size;
    } else {
      g.m *= size;
    }
  }
  return g;
}

}  // namespace monet::plugins::gpu
