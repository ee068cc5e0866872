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
/// data dependent (the table operand is indirect); without, the rows are 0..T-1 (positions).
MONET_API OperatorId embedding(GraphBuilder& b, Operator base, TensorId table, std::optional<TensorId> indices,
                               TensorId output);

/// Names of the axes of a rank-r activation used for elementwise dims: 4 → B K OY OX, 3 → B D K, 2 → D K, 1 → K.
MONET_API std::vector<std::string> axis_dim_names(std::size_t rank);

}  // namespace monet::ops
