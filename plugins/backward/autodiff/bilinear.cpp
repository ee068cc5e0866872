// Gradients of bilinear operators (gemm, matmul, einsum, conv dW): the forward loop nest with dY in place of
// one operand, and the bias gradient as a sum of dY. Conv dX is conv.cpp's.
#include "generator.hpp"

#include <algorithm>

namespace monet::plugins::autodiff {

/// Y = A · B over a loop nest: dA reads dY and B, dB reads dY and A, in the same loop nest; a bias sums dY.
void Generator::bilinear(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& out = f.operands[0];
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    const Operand& x = f.operands[j];
    if (x.is_output() || !rg(x.tensor)) continue;
    if (j >= 3) {
      bias_grad(inst, f, x, dy);
      continue;
    }
    // A transposed convolution's input gradient is an ordinary strided convolution of dY: the generic rule.
    const bool has_geometry = f.attributes.contains("strides") && f.attributes.contains("dilations") &&
                              f.attributes.contains("pads") && f.attributes.contains("kernel_shape") &&
                              !f.attributes.contains("transposed");
    if (f.kind == OpKind::conv && j == 1 && has_geometry) {
      conv_dx(inst, f, dy);
      continue;
    }
    const Operand& other = f.operands[j == 1 ? 2 : 1];
    const bool w = is_weight(x.tensor);
    Operator op = like(f, inst, w ? "dW" : (j == 1 ? "dX" : "dB"), f.type + (w ? ".dW" : (j == 1 ? ".dX" : ".dB")),
                       phase_for(x.tensor));
    const TensorId g = grad_tensor(inst, x.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, x.access));
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    op.operands.push_back(operand(T(inst, other.tensor), OperandSlot::I2, other.access));
    b_.add_operator(std::move(op));
    add_piece(x.tensor, g);
  }
}

/// d(bias) = Σ dY over every output dimension the bias does not index.
void Generator::bias_grad(Instance& inst, const Operator& f, const Operand& bias, TensorId dy) {
  const Operand& out = f.operands[0];
  std::vector<int> keep;  // forward dims that index the output
  for (const AffineExpr& e : out.access) {
    for (const auto& t : e.terms) {
      if (std::find(keep.begin(), keep.end(), t.dim) == keep.end()) keep.push_back(t.dim);
    }
  }
  std::sort(keep.begin(), keep.end());
  auto remap = [&](const std::vector<AffineExpr>& acc) {
    std::vector<AffineExpr> r = acc;
    for (AffineExpr& e : r) {
      for (auto& t : e.terms) t.dim = static_cast<int>(std::find(keep.begin(), keep.end(), t.dim) - keep.begin());
    }
    return r;
  };
  Operator op = like(f, inst, "dBias", f.type + ".dBias", phase_for(bias.tensor));
  op.kind = OpKind::reduction;
  op.dims.clear();
  for (int d : keep) op.dims.push_back(f.dims[static_cast<std::size_t>(d)]);
  const TensorId g = grad_tensor(inst, bias.tensor);
  op.operands.push_back(operand(g, OperandSlot::O, remap(bias.access)));
  op.operands.push_back(operand(dy, OperandSlot::I1, remap(out.access)));
  b_.add_operator(std::move(op));
  add_piece(bias.tensor, g);
}

}  // namespace monet::plugins::autodiff
