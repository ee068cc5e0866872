// Gradients of data-movement operators: views of dY (slices, pads, reshapes, concatenations) and one pass
// over the forward's loop nest for resampling, gathers, scatters and tiling.
#include "generator.hpp"

namespace monet::plugins::autodiff {

const std::set<std::string> kPartialViews{"Split", "Slice"};  // gradients of these are disjoint pieces

// ------------------------------------------------------------------------------- data movement
/// Gradients of copies whose index map is data dependent or not affine (resampling, gathers, scatters,
/// tiling): one pass over the forward's loop nest (the output's elements) reading dY and the saved indices,
/// writing the input's gradient.
void Generator::data_movement(Instance& inst, const Operator& f, TensorId dy, const autodiff::GradientRule& rule) {
  const Operand& out = f.operands[0];
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    const Operand& x = f.operands[j];
    if (x.is_output() || !rg(x.tensor)) continue;
    Operator op = like(f, inst, "d" + std::to_string(j), f.type + ".grad", phase_for(x.tensor));
    op.kind = rule.form == GradientForm::sum ? OpKind::reduction : rule.ops > 0 ? OpKind::elementwise : OpKind::copy;
    op.ops_per_iteration = rule.ops;
    const TensorId g = grad_tensor(inst, x.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, x.access));
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    if (rule.reads & autodiff::kInput) op.keeps_alive.push_back(T(inst, x.tensor));  // reflection pads
    if (rule.reads & autodiff::kIndices) {
      for (std::size_t k = 1; k < f.operands.size(); ++k) {
        const Tensor& t = f_.tensor(f.operands[k].tensor);
        if (k != j && (t.dtype == ElementType::int64 || t.dtype == ElementType::int32)) {
          op.operands.push_back(operand(T(inst, f.operands[k].tensor), OperandSlot::I2, f.operands[k].access));
        }
      }
    }
    b_.add_operator(std::move(op));
    add_piece(x.tensor, g);
  }
}

// ------------------------------------------------------------------------------------------ views
void Generator::view(Instance& inst, const Operator& f, TensorId dy) {
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    const Operand& x = f.operands[j];
    if (x.is_output() || !rg(x.tensor)) continue;
    Operator op = like(f, inst, "dX" + (f.operands.size() > 2 ? std::to_string(j) : std::string()), f.type + ".grad",
                       phase_for(x.tensor));
    op.kind = OpKind::view;
    op.ops_per_iteration = 0;
    op.attributes["part"] = {static_cast<std::int64_t>(j - 1)};  // which input's gradient (Concat)
    const TensorId g = grad_tensor(inst, x.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, {}));
    op.operands.push_back(operand(dy, OperandSlot::I1, {}));
    b_.add_operator(std::move(op));
    add_piece(x.tensor, g, kPartialViews.contains(f.type));
  }
}

}  // namespace monet::plugins::autodiff
