#pragma once
// Enumerations of the IR with their spellings in user files. Every enum has to_string / parse_* pairs;
// parse_* returns nullopt for an unknown spelling and all_*_names() lists the valid ones for messages.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

using TensorId = std::int32_t;
using OperatorId = std::int32_t;
inline constexpr std::int32_t kNone = -1;

/// Storage element type of a tensor.
enum class ElementType : std::uint8_t { fp64, fp32, fp16, bf16, fp8, int64, int32, int16, int8, int4, uint8, boolean };
MONET_API int bits_of(ElementType t);
MONET_API std::string to_string(ElementType t);
MONET_API std::optional<ElementType> parse_element_type(std::string_view s);
MONET_API std::vector<std::string> all_element_type_names();

/// What a tensor is for. Drives memory accounting and, in training graphs, lifetimes.
enum class TensorRole : std::uint8_t {
  input,            // data fed to the network (images, token ids)
  label,            // targets of the loss
  activation,       // produced by a forward operator
  weight,           // trainable parameter
  buffer,           // non-trainable state or constant (BN running stats, masks, folded constants)
  gradient,         // gradient of an activation
  weight_gradient,  // gradient of a parameter
  optimizer_state,  // momentum, Adam moments, ...
  master_weight,    // high-precision copy of a parameter (mixed precision)
  index,            // integer indices saved for backward (max-pool argmax, embedding ids)
  loss,             // the scalar loss
};
MONET_API std::string to_string(TensorRole r);
MONET_API std::optional<TensorRole> parse_tensor_role(std::string_view s);
MONET_API std::vector<std::string> all_tensor_role_names();

/// How a table whose gradient is row-sparse (an EmbeddingBag with `sparse`) is updated: FBGEMM's EmbOptimType,
/// applied to the looked-up rows in the backward pass. The workload chooses it (the dlrm generator's
/// embedding_optimizer), not the optimizer of the dense parameters.
enum class SparseUpdate : std::uint8_t { rowwise_adagrad, adagrad, sgd };
MONET_API std::string to_string(SparseUpdate u);  // "rowwise_adagrad", "adagrad", "sgd"
MONET_API std::optional<SparseUpdate> parse_sparse_update(std::string_view s);
MONET_API std::vector<std::string> all_sparse_update_names();

/// Operator kinds. Cores declare which kinds they run; cost models may treat kinds differently.
enum class OpKind : std::uint8_t {
  conv,         // convolution (incl. grouped / depthwise / transposed)
  gemm,         // matrix product with a parameter operand (linear layer)
  matmul,       // matrix product of two activations (attention)
  elementwise,  // pointwise arithmetic (activation functions, residual add, optimizer updates)
  pooling,      // max / average pooling windows
  reduction,    // sums, means, norms over dims
  softmax,      // softmax / log-softmax (a reduction then pointwise work)
  norm,         // batch / layer normalization
  embedding,    // table lookup (gather) or its scatter-add gradient
  loss,         // loss function
  view,         // reshape / transpose / slice ... that aliases its input: no compute, no traffic
  copy,         // pure data movement (concat, materialised transpose): traffic, no arithmetic
};
MONET_API std::string to_string(OpKind k);
MONET_API std::optional<OpKind> parse_op_kind(std::string_view s);
MONET_API std::vector<std::string> all_op_kind_names();
/// Kinds whose loop iterations are multiply-accumulates (counted as MACs).
MONET_API bool is_mac_kind(OpKind k);

/// Which part of a training step an operator belongs to.
enum class Phase : std::uint8_t { forward, loss, backward_dx, backward_dw, optimizer, recompute };
MONET_API std::string to_string(Phase p);
MONET_API std::optional<Phase> parse_phase(std::string_view s);

/// The memory operand an operand occupies on a core (ZigZag's convention): I1 first input / activations,
/// I2 second input / weights, O outputs and partial sums.
enum class OperandSlot : std::uint8_t { I1 = 0, I2 = 1, O = 2 };
inline constexpr int kSlotCount = 3;
MONET_API std::string to_string(OperandSlot s);
MONET_API std::optional<OperandSlot> parse_operand_slot(std::string_view s);

}  // namespace monet
