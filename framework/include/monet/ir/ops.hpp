#pragma once
// Constructors of the standard operators as loop nests with their access relations. Frontends parse a
// file and call these; they never write loop nests by hand, so every frontend agrees on dims and MACs.
// Tensors are NCHW for convolution and pooling and [..., rows, features] for matrix products.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet::ops {

/// An operand reading or writing tensor `t` through `access`, at the precision of the tensor's element type.
MONET_API Operand operand(const GraphBuilder& b, TensorId t, OperandSlot slot, std::vector<AffineExpr> access);

struct Conv2dSpec {
  std::array<std::int64_t, 2> kernel{1, 1};    // FY, FX
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 4> pads{0, 0, 0, 0};  // top, left, bottom, right
  std::int64_t groups = 1;
};

/// Output shape [N, out_channels, OY, OX] of a convolution of an NCHW input; throws UserError (with `where`)
/// when the window does not fit or channels do not divide into groups.
MONET_API Shape conv2d_output_shape(const Shape& input, std::int64_t out_channels, const Conv2dSpec& spec,
                                    const SourceLocation& where, const std::string& name);

/// O[b][g·K+k][oy][ox] += W[g·K+k][c][fy][fx] · I[b][g·C+c][s·oy+d·fy−p][s·ox+d·fx−p]  (+ bias[g·K+k]).
/// Loop dims B, (G), K, C, OY, OX, FY, FX; G only when groups > 1. Weight shape [K_total, C/G, FY, FX].
MONET_API OperatorId conv2d(GraphBuilder& b, Operator base, TensorId input, TensorId weight,
                            std::optional<TensorId> bias, TensorId output, const Conv2dSpec& spec);

/// An N-d convolution (1, 2 or 3 spatial axes: NCL, NCHW, NCDHW), plain or transposed.
struct ConvSpec {
  std::vector<std::int64_t> kernel;    // one entry per spatial axis
  std::vector<std::int64_t> stride;    // empty: 1
  std::vector<std::int64_t> dilation;  // empty: 1
  std::vector<std::int64_t> pads;      // the begin of every axis, then the end of every axis; empty: 0
  std::int64_t groups = 1;
  std::vector<std::int64_t> output_padding;  // transposed: extra rows at the end of each output axis
};
/// Names of the spatial loop dims of a window operator with `axes` spatial axes: prefix "O" -> OX / OY OX /
/// OZ OY OX (prefix "F": the kernel taps, "I": the input positions of a transposed convolution).
MONET_API std::vector<std::string> spatial_dim_names(std::size_t axes, char prefix);
MONET_API Shape conv_output_shape(const Shape& input, std::int64_t out_channels, const ConvSpec& spec,
                                  const SourceLocation& where, const std::string& name);
/// O[b][g·K+k][o..] += W[g·K+k][c][f..] · I[b][g·C+c][s·o + d·f − p ..] (+ bias). Loop dims B, (G), K, C, then
/// the output positions and the kernel taps per spatial axis (spatial_dim_names). conv2d is the 2-D case.
MONET_API OperatorId conv(GraphBuilder& b, Operator base, TensorId input, TensorId weight,
                          std::optional<TensorId> bias, TensorId output, const ConvSpec& spec);
/// Output shape of a transposed convolution: (in − 1)·s − p_begin − p_end + d·(F − 1) + output_padding + 1.
MONET_API Shape conv_transpose_output_shape(const Shape& input, std::int64_t out_channels, const ConvSpec& spec,
                                            const SourceLocation& where, const std::string& name);
/// Transposed convolution in scatter form, every input element meeting every tap (the MACs PyTorch counts):
/// O[b][g·K+k][s·i + d·f − p ..] += W[g·C+c][k][f..] · I[b][g·C+c][i..]. Weight [C_in, C_out/G, F..]. Loop dims
/// B, (G), K, C, the input positions (IZ IY IX) and the taps; attribute "transposed" = 1.
MONET_API OperatorId conv_transpose(GraphBuilder& b, Operator base, TensorId input, TensorId weight,
                                    std::optional<TensorId> bias, TensorId output, const ConvSpec& spec);

