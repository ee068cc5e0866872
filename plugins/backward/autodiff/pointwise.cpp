// Gradients of elementwise operators and reductions: one pass per input (a reduction over the axes a broadcast
// input lacks), reading what the rule table says the operator saves; Dropout's saved mask.
#include "generator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace monet::plugins::autodiff {

/// Dropout keeps its mask.
void Generator::save_dropout_mask(Instance& inst, const Operator& fop, Operator& op, const std::string& base) {
  const TensorId t = new_tensor(base + ":mask", f_.tensor(fop.operands[0].tensor).shape, mask_type_,
                                TensorRole::activation);
  op.operands.push_back(operand(t, OperandSlot::O, fop.operands[0].access));
  inst.extra[fop.id].push_back(t);
}

void Generator::pointwise(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& out = f.operands[0];
  std::vector<std::size_t> inputs;
  for (std::size_t j = 1; j < f.operands.size(); ++j) {
    if (!f.operands[j].is_output()) inputs.push_back(j);
  }
  const std::string& type = f.type;
  auto emit = [&](std::size_t j, const std::vector<std::pair<TensorId, std::vector<AffineExpr>>>& reads,
                  double ops_per_element, const std::vector<TensorId>& keep = {}) {
    const Operand& x = f.operands[j];
    const bool broadcast = x.access != out.access;
    // A broadcast input's gradient sums dY over the axes it does not have; a reduction's input gradient
    // expands dY back over the reduced axes (elementwise over the input).
    const bool sums = !reads_every_dim(x.access, f.dims);
    // d(x) is dY itself: no operator (never for weights, whose gradient gets its own tensor).
    if (ops_per_element == 0 && !broadcast && reads.empty() && !is_weight(x.tensor) &&
        b_.tensor(dy).dtype == b_.tensor(T(inst, x.tensor)).dtype) {
      add_piece(x.tensor, dy);
      return;
    }
    Operator op = like(f, inst, "d" + std::to_string(j), type + ".grad", phase_for(x.tensor));
    op.kind = sums ? OpKind::reduction : OpKind::elementwise;
    op.ops_per_iteration = std::max(ops_per_element, 1.0);
    const TensorId g = grad_tensor(inst, x.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, x.access));
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    for (const auto& [t, acc] : reads) op.operands.push_back(operand(t, OperandSlot::I2, acc));
    op.keeps_alive = keep;
    b_.add_operator(std::move(op));
    add_piece(x.tensor, g);
  };
  auto fwd = [&](std::size_t j) {
    return std::make_pair(T(inst, f.operands[j].tensor), f.operands[j].access);
  };
  if (type == "GradSum" || type == "GradAccumulate") return;
  // Megatron's fused SwiGLU reads one tensor twice (the gate and the up half, [.., F] each at offsets 0 and F of
  // the last axis): one gradient kernel writes both halves from dY and the kept input, recomputing silu. Its loop
  // nest gets a dim of 2 for the half it writes, so that its output covers the whole gradient.
  if (type == "Swiglu" && inputs.size() == 2 && f.operands[1].tensor == f.operands[2].tensor) {
    const Operand& gate = f.operands[1];
    const Operand& up = f.operands[2];
    if (!rg(gate.tensor)) return;
    Operator op = like(f, inst, "dX", "Swiglu.grad", phase_for(gate.tensor));
    op.ops_per_iteration = gradient_rule(type)->ops / 2;  // per half written
    const int half = static_cast<int>(op.dims.size());
    op.dims.push_back(LoopDim{"C", 2});
    std::vector<AffineExpr> both = gate.access;
    both.back().terms.push_back(AffineExpr::Term{half, up.access.back().offset});
    const TensorId g = grad_tensor(inst, gate.tensor);
    op.operands.push_back(operand(g, OperandSlot::O, both));
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    op.operands.push_back(operand(T(inst, gate.tensor), OperandSlot::I2, gate.access));
    op.operands.push_back(operand(T(inst, gate.tensor), OperandSlot::I2, up.access));
    b_.add_operator(std::move(op));
    add_piece(gate.tensor, g);
    return;
  }
  // Several tensor inputs: what each input's gradient reads depends on its position.
  if (inputs.size() >= 2 && (type == "Add" || type == "Sub" || type == "Mul" || type == "Div" || type == "Max" ||
                             type == "Min" || type == "Where" || type == "Sum" || type == "Mean" ||
                             type == "Pow" || type == "PRelu")) {
    std::vector<std::pair<TensorId, std::vector<AffineExpr>>> all;
    for (std::size_t j : inputs) all.push_back(fwd(j));
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::size_t j = inputs[k];
      if (!rg(f.operands[j].tensor)) continue;
      std::vector<std::pair<TensorId, std::vector<AffineExpr>>> others = all;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
      if (type == "Add" || type == "Sum") emit(j, {}, 0);
      else if (type == "Mean") emit(j, {}, 1);
      else if (type == "Sub") emit(j, {}, k == 0 ? 0 : 1);
      else if (type == "Mul") emit(j, others, 1);
      else if (type == "Div") emit(j, k == 0 ? std::vector{fwd(inputs[1])} : all, k == 0 ? 1 : 3);
      else if (type == "Max" || type == "Min") emit(j, all, 2);
      else if (type == "Where" && k > 0) emit(j, {fwd(inputs[0])}, 1);
      else if (type == "Pow") emit(j, k == 0 ? all : std::vector{fwd(inputs[0]), std::make_pair(T(inst, out.tensor), out.access)}, 3);
      else if (type == "PRelu") emit(j, k == 0 ? all : std::vector{fwd(inputs[0])}, 2);
    }
    return;
  }
  // One tensor input (a scalar constant, if any, is part of the operation).
  const std::size_t j = inputs.at(0);
  if (!rg(f.operands[j].tensor)) return;
  if (type == "Add" || type == "Sub") return emit(j, {}, 0);
  if (type == "Mul" || type == "Div") return emit(j, {}, 1);  // by a scalar: nothing saved
  const auto* rule = gradient_rule(type);
  if (!rule) {
    if (warned_.insert(type).second) {
      spdlog::warn("autodiff: no gradient rule for '{}' (first at '{}'): assuming it saves its input and costs as "
                   "many operations as the forward", type, f.name);
    }
    return emit(j, {fwd(j)}, f.ops_per_iteration);
  }
  std::vector<std::pair<TensorId, std::vector<AffineExpr>>> reads;
  if (rule->reads & autodiff::kInput) reads.push_back(fwd(j));
  if (rule->reads & autodiff::kOutput) reads.emplace_back(T(inst, out.tensor), out.access);
  if (rule->reads & autodiff::kMask) reads.emplace_back(inst.extra.at(f.id).at(0), out.access);
  emit(j, reads, rule->ops);
}

/// Whether an access relation uses every loop dim of size > 1 (the operand is not broadcast over any).
bool Generator::reads_every_dim(const std::vector<AffineExpr>& access, const std::vector<LoopDim>& dims) {
  std::vector<bool> used(dims.size(), false);
  for (const AffineExpr& e : access) {
    for (const auto& t : e.terms) used[static_cast<std::size_t>(t.dim)] = true;
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!used[d] && dims[d].size > 1) return false;
  }
  return true;
}

}  // namespace monet::plugins::autodiff
