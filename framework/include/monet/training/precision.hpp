#pragma once
// Precision per tensor class: the element type of activations, weights, gradients, weight gradients,
// optimizer states, master weights and partial sums — from a preset or set one by one in [precision].
#include <optional>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/util/export.hpp"

namespace monet {

class TableReader;  // monet/config/toml_reader.hpp: kernel-side, kept out of what plugins include

/// [precision.group.NAME]: per-layer quantization — the operators it names (globs over forward operator names,
/// which are module paths for PyTorch exports and generators) store their weights and produced activations at its
/// types; a search gene may vary them (precision.group.NAME.weight).
struct PrecisionGroup {
  std::string name;
  std::vector<std::string> operators;
  std::optional<ElementType> weight;
  std::optional<ElementType> activation;
  SourceLocation where;            // the group's table
  SourceLocation operators_where;  // its operators key (a glob that matches nothing is reported here)
};

struct MONET_API Precision {
  std::string preset = "fp32";
  ElementType activation = ElementType::fp32;
  ElementType weight = ElementType::fp32;
  ElementType gradient = ElementType::fp32;
  ElementType weight_gradient = ElementType::fp32;
  ElementType optimizer_state = ElementType::fp32;
  ElementType master_weight = ElementType::fp32;
  ElementType partial_sum = ElementType::fp32;
  /// Dropout masks autograd keeps: PyTorch on GPUs saves booleans (1 B per element, the default); on CPUs a
  /// mask of the activation's type (4 B in fp32).
  ElementType dropout_mask = ElementType::boolean;
  bool loss_scaling = false;  // scale the loss, unscale and check the gradients (fp16 training)
  /// The datatype the GEMMs of linear layers multiply in when it is narrower than their tensors' (Transformer
  /// Engine's FP8 training: fp8); none = the tensors' own. See apply_precision.
  std::optional<ElementType> weight_matmul;
  std::vector<PrecisionGroup> groups;  // per-layer types, applied after the classes' (in order; a later group wins)

  /// Master weights exist when they are wider than the working weights.
  [[nodiscard]] bool has_master_weights() const { return bits_of(master_weight) > bits_of(weight); }
  /// fp32 (everything 32-bit), mixed_bf16 (bf16 activations/weights/gradients; fp32 master weights, states,
  /// partial sums), fp8_hybrid (mixed_bf16 whose linear layers multiply in fp8: Transformer Engine's HYBRID
  /// format, E4M3 forward and E5M2 backward), int8_stream (int8 activations and weights, 16-bit partial sums:
  /// Stream's and MONET's).
  static std::optional<Precision> preset_named(const std::string& name);
  static std::vector<std::string> preset_names();
};

/// Reads [precision]: `preset` then per-class overrides given as element types ("bf16") or bits (16).
MONET_API Precision read_precision(TableReader& table);
/// The TOML text of a precision (for resolved.toml).
MONET_API std::string precision_toml(const Precision& p);

/// Sets the element type of every floating-point tensor by its role (integer and boolean tensors keep theirs)
/// and every operand's precision accordingly; outputs of conv/gemm/matmul accumulate in `partial_sum`.
/// With `weight_matmul`, every MAC-kind operator of a linear layer -- one that reads a weight (forward, input
/// gradient, recomputation) or writes a weight gradient -- multiplies in it (attribute `matmul_type`, read by
/// Operator::matmul_type) and reads its inputs at its width (Transformer Engine casts them in the producing
/// kernel, and the weights once per step); a tensor that only such operators read is stored in it (what Transformer
/// Engine saves for the backward pass). Operators whose attribute `keeps_working_precision` is set, or whose
/// forward operator's is, are left alone (Megatron-LM's output layer is not a Transformer Engine module).
MONET_API GraphPtr apply_precision(const Graph& graph, const Precision& precision);

}  // namespace monet