struct MatmulSpec {
  bool transpose_a = false;  // A is [..., C, D] instead of [..., D, C]
  bool transpose_b = false;  // B is [..., K, C] instead of [..., C, K] (PyTorch Linear weights are [K, C])
};
/// Output shape of A·B with numpy batch broadcasting; throws UserError on mismatched inner dims.
MONET_API Shape matmul_output_shape(const Shape& a, const Shape& b, const MatmulSpec& spec,
                                    const SourceLocation& where, const std::string& name);
/// Y[.., d, k] += A[.., d, c] · B[.., c, k] (+ bias[k]). Loop dims: batch dims (B, H, B2, ...), D, K, C.
/// `base.kind` chooses gemm (B is a parameter) or matmul (two activations).
MONET_API OperatorId matmul(GraphBuilder& b, Operator base, TensorId a, TensorId bm, std::optional<TensorId> bias,
                            TensorId output, const MatmulSpec& spec);

/// Numpy broadcasting of several shapes; throws UserError when they are incompatible.
MONET_API Shape broadcast_shapes(const std::vector<Shape>& shapes, const SourceLocation& where,
                                 const std::string& name);
/// Pointwise operator over the output's axes (dims named after the rank: B K OY OX / B D K / D K / ...);
/// inputs broadcast. `ops_per_element` arithmetic operations per output element.
MONET_API OperatorId elementwise(GraphBuilder& b, Operator base, const std::vector<TensorId>& inputs,
                                 TensorId output, double ops_per_element);

struct Pool2dSpec {
  std::array<std::int64_t, 2> kernel{1, 1};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 4> pads{0, 0, 0, 0};
  bool ceil_mode = false;
};
MONET_API Shape pool2d_output_shape(const Shape& input, const Pool2dSpec& spec, const SourceLocation& where,
                                    const std::string& name);
/// O[b][k][oy][ox] = max/avg over fy,fx of I[b][k][s·oy+d·fy−p][s·ox+d·fx−p]. Loop dims B K OY OX FY FX.
MONET_API OperatorId pool2d(GraphBuilder& b, Operator base, TensorId input, TensorId output, const Pool2dSpec& spec);

/// N-d pooling window (1, 2 or 3 spatial axes); Pool2dSpec is the 2-D case.
struct PoolSpec {
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> stride;    // empty: 1
  std::vector<std::int64_t> dilation;  // empty: 1
  std::vector<std::int64_t> pads;      // begins, then ends; empty: 0
  bool ceil_mode = false;
};
MONET_API Shape pool_output_shape(const Shape& input, const PoolSpec& spec, const SourceLocation& where,
                                  const std::string& name);
/// O[b][k][o..] = max/avg over f.. of I[b][k][s·o + d·f − p ..]. Loop dims B K, output positions, taps.
MONET_API OperatorId pool(GraphBuilder& b, Operator base, TensorId input, TensorId output, const PoolSpec& spec);

/// A reduction of x over `axes` (sum, mean, max, norms): loop dims over x's axes, the output reads index 0 on
/// reduced axes (kept as size 1, or dropped when the output's rank is lower). `ops_per_element` per input element.
MONET_API OperatorId reduce(GraphBuilder& b, Operator base, TensorId x, TensorId output,
                            const std::vector<std::size_t>& axes, double ops_per_element);
/// Padding (constant, reflect, edge) as a copy over the output's axes: output index o reads x[o − begin]
/// (clipped to x: the padded border reads nothing; the whole x when an axis is padded only at its end, which a
/// plain index cannot express). `begins` per axis may be negative (cropping).
MONET_API OperatorId pad(GraphBuilder& b, Operator base, TensorId x, TensorId output,
                         const std::vector<std::int64_t>& begins);
/// Data movement into a new tensor whose index map is not affine (a materialised reshape, resampling, tiling,
/// scatters, gathers): a loop over the output's elements reading each input whole; kind copy, or elementwise
/// with `ops_per_element` > 0 (interpolation).
MONET_API OperatorId copy(GraphBuilder& b, Operator base, const std::vector<TensorId>& inputs, TensorId output,
                          double ops_per_element = 0);

/// Einsum of one or two operands ("bhqd,bhkd->bhqk", "...ij,...jk->...ik"): one loop dim per letter, named as
/// a matrix product's (letters in both operands and the output: batch B, H, B2..; in the first operand and
/// the output: D, D2..; in the second and the output: K, K2..; summed: C, C2..). Two operands: a MAC loop
/// nest (base.kind gemm or matmul); one operand: a reduction. Throws UserError for a malformed equation or
/// operands whose letters disagree in size.
MONET_API Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& operands,
                                    const SourceLocation& where, const std::string& name);
