// The gpu cost model (plugins/cost_model/gpu, docs/cost-models.md) with the A100 SXM4 80 GB core file: NVIDIA's
// wave-quantization examples exactly, an 8192^3 bf16 GEMM at the fraction of peak its calibration implies, a
// large addition at the HBM bandwidth times the calibrated efficiency, a tiny operator at the launch overhead, a
// view at nothing, and the GEMM shape of a convolution. Every expected number is derived by hand below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "monet/arch/core.hpp"
#include "monet/experiment/experiment.hpp"
#include "monet/ir/ops.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/precision.hpp"
#include "support/graph_builders.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

// The core file's numbers (architectures/gpu/cores/a100_sxm4_80g.toml).
constexpr double kSms = 108;
constexpr double kBf16MacsPerCycle = kSms * 1024;  // 312 TFLOP/s at 1.41 GHz
constexpr double kHbmBitsPerCycle = 11569;         // 2,039 GB/s at 1.41 GHz
constexpr double kLaunch = 5640;                   // 4 us at 1.41 GHz
constexpr double kClockHz = 1.41e9;

struct Gpu {
  CorePtr core;
  std::shared_ptr<const CostModel> model;
};

/// A chip's core (architectures/gpu/cores/NAME.toml) and its own model parameters, with `tiles` and `split_k`
/// replaced when given.
Gpu chip(const std::string& name, const std::vector<std::string>& tiles = {},
         const std::vector<std::int64_t>& splits = {}) {
  Gpu g;
  g.core = load_core(test::source_dir() / "architectures/gpu/cores" / (name + ".toml"));
  const Registry& r = Registry::global();
  const PluginHandle& h = r.require(PluginKind::cost_model, "gpu", SourceLocation{"test"});
  ParamValues p = core_cost_model_params(*g.core, h);
  if (!tiles.empty()) p.set("tiles", ParamValue(tiles));
  if (!splits.empty()) p.set("split_k", ParamValue(splits));
  g.model = r.create<CostModel>(h, p);
  g.model->check_core(*g.core);
  return g;
}

Gpu a100(const std::vector<std::string>& tiles = {}, const std::vector<std::int64_t>& splits = {}) {
  return chip("a100_sxm4_80g", tiles, splits);
}

/// Y[M, N] = A[M, K] . W[N, K]^T in bf16 (a linear layer, as PyTorch stores its weights).
GraphPtr gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  GraphBuilder b("gemm");
  const TensorId a = test::tensor(b, "a", {m, k}, TensorRole::input, ElementType::bf16);
  const TensorId w = test::tensor(b, "w", {n, k}, TensorRole::weight, ElementType::bf16);
  const TensorId y = test::tensor(b, "y", {m, n}, TensorRole::activation, ElementType::bf16);
  Operator op = test::named("gemm");
  op.kind = OpKind::gemm;
  op.type = "Gemm";
  ops::matmul(b, op, a, w, std::nullopt, y, ops::MatmulSpec{false, true});
  return std::move(b).build();
}

GraphPtr add(Shape shape, ElementType dtype) {
  GraphBuilder b("add");
  const TensorId x = test::tensor(b, "x", shape, TensorRole::input, dtype);
  const TensorId z = test::tensor(b, "z", shape, TensorRole::input, dtype);
  const TensorId y = test::tensor(b, "y", shape, TensorRole::activation, dtype);
  Operator op = test::named("add");
  op.type = "Add";
  ops::elementwise(b, op, {x, z}, y, 1.0);
  return std::move(b).build();
}

Cost cost_of(const Gpu& g, const Graph& graph, const std::string& name) {
  const Operator* op = graph.find_operator(name);
  const std::vector<Range> tile = op->full_ranges();
  return g.model->evaluate(CostQuery{graph, *op, tile, *g.core});
}

/// One layer of the gpt generator with FlashAttention (hidden 512, 8 heads, 256 tokens) and `extra` keys.
GraphPtr flash_layer(const test::ScratchDir& dir, const std::string& extra) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "gpt");
  return r.create<WorkloadFrontend>(*f, default_params(f->info.params, "test"))
      ->load(dir.write("w.toml", "[workload]\ngenerator = \"gpt\"\nhidden = 512\nheads = 8\nlayers = 1\n"
                                 "seq_length = 256\nvocab = 64\nattention_backend = \"flash\"\n" + extra));
}

