#pragma once
// A matrix-product operator (conv, gemm, matmul: any loop nest of multiply-accumulates) seen as the GEMM a GPU
// library runs for it: M, N, K and a batch count, found from which loop dims index which operand.
#include <cstdint>
#include <span>

#include "monet/ir/operator.hpp"

namespace monet::plugins::gpu {

struct GemmShape {
  std::int64_t m = 1;      // output rows: dims of the output and the first input (I1) only
  std::int64_t n = 1;      // output columns: dims of the output and the second input (I2) only
  std::int64_t k = 1;      // reduction: dims no output operand is indexed by
  std::int64_t batch = 1;  // dims every operand is indexed by (groups, attention heads)
  bool fused = false;      // named by the operator's gemm_m/gemm_n/gemm_k: a fused kernel's products
};

/// The GEMM of a tile of a MAC-kind operator. A convolution is an implicit GEMM: its output pixels and images
/// index the output and the input, so they are M; output channels index the output and the weights (N); input
/// channels and the filter window are reduced (K); groups index all three (batch). Output dims indexed by
/// neither input (a broadcast) count as M. An operator with the attributes gemm_m, gemm_n and gemm_k (lists of
/// loop-dim indices: a fused kernel such as FlashAttention, whose operands do not show its GEMM) gets those, the
/// other dims as batch.
GemmShape gemm_shape(const Operator& op, std::span<const Range> tile);

}  // namespace monet::plugins::gpu
