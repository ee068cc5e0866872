// Gradients of softmax and log-softmax: a row reduction, then an elementwise pass over the saved output.
#include "generator.hpp"

namespace monet::plugins::autodiff {

/// dx = y ⊙ (dy − Σ_axis dy ⊙ y): a row reduction, then an elementwise pass; both read the saved output.
void Generator::softmax(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& out = f.operands[0];
  const Operand& x = f.operands[1];
  if (!rg(x.tensor)) return;
  const std::size_t axis = static_cast<std::size_t>(f.attributes.at("axis").at(0));
  const TensorId y = T(inst, out.tensor);
  Shape row_shape = b_.tensor(y).shape;
  row_shape[axis] = 1;
  std::vector<AffineExpr> row_access = out.access;
  row_access[axis] = AffineExpr::constant(0);
  const TensorId dot = new_tensor("d(" + b_.tensor(T(inst, x.tensor)).name + "):rowdot", row_shape,
                                  b_.tensor(dy).dtype, TensorRole::gradient);
  // Softmax: Σ dy·y, then y(dy − Σ); log-softmax: Σ dy, then dy − exp(y)·Σ.
  const bool log = f.type == "LogSoftmax";
  Operator red = like(f, inst, "dRowSum", f.type + ".grad.reduce", Phase::backward_dx);
  red.kind = OpKind::reduction;
  red.ops_per_iteration = log ? 1 : 2;
  red.operands.push_back(operand(dot, OperandSlot::O, row_access));
  red.operands.push_back(operand(dy, OperandSlot::I1, out.access));
  if (!log) red.operands.push_back(operand(y, OperandSlot::I2, out.access));
  b_.add_operator(std::move(red));
  Operator ew = like(f, inst, "dX", f.type + ".grad", Phase::backward_dx);
  ew.kind = OpKind::elementwise;
  ew.ops_per_iteration = log ? 3 : 2;
  const TensorId g = grad_tensor(inst, x.tensor);
  ew.operands.push_back(operand(g, OperandSlot::O, x.access));
  ew.operands.push_back(operand(dy, OperandSlot::I1, out.access));
  ew.operands.push_back(operand(y, OperandSlot::I2, out.access));
  ew.operands.push_back(operand(dot, OperandSlot::I2, row_access));
  // A boolean mask (masked_fill in PyTorch) is saved by autograd although the softmax gradient needs no mask.
  auto mask = f.attributes.find("mask");
  if (mask != f.attributes.end() && !mask->second.empty() && mask->second[0] == 1 && f.operands.size() > 2) {
    ew.keeps_alive.push_back(T(inst, f.operands[2].tensor));
  }
  b_.add_operator(std::move(ew));
  add_piece(x.tensor, g);
}

}  // namespace monet::plugins::autodiff