TEST(GpuModel, WaveQuantizationReproducesNvidiasExamples) {
  // NVIDIA's Matrix Multiplication Background User's Guide §3.2, with 128x256 tiles on the A100's 108 SMs:
  // a 4096 x 4096 output is 16 x 32 = 512 tiles, 5 waves of 108 (4.74 rounded up): 512 / 540 = 94.8 %;
  // 2048 x 12288 is 16 x 48 = 768 tiles, 8 waves: 768 / 864 = 88.9 %. Tile quantization is 1 (both divide).
  const Gpu g = a100({"128x256"}, {1});
  const GraphPtr square = gemm(4096, 4096, 256);
  const Cost a = cost_of(g, *square, "gemm");
  EXPECT_DOUBLE_EQ(a.spatial_utilization, 512.0 / 540.0);
  EXPECT_NE(a.mapping.find("512 tiles in 5 waves of 108"), std::string::npos) << a.mapping;
  const GraphPtr wide = gemm(2048, 12288, 256);
  const Cost b = cost_of(g, *wide, "gemm");
  EXPECT_DOUBLE_EQ(b.spatial_utilization, 768.0 / 864.0);
  EXPECT_NE(b.mapping.find("768 tiles in 8 waves of 108"), std::string::npos) << b.mapping;
  // Tile quantization: 4000 rows in 128-row tiles compute 4096 (32 tiles), 4000 / 4096 = 97.7 %; 512 tiles, 5 waves.
  const GraphPtr ragged = gemm(4000, 4096, 256);
  EXPECT_DOUBLE_EQ(cost_of(g, *ragged, "gemm").spatial_utilization, 4000.0 / 4096.0 * 512.0 / 540.0);
}

TEST(GpuModel, LargeBf16GemmReachesTheCalibratedFractionOfPeak) {
  // 8192^3: with 256x128 tiles (the first of the equally quantized candidates) 32 x 64 = 2048 tiles in 19 waves
  // (2048 / 2052 = 99.8 %). Their panels out of the L2, 2048 x 384 x 8192 x 16 bits over 40,960 bits/cycle =
  // 2.5 M cycles, are below the tensor cores' 2052 x 256 x 128 x 8192 / 110,592 = 4,980,736 cycles (64x64 tiles
  // would be L2-bound: 6.7 M). 2.2 TFLOP is in the calibration's >= 128 GFLOP row, 0.95 (Calculon's A100). The
  // A100 adds HBM time to compute time (overlap_memory = false, Calculon's no_overlap): 3 x 128 MiB at 0.9 x
  // 11,569 bits/cycle = 309,376.6 cycles. Plus the 5,640-cycle launch.
  const Gpu g = a100();
  const GraphPtr graph = gemm(8192, 8192, 8192);
  const Cost c = cost_of(g, *graph, "gemm");
  const double tensor = 2052.0 * 256 * 128 * 8192 / kBf16MacsPerCycle;
  EXPECT_DOUBLE_EQ(tensor, 4980736.0);
  const double hbm = 3.0 * 8192 * 8192 * 16 / (0.9 * kHbmBitsPerCycle);
  EXPECT_NEAR(c.exact_cycles, kLaunch + tensor / 0.95 + hbm, 1e-6);
  EXPECT_EQ(c.bound, "tensor_core");
  EXPECT_EQ(c.spatial_mapping, "256x128");
  const double fraction = 8192.0 * 8192 * 8192 / kBf16MacsPerCycle / static_cast<double>(c.cycles);
  // 89.4 % (279 TFLOP/s): within the 70-90 % cuBLAS reaches on large bf16 GEMMs; 4 % above the measured maximum
  // (267.9 TFLOP/s, stas00/ml-engineering), as the table is fitted to whole training steps (calibration file).
  EXPECT_NEAR(fraction, 0.8944, 0.0005);
  EXPECT_EQ(c.offchip_read_bits, 2LL * 8192 * 8192 * 16);
  EXPECT_EQ(c.offchip_write_bits, 8192LL * 8192 * 16);
}

