// The loss appended to the forward pass: cross-entropy (LogSoftmax + NLL) or binary cross-entropy on the
// network's one output, and the gradient of the logits it starts the backward pass from.
#include "generator.hpp"

#include "monet/util/strings.hpp"

namespace monet::plugins::autodiff {

TensorId Generator::find_logits() const {
  std::vector<TensorId> candidates;
  for (TensorId t : f_.outputs()) {
    const Tensor& x = f_.tensor(t);
    if (x.role == TensorRole::activation && x.dtype != ElementType::int64 && x.dtype != ElementType::boolean) {
      candidates.push_back(t);
    }
  }
  if (candidates.size() != 1) {
    std::vector<std::string> names;
    for (TensorId t : candidates) names.push_back(f_.tensor(t).name);
    throw UserError("autodiff: the loss needs exactly one network output (the logits); the workload '" +
                    f_.name() + "' has " + std::to_string(candidates.size()) +
                    (names.empty() ? std::string() : ": " + join(names)));
  }
  if (s_.loss == "cross_entropy" && f_.tensor(candidates[0]).shape.size() < 2) {
    throw UserError("autodiff: cross-entropy needs logits of rank >= 2 ([rows..., classes]), got '" +
                    f_.tensor(candidates[0]).name + "' " + to_string(f_.tensor(candidates[0]).shape));
  }
  return candidates[0];
}

/// Cross-entropy on the logits: LogSoftmax (saves its output) and NLL (saves the labels), plus the gradient
/// d(logits) = (softmax − one_hot(labels)) / rows.
TensorId Generator::append_loss(const Instance& inst, TensorId flogits) {
  if (s_.loss == "binary_cross_entropy") return append_binary_loss(inst, flogits);
  const TensorId logits = inst.tensor[static_cast<std::size_t>(flogits)];
  const Tensor lt = b_.tensor(logits);
  const std::size_t rank = lt.shape.size();
  const bool channels = class_axis_ == ClassAxis::channels || (class_axis_ == ClassAxis::automatic && rank >= 4);
  const std::size_t axis = channels ? 1 : rank - 1;
  if (lt.shape[axis] == 1) {
    throw UserError(f_.tensor(flogits).origin, "autodiff: cross-entropy over the one class of '" + lt.name + "' " + to_string(lt.shape) +
                    " is always 0: one logit per sample is a binary classifier, [training] loss = "
                    "\"binary_cross_entropy\"");
  }
  Shape rows = lt.shape;  // the labels: the logits' shape without the class axis
  rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(axis));
  const TensorId labels = new_tensor("labels" + inst.suffix, rows, ElementType::int64, TensorRole::label);
  const TensorId logp = new_tensor(lt.name + ":log_probs", lt.shape, lt.dtype, TensorRole::activation);
  const TensorId loss = new_tensor("loss" + inst.suffix, {1}, ElementType::fp32, TensorRole::loss);
  Operator ls = make_op("loss/LogSoftmax" + inst.suffix, OpKind::softmax, "LogSoftmax", Phase::loss, kNone);
  ls.phase = Phase::loss;
  const OperatorId ls_id = ops::softmax(b_, std::move(ls), logits, std::nullopt, logp, axis);
  b_.op(ls_id).ops_per_iteration = 5;  // max, subtract, exp, sum, log-subtract
  b_.op(ls_id).phase = Phase::loss;
  const std::vector<AffineExpr> all = b_.op(ls_id).operands[0].access;
  std::vector<AffineExpr> label_access = all;  // the log-softmax's dims without the class axis
  label_access.erase(label_access.begin() + static_cast<std::ptrdiff_t>(axis));

