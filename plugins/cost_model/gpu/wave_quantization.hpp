#pragma once
// Tile and wave quantization of a GEMM on a GPU (NVIDIA, "Matrix Multiplication Background User's Guide",
// §3.1-3.2, https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/): the kernel
// computes whole Tm x Tn output tiles, one per thread block, and the SMs run them in waves of SMs x blocks-per-SM
// tiles; the last wave may leave SMs idle. A split-K kernel (cuBLAS's and CUTLASS's answer to products with
// few output tiles and a long reduction) cuts K into `split` slices, each slice a tile of its own.
#include <cstdint>
#include <optional>
#include <string>

#include "gemm_shape.hpp"

namespace monet::plugins::gpu {

struct TileShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
};

/// "128x256" -> {128, 256}; nullopt for anything else.
std::optional<TileShape> parse_tile(const std::string& text);

struct TilePlan {
  TileShape tile;
  std::int64_t split = 1;           // slices of K (split-K); 1 = none
  std::int64_t tiles = 0;           // batch x ceil(M/Tm) x ceil(N/Tn) x split
  std::int64_t waves = 0;           // ceil(tiles / (SMs x blocks per SM))
  double tile_efficiency = 0;       // M N / (ceil(M/Tm) Tm x ceil(N/Tn) Tn)
  double wave_efficiency = 0;       // tiles / (waves x SMs x blocks per SM) x K / (split x ceil(K/split))
  double quantized_macs = 0;        // waves x SMs x blocks per SM x Tm Tn ceil(K/split): the work the waves take
};

TilePlan plan_tiles(const GemmShape& g, TileShape tile, std::int64_t split, std::int64_t sms, std::int64_t blocks_per_sm);

}  // namespace monet::plugins::gpu