TEST(GpuModel, FewTilesAndALongReductionSplitK) {
  // ResNet-18's last 3x3 convolutions at batch 4 as a GEMM: M = 64, N = 512, K = 4608, 0.3 GFLOP (the calibration's
  // < 1 GFLOP row, 0.10). With 64x256 tiles there are only 2 tiles: without split-K one wave runs 108 x 64 x 256 x
  // 4608 / 110,592 = 73,728 tensor-core cycles, 737,280 at 0.10, slower than the vector units' 64 x 512 x 4608 /
  // (108 x 128) / 0.10 = 109,227 cycles, which then run it. Split 16 ways: 32 tiles, still one wave, of K = 288:
  // 4,608 cycles (the L2 moves 32 x 320 x 288 x 16 + 2 x 16 x 64 x 512 x 32 bits in 1,971), 46,080 at 0.10.
  const GraphPtr graph = gemm(64, 512, 4608);
  // HBM: (64 x 4608 + 512 x 4608 + 64 x 512) x 16 bits = 5.4 MB (the >= 1 MB row, 0.6), added to both.
  const double hbm = (64.0 * 4608 + 512.0 * 4608 + 64.0 * 512) * 16 / (0.6 * kHbmBitsPerCycle);
  const Cost whole = cost_of(a100({"64x256"}, {1}), *graph, "gemm");
  EXPECT_EQ(whole.bound, "vector");
  EXPECT_NEAR(whole.exact_cycles, kLaunch + 64.0 * 512 * 4608 / (kSms * 128) / 0.10 + hbm, 1e-6);
  const Cost split = cost_of(a100({"64x256"}, {1, 2, 4, 8, 16}), *graph, "gemm");
  EXPECT_EQ(split.bound, "tensor_core");
  EXPECT_NEAR(split.exact_cycles, kLaunch + 4608 / 0.10 + hbm, 1e-6);
  EXPECT_NE(split.mapping.find("split-K 16, 32 tiles in 1 waves"), std::string::npos) << split.mapping;
}

TEST(GpuModel, LargeAdditionRunsNearTheCalibratedHbmBandwidth) {
  // Two 1 GiB bf16 inputs and a 1 GiB output: 3 GiB = 3.2 GB moved, in the >= 100 MB row (0.90): 3 x 2^33 bits /
  // (0.9 x 11,569) = 2,474,735.5 cycles; the A100 adds the vector units' 2^29 additions (no overlap, as Calculon):
  // 2^29 / (108 x 128 x 0.1) at the < 1 GFLOP row's 0.1 = 388,361 cycles, and the launch. Achieved: 0.78 of the
  // 2,039 GB/s, what STREAM-like kernels reach on an A100 (~1.6 TB/s).
  const Gpu g = a100();
  const GraphPtr graph = add({8, 8192, 8192}, ElementType::bf16);
  const Cost c = cost_of(g, *graph, "add");
  const double bits = 3.0 * 8 * 8192 * 8192 * 16;
  const double vector = 8.0 * 8192 * 8192 / (kSms * 128 * 0.1);
  EXPECT_NEAR(c.exact_cycles, kLaunch + bits / (0.9 * kHbmBitsPerCycle) + vector, 1e-6);
  EXPECT_EQ(c.bound, "hbm");
  const double bytes_per_s = bits / 8 / (static_cast<double>(c.cycles) / kClockHz);
  EXPECT_NEAR(bytes_per_s / 2039e9, 0.777, 0.002);
  // Energy: every HBM bit at 3.9 pJ.
  EXPECT_NEAR(c.offchip_energy_pj, bits * 3.9, 1e-6 * bits * 3.9);
}