  Operator nll = make_op("loss/NLLLoss" + inst.suffix, OpKind::loss, "NLLLoss", Phase::loss, kNone);
  nll.dims = b_.op(ls_id).dims;
  nll.dims[axis].size = 1;  // one log-probability per position, selected by its label
  std::vector<AffineExpr> picked = all;
  picked[axis] = AffineExpr::constant(0);
  nll.operands.push_back(operand(loss, OperandSlot::O, {AffineExpr::constant(0)}));
  nll.operands.push_back(operand(logp, OperandSlot::I1, picked));
  nll.operands.push_back(operand(labels, OperandSlot::I2, label_access));
  nll.ops_per_iteration = 2;  // negate and accumulate the mean
  nll.attributes["class_axis"] = {static_cast<std::int64_t>(axis)};
  b_.add_operator(std::move(nll));

  const TensorId dlogits = new_tensor("d(" + lt.name + ")", lt.shape, lt.dtype, TensorRole::gradient);
  Operator g = make_op("loss/CrossEntropyGrad" + inst.suffix, OpKind::elementwise, "CrossEntropyGrad",
                       Phase::backward_dx, ls_id);
  g.dims = b_.op(ls_id).dims;
  g.ops_per_iteration = 3;  // exp, subtract the one-hot, scale by 1/rows
  g.operands.push_back(operand(dlogits, OperandSlot::O, all));
  g.operands.push_back(operand(logp, OperandSlot::I1, all));
  g.operands.push_back(operand(labels, OperandSlot::I2, label_access));
  b_.add_operator(std::move(g));
  return dlogits;
}

/// Binary cross-entropy on a probability per output element (a click: DLRM): PyTorch's Sigmoid + BCELoss (mean),
/// fused as BCEWithLogitsLoss. The forward keeps the logits (the sigmoid's output in PyTorch: the same bytes) and
/// the fp32 targets; d(logits) = (sigmoid(logits) − target) / elements.
TensorId Generator::append_binary_loss(const Instance& inst, TensorId flogits) {
  const TensorId logits = inst.tensor[static_cast<std::size_t>(flogits)];
  const Tensor lt = b_.tensor(logits);
  const TensorId labels = new_tensor("labels" + inst.suffix, lt.shape, ElementType::fp32, TensorRole::label);
  const TensorId loss = new_tensor("loss" + inst.suffix, {1}, ElementType::fp32, TensorRole::loss);
  const auto names = ops::axis_dim_names(lt.shape.size());
  std::vector<LoopDim> dims;
  std::vector<AffineExpr> all;
  for (std::size_t a = 0; a < lt.shape.size(); ++a) {
    dims.push_back(LoopDim{names[a], lt.shape[a]});
    all.push_back(AffineExpr::of_dim(static_cast<int>(a)));
  }
  Operator bce = make_op("loss/BinaryCrossEntropyWithLogits" + inst.suffix, OpKind::loss,
                         "BinaryCrossEntropyWithLogits", Phase::loss, kNone);
  bce.dims = dims;
  bce.ops_per_iteration = 7;  // sigmoid (negate, exp, add, divide), two logs weighted by the target, the mean
  bce.operands.push_back(operand(loss, OperandSlot::O, {AffineExpr::constant(0)}));
  bce.operands.push_back(operand(logits, OperandSlot::I1, all));
  bce.operands.push_back(operand(labels, OperandSlot::I2, all));
  const OperatorId bce_id = b_.add_operator(std::move(bce));
  const TensorId dlogits = new_tensor("d(" + lt.name + ")", lt.shape, lt.dtype, TensorRole::gradient);
  Operator g = make_op("loss/BinaryCrossEntropyGrad" + inst.suffix, OpKind::elementwise, "BinaryCrossEntropyGrad",
                       Phase::backward_dx, bce_id);
  g.dims = dims;
  g.ops_per_iteration = 6;  // the sigmoid again, subtract the target, scale by 1/elements
  g.operands.push_back(operand(dlogits, OperandSlot::O, all));
  g.operands.push_back(operand(logits, OperandSlot::I1, all));
  g.operands.push_back(operand(labels, OperandSlot::I2, all));
  b_.add_operator(std::move(g));
  return dlogits;
}

}  // namespace monet::plugins::autodiff
