// FlashAttention: the log-sum-exp its forward pass saves and its fused backward kernel (dq, dk, dv).
#include "generator.hpp"

namespace monet::plugins::autodiff {

void Generator::save_softmax_lse(Instance& inst, const Operator& fop, Operator& op, const std::string& base) {
  // The log-sum-exp of every query row (fp32), which its backward pass recomputes the probabilities from.
  // [batch, groups, queries per group, queries]: the operator's dims 0, 2, 3, 1 (the gpt generator's order).
  const Shape rows{fop.dims[0].size, fop.dims[2].size, fop.dims[3].size, fop.dims[1].size};
  const TensorId t = new_tensor(base + ":softmax_lse", rows, ElementType::fp32, TensorRole::activation);
  op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(0), AffineExpr::of_dim(2),
                                                    AffineExpr::of_dim(3), AffineExpr::of_dim(1)}));
  inst.extra[fop.id].push_back(t);
}

/// FlashAttention's backward kernel (FlashAttention-2's): from dO, q, k, v, the output and the log-sum-exp it
/// recomputes the scores and the probabilities, then dV, dP, dQ and dK: five products where the forward pass
/// has two (its `pass_dim`), over the same (query, key) pairs. One operator writes dq, dk and dv.
void Generator::flash_attention(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& out = f.operands[0];
  Operator op = like(f, inst, "dQKV", "FlashAttention.grad", Phase::backward_dx);
  const auto pass_dim = f.attributes.find("pass_dim");  // the loop dim that counts the kernel's products
  if (pass_dim == f.attributes.end() || pass_dim->second.size() != 1 || pass_dim->second[0] < 0 ||
      static_cast<std::size_t>(pass_dim->second[0]) >= f.dims.size()) {
    throw InternalError("autodiff: FlashAttention '" + f.name + "' has no pass_dim attribute");
  }
  const auto pass = static_cast<std::size_t>(pass_dim->second[0]);
  op.dims[pass].size = 5 * f.dims[pass].size / 2;
  op.attributes["recomputed_macs"] = {1, 5};  // the scores: not model FLOPs
  std::vector<std::pair<TensorId, TensorId>> pieces;  // forward input, its gradient
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    const Operand& x = f.operands[j];
    if (x.is_output() || !rg(x.tensor)) continue;
    const TensorId g = grad_tensor(inst, x.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, x.access));
    pieces.emplace_back(x.tensor, g);
  }
  if (pieces.empty()) return;
  op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    const Operand& x = f.operands[j];
    if (!x.is_output()) op.operands.push_back(operand(T(inst, x.tensor), x.slot, x.access));
  }
  op.operands.push_back(operand(T(inst, out.tensor), OperandSlot::I2, out.access));
  const Operator& fwd = b_.op(inst.op[static_cast<std::size_t>(f.id)]);
  for (const TensorId t : inst.extra.at(f.id)) {
    for (const Operand& o : fwd.operands) {
      if (o.tensor == t) op.operands.push_back(operand(t, OperandSlot::I2, o.access));
    }
  }
  b_.add_operator(std::move(op));
  for (const auto& [x, g] : pieces) add_piece(x, g);
}

}  // namespace monet::plugins::autodiff
