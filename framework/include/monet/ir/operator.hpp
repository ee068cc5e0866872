#pragma once
// An operator is a perfectly nested loop over named dimensions with one statement. Its operands say which
// tensor they touch, with which access relation per tensor axis, in which memory slot and at which precision.
// The same type describes forward, backward and optimizer operators, and tiles of them (a tile is the
// operator plus a sub-range per loop dimension).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "monet/ir/affine.hpp"
#include "monet/ir/tensor.hpp"

namespace monet {

struct LoopDim {
  std::string name;  // B, K, C, OY, OX, FY, FX, D, H, ...
  std::int64_t size = 1;
  bool operator==(const LoopDim&) const = default;
};

struct Operand {
  TensorId tensor = kNone;
  OperandSlot slot = OperandSlot::I1;
  /// One expression per tensor axis. Empty = the operand touches the whole tensor without an affine
  /// relation (views such as reshape, whose index map is not affine).
  std::vector<AffineExpr> access;
  int precision_bits = 0;     // bits per element as read or written by the arithmetic
  int partial_sum_bits = 0;   // outputs: bits of partial sums while the reduction runs (0 = precision_bits)
  /// Gathered operand (embedding tables): the index along axis 0 is data dependent. access[0] enumerates the
  /// lookups instead, so regions have the right size (one row per lookup) though not the rows' identity.
  bool indirect = false;

  [[nodiscard]] bool is_output() const { return slot == OperandSlot::O; }
  [[nodiscard]] int accumulation_bits() const { return partial_sum_bits > 0 ? partial_sum_bits : precision_bits; }
};

struct Operator {
  OperatorId id = kNone;
  std::string name;                 // unique in the graph; for imported graphs the original node name
  OpKind kind = OpKind::elementwise;
  std::string type;                 // what it computes: "Conv", "Relu", "Add", "MaxPool", ...
  Phase phase = Phase::forward;
  std::vector<LoopDim> dims;
  std::vector<Operand> operands;
  double ops_per_iteration = 1.0;   // arithmetic operations per loop iteration (a MAC counts as one)
  OperatorId derived_from = kNone;  // backward / optimizer / recompute operators: the forward operator
  std::map<std::string, std::vector<std::int64_t>> attributes;  // stride, pads, groups, ... as given
  SourceLocation origin;            // where the user defined it
  std::vector<std::string> source_nodes;  // imported graphs: every original node this operator stands for
  /// The network module it belongs to, dotted ("block1.conv"), when the workload says so (TOML `module`);
  /// empty: derived from the name (PyTorch's ONNX node names are module paths). See training/modules.hpp.
  std::string module;
  /// Tensors this operator needs to exist without reading their data (autograd keeps them, e.g. the input of
  /// average pooling): they count as saved and live until this operator has run.
  std::vector<TensorId> keeps_alive;
  /// Operators that must run before this one although no tensor connects them (an imported layer list whose
  /// layers read separately stored, halo-padded copies of their producers' outputs).
  std::vector<OperatorId> after;

  /// Product of all loop sizes.
  [[nodiscard]] MONET_API std::int64_t iterations() const;
  /// Multiply-accumulates: iterations of conv/gemm/matmul operators, 0 for other kinds.
  [[nodiscard]] MONET_API std::int64_t macs() const;
  /// The MACs that redo forward work, which model FLOPs (MFU) leave out: all of a recompute operator's, and of a
  /// kernel that recomputes part of its forward operator inside itself (FlashAttention's backward recomputes the
  /// scores: 1 of its 5 products) the share its attribute `recomputed_macs` = {numerator, denominator} gives.
  [[nodiscard]] MONET_API std::int64_t recomputed_macs() const;
  /// The datatype its multiplier runs in when the precision pass narrowed it below its tensors' (attribute
  /// `matmul_type`: FP8 linear layers); none = its first input's.
  [[nodiscard]] MONET_API std::optional<ElementType> matmul_type() const;
  /// Arithmetic operations of non-MAC kinds: iterations × ops_per_iteration (0 for views and MAC kinds).
  [[nodiscard]] MONET_API double vector_ops() const;
  [[nodiscard]] MONET_API int dim_index(std::string_view name) const;  // -1 when absent
  [[nodiscard]] MONET_API std::vector<Range> full_ranges() const;
  [[nodiscard]] std::vector<std::string> dim_names() const {
    std::vector<std::string> n;
    for (const auto& d : dims) n.push_back(d.name);
    return n;
  }
  /// Box of tensor indices the operand touches for the given loop ranges, clipped to the tensor's shape.
  [[nodiscard]] MONET_API std::vector<Range> operand_region(std::size_t operand, std::span<const Range> loop_ranges,
                                                            const Tensor& tensor) const;
  /// Loop dims that index no output operand (the reduction dims).
  [[nodiscard]] MONET_API std::vector<int> reduction_dims() const;
  [[nodiscard]] bool is_view() const { return kind == OpKind::view; }
};

MONET_API std::int64_t region_elements(std::span<const Range> region);

}  // namespace monet