MONET_API OperatorId einsum(GraphBuilder& b, Operator base, const std::string& equation,
                            const std::vector<TensorId>& inputs, TensorId output);

/// Group normalization of x ([N, C, ...]) with `groups` groups (instance norm: groups = C): statistics per
/// (sample, group), scale and bias per channel. Loop dims B, G, K (channels per group), then x's other axes.
MONET_API OperatorId group_norm(GraphBuilder& b, Operator base, TensorId x, std::optional<TensorId> scale,
                                std::optional<TensorId> bias, TensorId output, std::int64_t groups);

/// A view (reshape, flatten, squeeze, ...): the output aliases the input; no loop nest, no cost.
MONET_API OperatorId view(GraphBuilder& b, Operator base, TensorId input, TensorId output);

/// Arithmetic operations per element of the normalisation and softmax operators: statistics count one
/// operation per element per reduction pass. Batch norm in training: mean and variance (2) + normalise
/// (subtract, scale) + affine (multiply, add) = 6; in inference the per-channel affine map is folded: 2.
/// Layer norm always computes its statistics: 6. Softmax: max, subtract, exp, sum, divide = 5, +1 with a mask.
inline constexpr double kBatchNormTrainingOps = 6;
inline constexpr double kBatchNormInferenceOps = 2;
inline constexpr double kLayerNormOps = 6;
inline constexpr double kSoftmaxOps = 5;
inline constexpr double kGroupNormOps = 6;  // like layer norm: two statistics passes, normalise, affine

/// Batch normalization of x ([N, C, ...]) per channel C; scale, bias, mean, var are [C].
MONET_API OperatorId batch_norm(GraphBuilder& b, Operator base, TensorId x, TensorId scale, TensorId bias,
                                std::optional<TensorId> mean, std::optional<TensorId> var, TensorId output,
                                bool training);
/// Layer normalization of x over its axes from `axis` on; scale and bias have those axes' shape.
MONET_API OperatorId layer_norm(GraphBuilder& b, Operator base, TensorId x, std::optional<TensorId> scale,
                                std::optional<TensorId> bias, TensorId output, std::size_t axis);
/// Softmax of x along `axis`, with an optional mask (additive or boolean) broadcast to x.
MONET_API OperatorId softmax(GraphBuilder& b, Operator base, TensorId x, std::optional<TensorId> mask,
                             TensorId output, std::size_t axis);
/// Embedding lookup out[..., t, k] = table[index(..., t)][k] from a [V, K] table. With `indices` the rows are
/// data dependent (the table operand is indirect) unless `positions` says they are 0..T-1 (computed position
/// ids: the indices are still read, as autograd saves them); without indices, the rows are 0..T-1.
MONET_API OperatorId embedding(GraphBuilder& b, Operator base, TensorId table, std::optional<TensorId> indices,
                               TensorId output, bool positions = false);

/// EmbeddingBag in sum mode (PyTorch's nn.EmbeddingBag(mode="sum"), FBGEMM's table-batched lookups): out[b, k] =
/// sum over l of table[indices[b, l]][k], for a [V, K] table, [B, L] indices (exactly L lookups per bag) and a
/// [B, K] output; or, batched as FBGEMM batches tables in one buffer, [B, T, L] indices (T bags per sample) and a
/// [B, T, K] output. Loop dims B, (T), L (a reduction), K; the table operand is indirect, its axis 0 enumerating
/// the lookups (T·L·b + L·t + l). `offsets` ([B, 1], or [B, T] batched; int64: where each bag starts, as the
/// KeyedJaggedTensor's lengths give it) is read too, as FBGEMM's lookup reads and its backward keeps it.
MONET_API OperatorId embedding_bag(GraphBuilder& b, Operator base, TensorId table, TensorId indices,
                                   std::optional<TensorId> offsets, TensorId output);

/// Names of the axes of a rank-r activation used for elementwise dims: 4 → B K OY OX, 3 → B D K, 2 → D K, 1 → K.
MONET_API std::vector<std::string> axis_dim_names(std::size_t rank);

}  // namespace monet::ops
