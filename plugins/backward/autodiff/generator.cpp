// The walk over the forward graph: one instance of it per micro-batch, the tensors autograd saves, which
// tensors require a gradient, the backward pass in reverse operator order (gradient pieces summed at fan-outs,
// each operator's rule applied) and the weight gradients accumulated over micro-batches.
#include "generator.hpp"

#include <algorithm>
#include <numeric>

#include "monet/training/precision.hpp"

namespace monet::plugins::autodiff {

Generator::Generator(const Graph& forward, const TrainingSettings& settings, ClassAxis class_axis)
    : f_(forward), s_(settings), b_(forward), class_axis_(class_axis),
      mask_type_(settings.precision ? settings.precision->dropout_mask : Precision{}.dropout_mask) {}

GraphPtr Generator::run() {
  for (const Operator& op : f_.operators()) {
    if (op.phase != Phase::forward) {
      throw UserError(op.origin, "autodiff: the workload already contains non-forward operator '" + op.name + "'");
    }
  }
  const TensorId logits = find_logits();
  // Gradient accumulation: each micro-batch's weight gradients are added into the accumulator as its backward
  // pass ends (PyTorch adds into .grad as backward produces them), so one micro-batch's gradients live at a time
  // beside the accumulator, which lives from the first micro-batch to the optimizer.
  std::map<TensorId, TensorId> accumulator;  // trainable weight -> its gradient so far
  for (std::int64_t mb = 0; mb < s_.micro_batches; ++mb) {
    Instance inst = mb == 0 ? identity() : copy_forward("@" + std::to_string(mb + 1));
    augment(inst);
    compute_requires_grad(inst);
    const TensorId dlogits = append_loss(inst, logits);
    backward(inst, logits, dlogits);
    for (const Tensor& t : f_.tensors()) {
      if (!t.is_trainable()) continue;
      auto it = grads_.find(t.id);  // weights are shared by all micro-batches: keyed by forward id
      if (it == grads_.end() || it->second.empty()) continue;
      const TensorId g = combine(t.id, it->second, true, inst);
      auto acc = accumulator.find(t.id);
      if (acc == accumulator.end()) {
        accumulator.emplace(t.id, g);
        continue;
      }
      const TensorId next = new_tensor("grad(" + t.name + ")#acc" + std::to_string(mb), t.shape,
                                       b_.tensor(g).dtype, TensorRole::weight_gradient);
      b_.tensor(next).in_place_of = acc->second;  // .grad += g: the accumulator's storage
      Operator op = make_op("accumulate(" + t.name + ")#" + std::to_string(mb), OpKind::elementwise,
                            "GradAccumulate", Phase::backward_dw, kNone);
      ops::elementwise(b_, std::move(op), {acc->second, g}, next, 1);
      acc->second = next;
    }
    grads_.clear();
  }
  for (const auto& [w, g] : accumulator) b_.tensor(g).gradient_of = w;
  return std::move(b_).build();
}

// ------------------------------------------------------------------------------------------- helpers
std::string Generator::unique_tensor_name(const std::string& base) {
  std::string name = base;
  for (int k = 2; b_.find_tensor(name) != kNone; ++k) name = base + "#" + std::to_string(k);
  return name;
}
std::string Generator::unique_op_name(const std::string& base) {
  std::string name = base;
  for (int k = 2; b_.has_operator(name); ++k) name = base + "#" + std::to_string(k);
  return name;
}
TensorId Generator::new_tensor(const std::string& name, Shape shape, ElementType dtype, TensorRole role) {
  Tensor t;
  t.name = unique_tensor_name(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.role = role;
  return b_.add_tensor(std::move(t));
}
Operator Generator::make_op(const std::string& name, OpKind kind, std::string type, Phase phase, OperatorId from) {
  Operator op;
  op.name = unique_op_name(name);
  op.kind = kind;
  op.type = std::move(type);
  op.phase = phase;
  op.derived_from = from;
  return op;
}
TensorId Generator::grad_tensor(const Instance& inst, TensorId fx) {
  const Tensor& x = b_.tensor(inst.tensor[static_cast<std::size_t>(fx)]);
  const bool weight = f_.tensor(fx).role == TensorRole::weight;
  return new_tensor((weight ? "grad(" : "d(") + x.name + ")", x.shape, x.dtype,
                    weight ? TensorRole::weight_gradient : TensorRole::gradient);
}
Operator Generator::like(const Operator& f, const Instance& inst, const std::string& suffix, std::string type,
                         Phase phase) {
  Operator op = make_op(b_.op(inst.op[static_cast<std::size_t>(f.id)]).name + "/" + suffix, f.kind,
                        std::move(type), phase, inst.op[static_cast<std::size_t>(f.id)]);
  op.dims = f.dims;
  op.attributes = f.attributes;
  return op;
}

// ------------------------------------------------------------------------------------------ instances
Instance Generator::identity() const {
  Instance inst;
  inst.tensor.resize(f_.tensors().size());
  std::iota(inst.tensor.begin(), inst.tensor.end(), 0);
  inst.op.resize(f_.operators().size());
  std::iota(inst.op.begin(), inst.op.end(), 0);
  return inst;
}

/// Another micro-batch: fresh inputs and activations, the same weights and buffers.
Instance Generator::copy_forward(const std::string& suffix) {
  Instance inst;
  inst.suffix = suffix;
  inst.tensor.resize(f_.tensors().size());
  for (const Tensor& t : f_.tensors()) {
    if (t.role == TensorRole::weight || t.role == TensorRole::buffer) {
      inst.tensor[static_cast<std::size_t>(t.id)] = t.id;
      continue;
    }
    Tensor copy = t;
    copy.name = t.name + suffix;
    inst.tensor[static_cast<std::size_t>(t.id)] = b_.add_tensor(std::move(copy));
  }
  for (const Operator& fop : f_.operators()) {
    Operator op = fop;
    op.name = unique_op_name(fop.name + suffix);
    for (Operand& o : op.operands) o.tensor = inst.tensor[static_cast<std::size_t>(o.tensor)];
    inst.op.push_back(b_.add_operator(std::move(op)));
  }
  return inst;
}

// ------------------------------------------------------------------------- forward augmentation
/// Adds the tensors autograd keeps that the forward graph does not name: batch/layer-norm statistics,
/// max-pooling indices, dropout masks.
void Generator::augment(Instance& inst) {
  for (const Operator& fop : f_.operators()) {
    Operator& op = b_.op(inst.op[static_cast<std::size_t>(fop.id)]);
    const std::string base = b_.tensor(op.operands[0].tensor).name;
    if (fop.type == "FlashAttention") {
      save_softmax_lse(inst, fop, op, base);
    } else if (fop.kind == OpKind::norm) {
      save_norm_statistics(inst, fop, op, base);
    } else if (fop.kind == OpKind::pooling && (fop.type == "MaxPool" || fop.type == "GlobalMaxPool")) {
      save_pool_indices(inst, fop, op, base);
    } else if (fop.kind == OpKind::elementwise && fop.type == "Dropout") {
      save_dropout_mask(inst, fop, op, base);
    }
  }
}

// ------------------------------------------------------------------------------------ requires grad
void Generator::compute_requires_grad(const Instance& /*inst*/) {
  rg_.assign(f_.tensors().size(), false);
  for (const Tensor& t : f_.tensors()) rg_[static_cast<std::size_t>(t.id)] = t.is_trainable();
  for (const Operator& op : f_.operators()) {
    bool any = false;
    for (const Operand& o : op.operands) {
      if (!o.is_output() && rg_[static_cast<std::size_t>(o.tensor)]) any = true;
    }
    if (const auto* rule = gradient_rule(op.type); rule && rule->form == GradientForm::none) any = false;
    for (const Operand& o : op.operands) {
      if (!o.is_output()) continue;
      const ElementType dt = f_.tensor(o.tensor).dtype;
      const bool floating = dt == ElementType::fp32 || dt == ElementType::fp16 || dt == ElementType::bf16 ||
                            dt == ElementType::fp64 || dt == ElementType::fp8 || dt == ElementType::int8 ||
                            dt == ElementType::int16 || dt == ElementType::int4;  // quantised activations too
      if (any && floating) rg_[static_cast<std::size_t>(o.tensor)] = true;
    }
  }
}

// ------------------------------------------------------------------------------------------ backward
void Generator::backward(Instance& inst, TensorId flogits, TensorId dlogits) {
  add_piece(flogits, dlogits);
  for (auto it = f_.operators().rbegin(); it != f_.operators().rend(); ++it) {
    const Operator& f = *it;
    // The gradient of the operator's (first) output.
    TensorId fy = kNone;
    for (const Operand& o : f.operands) {
      if (o.is_output()) {
        fy = o.tensor;
        break;
      }
    }
    auto g = grads_.find(fy);
    if (fy == kNone || g == grads_.end() || g->second.empty()) continue;
    const TensorId dy = combine(fy, g->second, false, inst);
    grads_.erase(g);
    bool any_input = false;
    for (const Operand& o : f.operands) any_input |= !o.is_output() && rg(o.tensor);
    if (!any_input) continue;
    apply_rule(inst, f, dy);
  }
}

/// Sums (or, for disjoint parts, joins) the gradient pieces of a forward tensor.
TensorId Generator::combine(TensorId fx, std::vector<Piece> pieces, bool final_weight, const Instance& inst) {
  std::vector<TensorId> disjoint;
  std::vector<TensorId> summed;
  for (const Piece& p : pieces) (p.disjoint ? disjoint : summed).push_back(p.tensor);
  const std::string x_name = b_.tensor(inst.tensor[static_cast<std::size_t>(fx)]).name;  // a copy: new tensors move the table
  const Phase phase = phase_for(fx);
  if (disjoint.size() == 1) {
    summed.push_back(disjoint[0]);
  } else if (disjoint.size() > 1) {
    const TensorId joined = grad_tensor(inst, fx);
    Operator op = make_op("grad_join(" + x_name + ")", OpKind::view, "GradJoin", phase, kNone);
    op.ops_per_iteration = 0;
    op.operands.push_back(operand(joined, OperandSlot::O, {}));
    for (TensorId d : disjoint) op.operands.push_back(operand(d, OperandSlot::I1, {}));
    b_.add_operator(std::move(op));
    summed.push_back(joined);
  }
  if (summed.size() == 1) return summed[0];
  // Fan-out: the gradients of every consumer add up.
  const TensorId total = grad_tensor(inst, fx);
  Operator op = make_op("grad_sum(" + x_name + ")", OpKind::elementwise, "GradSum", phase, kNone);
  ops::elementwise(b_, std::move(op), summed, total, static_cast<double>(summed.size() - 1));
  (void)final_weight;
  return total;
}

void Generator::apply_rule(Instance& inst, const Operator& f, TensorId dy) {
  const auto* rule = gradient_rule(f.type);
  if (rule && rule->form == GradientForm::none) return;
  if (rule && (rule->form == GradientForm::scatter || rule->form == GradientForm::sum)) {
    return data_movement(inst, f, dy, *rule);
  }
  if (f.type == "FlashAttention") return flash_attention(inst, f, dy);
  switch (f.kind) {
    case OpKind::conv: case OpKind::gemm: case OpKind::matmul: return bilinear(inst, f, dy);
    case OpKind::elementwise: case OpKind::reduction: return pointwise(inst, f, dy);
    case OpKind::softmax: return softmax(inst, f, dy);
    case OpKind::norm: return norm(inst, f, dy);
    case OpKind::pooling: return pooling(inst, f, dy);
    case OpKind::embedding: return embedding(inst, f, dy);
    case OpKind::view: case OpKind::copy: return view(inst, f, dy);
    default:
      throw UserError(f.origin, "autodiff: no gradient rule for operator '" + f.name + "' of kind " +
                                    to_string(f.kind) + " (type " + f.type + ")");
  }
}

}  // namespace monet::plugins::autodiff