TEST(GpuModel, UncalibratedChipsRunLargeGemmsAtTheirMatrixCapAndAdditionsAtTheirHbm) {
  // The borrowed tables (H100, B200, MI300X, MI350X: the A100's, matrix rows capped at each chip's measured maximum)
  // with the model's default roofline (overlap_memory = true). An 8192^3 bf16 GEMM (2.2 TFLOP, the >= 128 GFLOP
  // row) takes launch + max(tensor, L2 panels) / cap, its 3 x 128 MiB of HBM hidden under it; its fraction of peak
  // is the cap times the wave efficiency, a little below the cap (a chip file whose L2, tiles or rates disagreed
  // with its measured cap would show here: with the A100's L2 bytes per SM the B200 came out at 38 %). Per chip,
  // from its core file: tensor cycles = waves x SMs x tile x 8192 / (SMs x MACs per SM); L2 cycles = tiles x
  // (Tm + Tn) x 8192 x 16 bits / L2 bits per cycle.
  //   H100:   256x128, 2,048 tiles in 16 waves of 132: tensor 2,097,152 > L2 2,058,949 cycles: 77.5 % of peak
  //   B200:   256x128, 2,048 tiles in 14 waves of 148: tensor 917,504 < L2 918,186 (by 0.07 %): 76.2 %
  //   MI300X: 256x256 split-K 8, 8,192 tiles in 27 waves of 304: tensor 1,769,472 > L2 786,432 (with the
  //           partial sums, 2 x 8 x 8192^2 x 32 bits): 59.8 %
  //   MI350X: 256x256, 1,024 tiles in 4 waves of 256 (exact): tensor 1,048,576 > L2 524,288: 61.9 %
  // A 3 GiB bf16 addition (3 x 2^33 bits) is HBM-bound on each at the >= 100 MB row's 0.9 of its HBM (the vector
  // units' 2^29 additions at 0.1 take under a fifth of that, hidden): launch + 3 x 2^33 / (0.9 x HBM bits/cycle).
  struct Chip {
    std::string name;
    double sms, macs_per_sm, hbm_bits, launch, cap;
    std::string tile;
    double tensor_cycles, l2_cycles, fraction;
  };
  const std::vector<Chip> chips = {
      {"h100_sxm5_80g", 132, 2048, 14645, 7320, 0.801, "256x128", 2112.0 * 256 * 128 * 8192 / (132 * 2048),
       2048.0 * 384 * 8192 * 16 / 50064, 0.7746},
      {"b200", 148, 4096, 34483, 7424, 0.776, "256x128", 2072.0 * 256 * 128 * 8192 / (148 * 4096),
       2048.0 * 384 * 8192 * 16 / 112264, 0.7617},
      {"mi300x", 304, 1024, 20190, 8400, 0.601, "256x256", 8208.0 * 256 * 256 * 1024 / (304 * 1024),
       8192.0 * 512 * 1024 * 16 / 131072 + 2.0 * 8 * 8192 * 8192 * 32 / 131072, 0.5981},
      {"mi350x", 256, 2048, 29091, 8800, 0.622, "256x256", 1024.0 * 256 * 256 * 8192 / (256 * 2048),
       1024.0 * 512 * 8192 * 16 / 131072, 0.6188},
  };
  for (const Chip& chip_numbers : chips) {
    SCOPED_TRACE(chip_numbers.name);
    const Gpu g = chip(chip_numbers.name);
    const GraphPtr graph = gemm(8192, 8192, 8192);
    const Cost c = cost_of(g, *graph, "gemm");
    EXPECT_EQ(c.spatial_mapping, chip_numbers.tile);
    EXPECT_EQ(c.bound, chip_numbers.l2_cycles > chip_numbers.tensor_cycles ? "l2" : "tensor_core");
    const double hbm = 3.0 * 8192 * 8192 * 16 / (0.9 * chip_numbers.hbm_bits);
    const double compute = std::max(chip_numbers.tensor_cycles, chip_numbers.l2_cycles) / chip_numbers.cap;
    EXPECT_LT(hbm, compute);
    EXPECT_NEAR(c.exact_cycles, chip_numbers.launch + compute, 1e-6 * compute);
    const double fraction = 8192.0 * 8192 * 8192 / (chip_numbers.sms * chip_numbers.macs_per_sm) / c.exact_cycles;
    EXPECT_NEAR(fraction, chip_numbers.fraction, 0.0005);
    EXPECT_LT(fraction, chip_numbers.cap);

    const GraphPtr sum = add({8, 8192, 8192}, ElementType::bf16);
    const Cost a = cost_of(g, *sum, "add");
    const double bits = 3.0 * 8 * 8192 * 8192 * 16;
    EXPECT_EQ(a.bound, "hbm");
    EXPECT_NEAR(a.exact_cycles, chip_numbers.launch + bits / (0.9 * chip_numbers.hbm_bits), 1e-6);
  }
}

