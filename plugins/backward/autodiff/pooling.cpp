// Pooling: max pooling's saved indices and its gradient scattered through them; average pooling's gradient
// spread over each window.
#include "generator.hpp"

namespace monet::plugins::autodiff {

/// Max pooling keeps the argmax of every window.
void Generator::save_pool_indices(Instance& inst, const Operator& fop, Operator& op, const std::string& base) {
  const TensorId t = new_tensor(base + ":indices", f_.tensor(fop.operands[0].tensor).shape, ElementType::int64,
                                TensorRole::index);
  op.operands.push_back(operand(t, OperandSlot::O, fop.operands[0].access));
  inst.extra[fop.id].push_back(t);
}

/// The tensor PyTorch's avg_pool node saves. With count_include_pad (PyTorch's default) the exporter writes
/// avg_pool(x, padding=p) as a zero Pad read by nothing but an unpadded AveragePool; autograd's one node keeps x,
/// which the operators reading x often keep anyway, not a padded copy.
TensorId Generator::unpadded_pool_input(const Operator& pool, TensorId fx) const {
  const Operator* pad = nullptr;
  for (const Operator& op : f_.operators()) {
    for (const Operand& o : op.operands) {
      if (o.tensor != fx) continue;
      if (o.is_output()) pad = &op;
      else if (op.id != pool.id) return fx;  // another reader: a pad of the model's own
    }
  }
  if (pad == nullptr || pad->type != "Pad" || pad->operands.size() != 2) return fx;
  return pad->operands[1].tensor;
}

void Generator::pooling(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& out = f.operands[0];
  const Operand& x = f.operands[1];
  if (!rg(x.tensor)) return;
  const TensorId g = grad_tensor(inst, x.tensor);
  if (f.type == "MaxPool" || f.type == "GlobalMaxPool") {
    // Scatter each output gradient to the argmax of its window: one add per output element.
    Operator op = like(f, inst, "dX", "MaxPool.grad", Phase::backward_dx);
    op.dims.clear();
    std::vector<int> map(f.dims.size(), -1);
    for (std::size_t d = 0; d < f.dims.size(); ++d) {
      if (f.dims[d].name.size() == 2 && f.dims[d].name[0] == 'F') continue;  // a window tap: FX, FY, FZ
      map[d] = static_cast<int>(op.dims.size());
      op.dims.push_back(f.dims[d]);
    }
    auto strip = [&](std::vector<AffineExpr> acc) {
      for (AffineExpr& e : acc) {
        std::vector<AffineExpr::Term> kept;
        for (auto t : e.terms) {
          if (map[static_cast<std::size_t>(t.dim)] < 0) continue;  // the window position: data dependent
          t.dim = map[static_cast<std::size_t>(t.dim)];
          kept.push_back(t);
        }
        e.terms = kept;
      }
      return acc;
    };
    op.ops_per_iteration = 1;
    op.operands.push_back(operand(g, OperandSlot::O, strip(x.access)));
    op.operands.push_back(operand(dy, OperandSlot::I1, strip(out.access)));
    op.operands.push_back(operand(inst.extra.at(f.id).at(0), OperandSlot::I2, strip(out.access)));
    op.keeps_alive = {T(inst, x.tensor)};  // PyTorch keeps the input too
    b_.add_operator(std::move(op));
  } else {
    // Average pooling: every input position of a window gets dy / window size (a scatter).
    Operator op = like(f, inst, "dX", f.type + ".grad", Phase::backward_dx);
    op.ops_per_iteration = 1;
    op.operands.push_back(operand(g, OperandSlot::O, x.access));
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    op.keeps_alive = {T(inst, unpadded_pool_input(f, x.tensor))};  // PyTorch keeps the input (for its shape)
    b_.add_operator(std::move(op));
  }
  add_piece(x.tensor, g);
}

}  // namespace monet::plugins::autodiff
