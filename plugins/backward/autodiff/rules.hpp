#pragma once
// What the backward pass of each forward operator type reads from the forward pass — the tensors PyTorch's
// autograd saves for it (tools/autograd/derivatives.yaml, torch 1.13) — and what its gradient costs. The
// generator follows this table; tests check every rule against PyTorch's saved-tensor hooks on small modules.
#include <string_view>
#include <vector>

namespace monet::plugins::autodiff {

/// Forward tensors a gradient reads (bit flags).
enum Reads : unsigned {
  kNothing = 0,
  kInput = 1u << 0,       // the (first) input: GELU, SiLU, Clip, Log, ... conv/linear: for the weight gradient
  kOutput = 1u << 1,      // the result: ReLU, Sigmoid, Tanh, Exp, Sqrt, Softmax
  kOther = 1u << 2,       // each input's gradient reads the other operands: Mul, MatMul, Conv, Max
  kCondition = 1u << 3,   // Where: the boolean condition
  kMask = 1u << 4,        // Dropout: its mask (an output added to the forward operator)
  kIndices = 1u << 5,     // MaxPool argmax, embedding and gather indices
  kStatistics = 1u << 6,  // norms: per-channel / per-row / per-group mean and inverse std
  kWeight = 1u << 7,      // a parameter the gradient reads (conv dX, PReLU, norms' scale): not activation memory
};

/// How the gradient of a data-movement operator is formed.
enum class GradientForm {
  pointwise,  // an elementwise loop nest (a reduction where the input was broadcast)
  view,       // a view of dY (slices, pads, reshapes): no compute
  scatter,    // dY written back to the input's positions (resampling, gathers): `ops` per element of dY
  sum,        // dY summed over the repeats (Tile): `ops` per element of dY
  none,       // no gradient (comparisons, random numbers, indices)
  layer,      // a loop nest of its own (conv, matmul, norms, softmax, pooling, embedding): see autodiff.cpp
};

struct GradientRule {
  std::string_view type;
  unsigned reads;
  double ops;               // backward operations per element
  GradientForm form;
  std::string_view pytorch; // the autograd formula it follows
};

/// The rule of a forward operator type (nullptr: unknown, treated as reading its input).
const GradientRule* gradient_rule(std::string_view type);
/// Every rule, sorted by type.
const std::vector<GradientRule>& gradient_rules();

}  // namespace monet::plugins::autodiff