// A calibration's fused_matrix rows are the efficiency of kernels that name their GEMM (FlashAttention): with
// them FlashAttention runs at their eta and a plain GEMM (linear_qkv) at the matrix rows'; without them (every
// shipped table) FlashAttention reads the matrix rows.
TEST(GpuModel, FusedKernelsReadTheFusedMatrixRows) {
  test::ScratchDir dir;
  const Registry& r = Registry::global();
  const GraphPtr graph = flash_layer(dir, "");
  const std::string flash = "layers.0.self_attention.core_attention.flash", qkv = "layers.0.self_attention.linear_qkv";
  const Gpu shipped = a100();
  std::string table = test::read_file(test::source_dir() / "architectures/gpu/calibration/a100_sxm4_80g.csv");
  table += "fused_matrix,*,0,0.05\n";
  Gpu fused = a100();
  const PluginHandle& h = r.require(PluginKind::cost_model, "gpu", SourceLocation{"test"});
  ParamValues p = core_cost_model_params(*fused.core, h);
  p.set("calibration", ParamValue(dir.write("fused.csv", table).string()));
  fused.model = r.create<CostModel>(h, p);
  // 2 x 256 x 256 x 512 / 2 causal MACs x 2 = 67 MFLOP: the matrix rows' < 1 GFLOP row, 0.10.
  EXPECT_NE(cost_of(shipped, *graph, flash).mapping.find("; eta 0.1 at"), std::string::npos);
  EXPECT_NE(cost_of(fused, *graph, flash).mapping.find("; eta 0.05 at"), std::string::npos)
      << cost_of(fused, *graph, flash).mapping;
  EXPECT_EQ(cost_of(fused, *graph, qkv).mapping, cost_of(shipped, *graph, qkv).mapping);
}

TEST(GpuModel, Fp8LinearLayerRunsAtTheFp8RateAndReadsEightBitInputs) {
  // [precision] fp8_hybrid narrows a linear layer's GEMM (it reads a weight) to fp8 (Operator::matmul_type): on the
  // H100 the tensor cores' 4,096 fp8 MACs per SM and cycle, twice bf16's, at the calibration's fp8 rows (the shipped
  // table has none of its own: its * rows, 0.801 at 2.2 TFLOP). 8192^3 with 256x128 tiles: 2,048 tiles in 16 waves
  // of 132, tensor 2,112 x 256 x 128 x 8192 / (132 x 4,096) = 1,048,576 cycles, above the L2's 8-bit panels, 2,048 x
  // 384 x 8192 x 8 / 50,064 = 1,029,474. HBM: both inputs read at 8 bits, the bf16 output written at 16.
  const Gpu g = chip("h100_sxm5_80g");
  const GraphPtr linear = gemm(8192, 8192, 8192);
  const GraphPtr bf16 = apply_precision(*linear, *Precision::preset_named("mixed_bf16"));
  const GraphPtr fp8 = apply_precision(*linear, *Precision::preset_named("fp8_hybrid"));
  EXPECT_FALSE(bf16->find_operator("gemm")->matmul_type().has_value());
  ASSERT_TRUE(fp8->find_operator("gemm")->matmul_type().has_value());
  const Cost c = cost_of(g, *fp8, "gemm");
  const double tensor = 2112.0 * 256 * 128 * 8192 / (132 * 4096);
  EXPECT_DOUBLE_EQ(tensor, 1048576.0);
  EXPECT_EQ(c.spatial_mapping, "256x128");
  EXPECT_EQ(c.bound, "tensor_core");
  EXPECT_NEAR(c.exact_cycles, 7320 + tensor / 0.801, 1e-6 * tensor);
  EXPECT_EQ(c.offchip_read_bits, 2LL * 8192 * 8192 * 8);
  EXPECT_EQ(c.offchip_write_bits, 8192LL * 8192 * 16);
  // The same layer in bf16 takes twice the tensor cycles (2,097,152), plus the same launch.
  EXPECT_NEAR(cost_of(g, *bf16, "gemm").exact_cycles - 7320, 2 * (c.exact_cycles - 7320), 1e-6 * tensor);
}

