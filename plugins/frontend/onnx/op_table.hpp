#pragma once
// What the onnx frontend does with each ONNX operator type: the single table behind the converter's dispatch,
// its error messages and the operator table of docs/workloads.md.
#include <string>
#include <string_view>
#include <vector>

namespace monet::onnx_frontend {

enum class Treatment {
  loop_nest,    // its own loop nest with exact MACs or window/statistics work (conv, matmul, norms, pooling)
  elementwise,  // one pass over the output's elements, `ops` operations each
  reduction,    // one pass over the input's elements, `ops` operations each
  copy,         // data movement into a new tensor: bytes, no arithmetic
  view,         // aliases its input: no compute, no traffic
  folded,       // computed at import from constants (shape subgraphs, masks); an error on activations
  unsupported,  // stops the import naming the node and the reason
};
const char* treatment_name(Treatment t);

struct OpRule {
  std::string_view type;
  Treatment treatment;
  double ops;              // arithmetic operations per element (elementwise: output, reduction: input)
  std::string_view note;   // how it is costed, or why it is unsupported
};

/// Every ONNX operator type the frontend knows, sorted by type.
const std::vector<OpRule>& op_rules();
/// The rule of a type; nullptr for types the frontend does not know.
const OpRule* op_rule(std::string_view type);
/// Ops whose result is boolean.
bool is_boolean_op(std::string_view type);

/// Arithmetic operations per element of the semantic operators recognised from several nodes (patterns.cpp).
inline constexpr double kGeluOps = 8;       // erf formula: divide, erf (4, a polynomial), add, multiply, multiply
inline constexpr double kGeluTanhOps = 9;   // x·(1 + tanh(√(2/π)(x + 0.044715x³)))/2
inline constexpr double kSiluOps = 5;       // sigmoid (4) and a multiply
inline constexpr double kMishOps = 9;       // softplus (3), tanh (5), multiply
inline constexpr double kRsqrtOps = 2;      // square root and reciprocal

}  // namespace monet::onnx_frontend