TEST(GpuModel, TinyOperatorCostsTheLaunchAndAViewNothing) {
  // 4 + 4 fp32 in, 4 out: 384 bits at 0.3 x 11,569 bits/cycle = 0.11 cycles after the 5,640-cycle launch.
  const Gpu g = a100();
  const GraphPtr graph = add({4}, ElementType::fp32);
  const Cost c = cost_of(g, *graph, "add");
  EXPECT_EQ(c.cycles, 5641);
  EXPECT_EQ(c.bound, "launch");

  GraphBuilder b("view");
  const TensorId x = test::tensor(b, "x", {4, 4}, TensorRole::input, ElementType::fp32);
  const TensorId y = test::tensor(b, "y", {16}, TensorRole::activation, ElementType::fp32);
  ops::view(b, test::named("flatten"), x, y);
  const GraphPtr v = std::move(b).build();
  const Cost none = cost_of(g, *v, "flatten");
  EXPECT_EQ(none.cycles, 0);
  EXPECT_EQ(none.energy_pj, 0);
}

TEST(GpuModel, ConvolutionIsAnImplicitGemm) {
  // A 3x3 convolution, 64 -> 128 channels, on 8 images of 32 x 32 (pad 1): M = 8 x 32 x 32 = 8192 output pixels,
  // N = 128 output channels, K = 64 x 3 x 3 = 576. With 128x128 tiles: 64 tiles in one wave of 108 (59.3 %).
  GraphBuilder b("conv");
  const TensorId x = test::tensor(b, "x", {8, 64, 32, 32}, TensorRole::input, ElementType::bf16);
  const TensorId w = test::tensor(b, "w", {128, 64, 3, 3}, TensorRole::weight, ElementType::bf16);
  const TensorId y = test::tensor(b, "y", {8, 128, 32, 32}, TensorRole::activation, ElementType::bf16);
  Operator op = test::named("conv");
  op.kind = OpKind::conv;
  op.type = "Conv";
  ops::Conv2dSpec spec;
  spec.kernel = {3, 3};
  spec.pads = {1, 1, 1, 1};
  ops::conv2d(b, op, x, w, std::nullopt, y, spec);
  const GraphPtr graph = std::move(b).build();
  const Cost c = cost_of(a100({"128x128"}, {1}), *graph, "conv");
  EXPECT_NE(c.mapping.find("GEMM M=8192 N=128 K=576 batch=1"), std::string::npos) << c.mapping;
  EXPECT_DOUBLE_EQ(c.spatial_utilization, 64.0 / 108.0);
}

// FlashAttention (the gpt generator's attention_backend = "flash") names its GEMM in its attributes, as its operands
// do not show it: M = the queries of a key/value group (s x a/g = 256 x 4), N = the keys each meets (s/2 = 128 of
// the causal triangle), K = the head dim times its two products (64 x 2), batch = the groups (2). HBM: q and the
// output whole, k and v every other row (the triangle's keys spread over the sequence: all rows but the last).
TEST(GpuModel, FlashAttentionIsTheGemmItsAttributesName) {
  test::ScratchDir dir;
  const GraphPtr graph = flash_layer(dir, "num_query_groups = 2\n");
  const Cost c = cost_of(a100({"128x128"}, {1}), *graph, "layers.0.self_attention.core_attention.flash");
  EXPECT_NE(c.mapping.find("GEMM M=1024 N=128 K=128 batch=2"), std::string::npos) << c.mapping;
  EXPECT_EQ(c.offchip_read_bits, (256LL * 512 + 2 * 255 * 2 * 64) * 16);
  EXPECT_EQ(c.offchip_write_bits, 256LL * 512 * 16);
}

}  // namespace
}  // namespace monet
