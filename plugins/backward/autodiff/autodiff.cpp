// The autodiff backward generator: forward graph -> one training step (forward, loss, backward).
//
// Gradient rules follow PyTorch's derivatives.yaml: each rule reads exactly the forward tensors PyTorch's
// autograd node saves (conv/linear their input, ReLU/sigmoid/tanh/softmax their output, GELU/SiLU/BN/LN their
// input plus statistics, max pooling its indices, cross-entropy its log-probabilities, embeddings their indices),
// so the saved set is the set of forward tensors that backward operators read. Gradients are loop nests:
//   * bilinear operators (gemm, matmul, conv dW): the same loop nest with the gradient in place of one operand;
//   * conv dX: a transposed convolution in gather form, split into stride_y x stride_x stride-1 phases so no
//     multiply is spent on inserted zeros, the phases interleaved by a zero-cost view;
//   * norms and softmax: a reduction, then an elementwise pass; pointwise ops: one elementwise pass.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "monet/ir/ops.hpp"
#include "monet/plugin/backward_generator.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"
#include "rules.hpp"

namespace monet::plugins {
namespace {

using autodiff::GradientForm;
using autodiff::gradient_rule;

const std::set<std::string> kPartialViews{"Split", "Slice"};  // gradients of these are disjoint pieces

/// One micro-batch's copy of the forward graph inside the training graph.
struct Instance {
  std::vector<TensorId> tensor;    // forward tensor id -> training-graph tensor id
  std::vector<OperatorId> op;      // forward operator id -> training-graph operator id
  std::string suffix;              // "" for the first micro-batch, "@2", "@3", ...
  std::map<OperatorId, std::vector<TensorId>> extra;  // forward op -> tensors added for autograd (stats, indices)
};

struct Piece {
  TensorId tensor = kNone;
  bool disjoint = false;  // a part of the gradient (Split/Slice), combined by a view rather than added
};

/// Where the classes are in the logits: PyTorch's CrossEntropyLoss takes them on axis 1 of [N, C, ...]
/// (segmentation); language models flatten [..., V] token logits. auto: axis 1 from rank 4 on, else the last.
enum class ClassAxis { automatic, channels, last };

class Generator {
 public:
  Generator(const Graph& forward, const TrainingSettings& settings, ClassAxis class_axis)
      : f_(forward), s_(settings), b_(forward), class_axis_(class_axis),
        mask_type_(settings.precision ? settings.precision->dropout_mask : Precision{}.dropout_mask) {}

  GraphPtr run() {
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

 private:
  // ------------------------------------------------------------------------------------------- helpers
  std::string unique_tensor_name(const std::string& base) {
    std::string name = base;
    for (int k = 2; b_.find_tensor(name) != kNone; ++k) name = base + "#" + std::to_string(k);
    return name;
  }
  std::string unique_op_name(const std::string& base) {
    std::string name = base;
    for (int k = 2; b_.has_operator(name); ++k) name = base + "#" + std::to_string(k);
    return name;
  }
  TensorId new_tensor(const std::string& name, Shape shape, ElementType dtype, TensorRole role) {
    Tensor t;
    t.name = unique_tensor_name(name);
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.role = role;
    return b_.add_tensor(std::move(t));
  }
  Operator make_op(const std::string& name, OpKind kind, std::string type, Phase phase, OperatorId from) {
    Operator op;
    op.name = unique_op_name(name);
    op.kind = kind;
    op.type = std::move(type);
    op.phase = phase;
    op.derived_from = from;
    return op;
  }
  Operand operand(TensorId t, OperandSlot slot, std::vector<AffineExpr> access) const {
    return ops::operand(b_, t, slot, std::move(access));
  }
  /// A gradient tensor for forward tensor x (of this instance).
  TensorId grad_tensor(const Instance& inst, TensorId fx) {
    const Tensor& x = b_.tensor(inst.tensor[static_cast<std::size_t>(fx)]);
    const bool weight = f_.tensor(fx).role == TensorRole::weight;
    return new_tensor((weight ? "grad(" : "d(") + x.name + ")", x.shape, x.dtype,
                      weight ? TensorRole::weight_gradient : TensorRole::gradient);
  }
  bool is_weight(TensorId fx) const { return f_.tensor(fx).role == TensorRole::weight; }
  Phase phase_for(TensorId fx) const { return is_weight(fx) ? Phase::backward_dw : Phase::backward_dx; }
  void add_piece(TensorId fx, TensorId g, bool disjoint = false) { grads_[fx].push_back(Piece{g, disjoint}); }

  // ------------------------------------------------------------------------------------------ instances
  Instance identity() const {
    Instance inst;
    inst.tensor.resize(f_.tensors().size());
    std::iota(inst.tensor.begin(), inst.tensor.end(), 0);
    inst.op.resize(f_.operators().size());
    std::iota(inst.op.begin(), inst.op.end(), 0);
    return inst;
  }

  /// Another micro-batch: fresh inputs and activations, the same weights and buffers.
  Instance copy_forward(const std::string& suffix) {
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
  void augment(Instance& inst) {
    for (const Operator& fop : f_.operators()) {
      Operator& op = b_.op(inst.op[static_cast<std::size_t>(fop.id)]);
      const std::string base = b_.tensor(op.operands[0].tensor).name;
      if (fop.kind == OpKind::norm && fop.type == "BatchNormalization" && training_bn(fop)) {
        const Shape c{f_.tensor(fop.operands[1].tensor).shape.at(1)};
        for (const char* what : {"save_mean", "save_invstd"}) {
          const TensorId t = new_tensor(base + ":" + what, c, ElementType::fp32, TensorRole::activation);
          op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(1)}));
          inst.extra[fop.id].push_back(t);
        }
      } else if (fop.kind == OpKind::norm && (fop.type == "LayerNormalization" || fop.type == "RMSNormalization")) {
        const std::size_t axis = static_cast<std::size_t>(fop.attributes.at("axis").at(0));
        const Shape& x = f_.tensor(fop.operands[1].tensor).shape;
        Shape tokens(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
        std::vector<AffineExpr> acc;
        for (std::size_t a = 0; a < axis; ++a) acc.push_back(AffineExpr::of_dim(static_cast<int>(a)));
        if (tokens.empty()) {
          tokens = {1};
          acc = {AffineExpr::constant(0)};
        }
        // RMSNorm keeps no mean.
        for (const char* what : {"mean", "rstd"}) {
          if (fop.type == "RMSNormalization" && std::string_view(what) == "mean") continue;
          const TensorId t = new_tensor(base + ":" + what, tokens, ElementType::fp32, TensorRole::activation);
          op.operands.push_back(operand(t, OperandSlot::O, acc));
          inst.extra[fop.id].push_back(t);
        }
      } else if (fop.type == "FlashAttention") {
        // The log-sum-exp of every query row (fp32), which its backward pass recomputes the probabilities from.
        // [batch, groups, queries per group, queries]: the operator's dims 0, 2, 3, 1 (the gpt generator's order).
        const Shape rows{fop.dims[0].size, fop.dims[2].size, fop.dims[3].size, fop.dims[1].size};
        const TensorId t = new_tensor(base + ":softmax_lse", rows, ElementType::fp32, TensorRole::activation);
        op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(0), AffineExpr::of_dim(2),
                                                          AffineExpr::of_dim(3), AffineExpr::of_dim(1)}));
        inst.extra[fop.id].push_back(t);
      } else if (fop.kind == OpKind::norm && fop.attributes.contains("groups")) {
        // Group / instance norm: mean and rstd per (sample, group).
        const Shape stats{f_.tensor(fop.operands[1].tensor).shape.at(0), fop.attributes.at("groups").at(0)};
        for (const char* what : {"mean", "rstd"}) {
          const TensorId t = new_tensor(base + ":" + what, stats, ElementType::fp32, TensorRole::activation);
          op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(0), AffineExpr::of_dim(1)}));
          inst.extra[fop.id].push_back(t);
        }
        if (fop.type == "InstanceNormalization" && fop.operands.size() > 2) {
          // PyTorch runs instance norm as batch norm of [1, N·C, ...] with the weight repeated per sample.
          const TensorId t = new_tensor(base + ":weight_repeated", stats, ElementType::fp32, TensorRole::activation);
          op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(0), AffineExpr::of_dim(1)}));
          inst.extra[fop.id].push_back(t);
        }
      } else if (fop.kind == OpKind::pooling && (fop.type == "MaxPool" || fop.type == "GlobalMaxPool")) {
        const TensorId t = new_tensor(base + ":indices", f_.tensor(fop.operands[0].tensor).shape, ElementType::int64,
                                      TensorRole::index);
        op.operands.push_back(operand(t, OperandSlot::O, fop.operands[0].access));
        inst.extra[fop.id].push_back(t);
      } else if (fop.kind == OpKind::elementwise && fop.type == "Dropout") {
        const TensorId t = new_tensor(base + ":mask", f_.tensor(fop.operands[0].tensor).shape, mask_type_,
                                      TensorRole::activation);
        op.operands.push_back(operand(t, OperandSlot::O, fop.operands[0].access));
        inst.extra[fop.id].push_back(t);
      }
    }
  }
  static bool training_bn(const Operator& op) {
    auto it = op.attributes.find("training_mode");
    return it == op.attributes.end() || it->second.empty() || it->second[0] != 0;
  }

  // ------------------------------------------------------------------------------------ requires grad
  void compute_requires_grad(const Instance& /*inst*/) {
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
  bool rg(TensorId fx) const { return rg_[static_cast<std::size_t>(fx)]; }

  // ---------------------------------------------------------------------------------------------- loss
  TensorId find_logits() const {
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
  TensorId append_loss(const Instance& inst, TensorId flogits) {
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
  TensorId append_binary_loss(const Instance& inst, TensorId flogits) {
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

  // ------------------------------------------------------------------------------------------ backward
  void backward(Instance& inst, TensorId flogits, TensorId dlogits) {
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
  TensorId combine(TensorId fx, std::vector<Piece> pieces, bool final_weight, const Instance& inst) {
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

  TensorId T(const Instance& inst, TensorId fx) const { return inst.tensor[static_cast<std::size_t>(fx)]; }

  /// A backward operator with the forward operator's loop nest.
  Operator like(const Operator& f, const Instance& inst, const std::string& suffix, std::string type, Phase phase) {
    Operator op = make_op(b_.op(inst.op[static_cast<std::size_t>(f.id)]).name + "/" + suffix, f.kind,
                          std::move(type), phase, inst.op[static_cast<std::size_t>(f.id)]);
    op.dims = f.dims;
    op.attributes = f.attributes;
    return op;
  }

  void apply_rule(Instance& inst, const Operator& f, TensorId dy) {
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

  // ----------------------------------------------------------------------------------- bilinear ops
  /// Y = A · B over a loop nest: dA reads dY and B, dB reads dY and A, in the same loop nest; a bias sums dY.
  void bilinear(Instance& inst, const Operator& f, TensorId dy) {
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

  /// FlashAttention's backward kernel (FlashAttention-2's): from dO, q, k, v, the output and the log-sum-exp it
  /// recomputes the scores and the probabilities, then dV, dP, dQ and dK: five products where the forward pass
  /// has two (its `pass_dim`), over the same (query, key) pairs. One operator writes dq, dk and dv.
  void flash_attention(Instance& inst, const Operator& f, TensorId dy) {
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

  /// d(bias) = Σ dY over every output dimension the bias does not index.
  void bias_grad(Instance& inst, const Operator& f, const Operand& bias, TensorId dy) {
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

  /// Conv dX as a transposed convolution in gather form. For stride s the input rows split into s phases
  /// (iy = s·j + r); phase r only meets the kernel taps fy with (r + p − d·fy) ≡ 0 (mod s), which form an
  /// arithmetic progression: each phase is a stride-1 convolution over its taps, and the s_y·s_x phases are
  /// interleaved into dX by a view. No multiply touches an inserted zero; Σ phases = the forward MACs when
  /// the input extent is s × the output extent.
  void conv_dx(Instance& inst, const Operator& f, TensorId dy) {
    const Operand& xin = f.operands[1];
    const Operand& w = f.operands[2];
    const Shape x_shape = f_.tensor(xin.tensor).shape;
    const auto stride = f.attributes.at("strides");
    const auto dil = f.attributes.at("dilations");
    const auto pads = f.attributes.at("pads");
    const auto kernel = f.attributes.at("kernel_shape");
    const std::size_t axes = kernel.size();  // 1-, 2- or 3-D
    const int dG = f.dim_index("G");
    const int dB = f.dim_index("B");
    const int dK = f.dim_index("K");
    const int dC = f.dim_index("C");
    const std::int64_t K = f.dims[static_cast<std::size_t>(dK)].size;
    const std::int64_t C = f.dims[static_cast<std::size_t>(dC)].size;
    const auto o_names = ops::spatial_dim_names(axes, 'O');
    const auto f_names = ops::spatial_dim_names(axes, 'F');

    struct AxisPhase {
      std::int64_t rows = 0;   // output rows of the phase (j)
      std::int64_t taps = 0;   // kernel taps it uses (m)
      std::int64_t f0 = 0;     // first tap
      std::int64_t step = 1;   // tap stride
      std::int64_t e = 1;      // dO index change per tap
      std::int64_t c = 0;      // dO index offset
    };
    auto phases_of = [&](std::size_t a) {
      const std::int64_t s = stride[a];
      const std::int64_t d = dil[a];
      const std::int64_t p = pads[a];
      const std::int64_t F = kernel[a];
      const std::int64_t H = x_shape[2 + a];
      std::vector<AxisPhase> out;
      for (std::int64_t r = 0; r < s; ++r) {
        AxisPhase ph;
        ph.rows = (H - r + s - 1) / s;
        std::vector<std::int64_t> taps;
        for (std::int64_t fy = 0; fy < F; ++fy) {
          if (((r + p - d * fy) % s + s) % s == 0) taps.push_back(fy);
        }
        if (!taps.empty()) {
          ph.f0 = taps[0];
          ph.step = taps.size() > 1 ? taps[1] - taps[0] : 1;
          ph.taps = static_cast<std::int64_t>(taps.size());
          ph.e = d * ph.step / s;
          ph.c = (r + p - d * ph.f0) / s;
        }
        out.push_back(ph);
      }
      return out;
    };
    std::vector<std::vector<AxisPhase>> phases;
    std::size_t combinations = 1;
    for (std::size_t a = 0; a < axes; ++a) {
      phases.push_back(phases_of(a));
      combinations *= phases.back().size();
    }
    const bool single = combinations == 1;
    const std::string base = b_.op(inst.op[static_cast<std::size_t>(f.id)]).name;
    std::vector<TensorId> parts;
    for (std::size_t combo = 0; combo < combinations; ++combo) {
      // The phase of every axis (mixed radix over the axes' stride counts).
      std::vector<std::size_t> r(axes);
      std::size_t rest = combo;
      for (std::size_t a = axes; a-- > 0;) {
        r[a] = rest % phases[a].size();
        rest /= phases[a].size();
      }
      bool empty = false;
      for (std::size_t a = 0; a < axes; ++a) {
        const AxisPhase& ph = phases[a][r[a]];
        empty |= ph.rows <= 0 || ph.taps == 0;  // no gradient reaches these rows
      }
      if (empty) continue;
      std::string tag;
      if (!single) {
        tag = "[";
        for (std::size_t a = 0; a < axes; ++a) tag += (a ? "," : "") + std::to_string(r[a]);
        tag += "]";
      }
      Operator op = make_op(base + "/dX" + tag, OpKind::conv, f.type + ".dX", Phase::backward_dx,
                            inst.op[static_cast<std::size_t>(f.id)]);
      op.attributes = f.attributes;
      op.attributes["phase"] = std::vector<std::int64_t>(r.begin(), r.end());
      const int nB = static_cast<int>(op.dims.size());
      op.dims.push_back(f.dims[static_cast<std::size_t>(dB)]);
      int nG = -1;
      if (dG >= 0) {
        nG = static_cast<int>(op.dims.size());
        op.dims.push_back(f.dims[static_cast<std::size_t>(dG)]);
      }
      const int nC = static_cast<int>(op.dims.size());
      op.dims.push_back(LoopDim{"K", C});  // dX channels: the forward input channels
      const int nK = static_cast<int>(op.dims.size());
      op.dims.push_back(LoopDim{"C", K});  // reduced: the forward output channels
      std::vector<int> nY(axes), nF(axes);
      for (std::size_t a = 0; a < axes; ++a) {
        nY[a] = static_cast<int>(op.dims.size());
        op.dims.push_back(LoopDim{o_names[a], phases[a][r[a]].rows});
      }
      for (std::size_t a = 0; a < axes; ++a) {
        nF[a] = static_cast<int>(op.dims.size());
        op.dims.push_back(LoopDim{f_names[a], phases[a][r[a]].taps});
      }
      auto channel = [&](int d, std::int64_t per_group) {
        if (nG < 0) return AffineExpr::of_dim(d);
        return AffineExpr{{{nG, per_group}, {d, 1}}, 0};
      };
      // Taps flipped so every coefficient on the dO side is positive: m' = taps − 1 − m.
      auto dO_index = [](int j, int m, const AxisPhase& ph) {
        return AffineExpr{{{j, 1}, {m, ph.e}}, ph.c - ph.e * (ph.taps - 1)};
      };
      auto w_index = [](int m, const AxisPhase& ph) {
        return AffineExpr{{{m, -ph.step}}, ph.f0 + ph.step * (ph.taps - 1)};
      };
      Shape part_shape{x_shape[0], x_shape[1]};
      std::vector<AffineExpr> acc_part{AffineExpr::of_dim(nB), channel(nC, C)};
      std::vector<AffineExpr> acc_dy{AffineExpr::of_dim(nB), channel(nK, K)};
      std::vector<AffineExpr> acc_w{channel(nK, K), AffineExpr::of_dim(nC)};
      for (std::size_t a = 0; a < axes; ++a) {
        const AxisPhase& ph = phases[a][r[a]];
        part_shape.push_back(ph.rows);
        acc_part.push_back(AffineExpr::of_dim(nY[a]));
        acc_dy.push_back(dO_index(nY[a], nF[a], ph));
        acc_w.push_back(w_index(nF[a], ph));
      }
      const TensorId part = single ? grad_tensor(inst, xin.tensor)
                                   : new_tensor("d(" + b_.tensor(T(inst, xin.tensor)).name + ")" + tag, part_shape,
                                                b_.tensor(T(inst, xin.tensor)).dtype, TensorRole::gradient);
      op.operands.push_back(operand(part, OperandSlot::O, std::move(acc_part)));
      op.operands.push_back(operand(dy, OperandSlot::I1, std::move(acc_dy)));
      op.operands.push_back(operand(T(inst, w.tensor), OperandSlot::I2, std::move(acc_w)));
      b_.add_operator(std::move(op));
      parts.push_back(part);
    }
    if (parts.empty()) return;
    if (single) {
      add_piece(xin.tensor, parts[0]);
      return;
    }
    const TensorId dx = grad_tensor(inst, xin.tensor);
    Operator join = make_op(base + "/dX.interleave", OpKind::view, "Interleave", Phase::backward_dx,
                            inst.op[static_cast<std::size_t>(f.id)]);
    join.ops_per_iteration = 0;
    join.operands.push_back(operand(dx, OperandSlot::O, {}));
    for (TensorId p : parts) join.operands.push_back(operand(p, OperandSlot::I1, {}));
    b_.add_operator(std::move(join));
    add_piece(xin.tensor, dx);
  }

  // ------------------------------------------------------------------------------------ pointwise
  void pointwise(Instance& inst, const Operator& f, TensorId dy) {
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
  static bool reads_every_dim(const std::vector<AffineExpr>& access, const std::vector<LoopDim>& dims) {
    std::vector<bool> used(dims.size(), false);
    for (const AffineExpr& e : access) {
      for (const auto& t : e.terms) used[static_cast<std::size_t>(t.dim)] = true;
    }
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (!used[d] && dims[d].size > 1) return false;
    }
    return true;
  }

  // ------------------------------------------------------------------------------- data movement
  /// Gradients of copies whose index map is data dependent or not affine (resampling, gathers, scatters,
  /// tiling): one pass over the forward's loop nest (the output's elements) reading dY and the saved indices,
  /// writing the input's gradient.
  void data_movement(Instance& inst, const Operator& f, TensorId dy, const autodiff::GradientRule& rule) {
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

  // --------------------------------------------------------------------------------------- softmax
  /// dx = y ⊙ (dy − Σ_axis dy ⊙ y): a row reduction, then an elementwise pass; both read the saved output.
  void softmax(Instance& inst, const Operator& f, TensorId dy) {
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

  // ------------------------------------------------------------------------------------------ norms
  void norm(Instance& inst, const Operator& f, TensorId dy) {
    if (f.type == "LayerNormalization" || f.type == "RMSNormalization") {  // statistics per token: the leading axes
      return statistics_norm(inst, f, dy, b_.op(inst.op[static_cast<std::size_t>(f.id)]).operands.back().access);
    }
    if (f.attributes.contains("groups")) {  // group / instance norm: statistics per (sample, group)
      return statistics_norm(inst, f, dy, {AffineExpr::of_dim(0), AffineExpr::of_dim(1)});
    }
    return batch_norm(inst, f, dy);
  }

  /// Batch norm: Σdy and Σdy·x̂ per channel (= d(bias), d(scale)), then dx elementwise.
  void batch_norm(Instance& inst, const Operator& f, TensorId dy) {
    const Operand& out = f.operands[0];
    const Operand& x = f.operands[1];
    const Operand& scale = f.operands[2];
    const Operand& bias = f.operands[3];
    const bool training = training_bn(f);
    std::vector<std::pair<TensorId, std::vector<AffineExpr>>> stats;
    const std::vector<AffineExpr> per_channel{AffineExpr::of_dim(1)};
    if (training) {
      for (TensorId t : inst.extra.at(f.id)) stats.emplace_back(t, per_channel);
    } else {
      for (std::size_t j = 4; j < f.operands.size() && j < 6; ++j) stats.emplace_back(T(inst, f.operands[j].tensor), per_channel);
    }
    const bool params = rg(scale.tensor) || rg(bias.tensor);
    TensorId sum_dy = kNone;
    TensorId sum_dyx = kNone;
    if (params || training) {
      Operator red = like(f, inst, "dReduce", f.type + ".grad.reduce", params ? Phase::backward_dw : Phase::backward_dx);
      red.kind = OpKind::reduction;
      red.ops_per_iteration = 4;  // x̂ = (x − μ)·rstd, dy·x̂, and the two sums
      const Shape channels = f_.tensor(scale.tensor).shape;
      sum_dy = rg(bias.tensor) ? grad_tensor(inst, bias.tensor)
                               : new_tensor(b_.tensor(T(inst, out.tensor)).name + ":sum_dy", channels,
                                            ElementType::fp32, TensorRole::gradient);
      sum_dyx = rg(scale.tensor) ? grad_tensor(inst, scale.tensor)
                                 : new_tensor(b_.tensor(T(inst, out.tensor)).name + ":sum_dy_xhat", channels,
                                              ElementType::fp32, TensorRole::gradient);
      red.operands.push_back(operand(sum_dy, OperandSlot::O, per_channel));
      red.operands.push_back(operand(sum_dyx, OperandSlot::O, per_channel));
      red.operands.push_back(operand(dy, OperandSlot::I1, out.access));
      red.operands.push_back(operand(T(inst, x.tensor), OperandSlot::I1, x.access));
      for (const auto& [t, acc] : stats) red.operands.push_back(operand(t, OperandSlot::I2, acc));
      b_.add_operator(std::move(red));
      if (rg(bias.tensor)) add_piece(bias.tensor, sum_dy);
      if (rg(scale.tensor)) add_piece(scale.tensor, sum_dyx);
    }
    if (!rg(x.tensor)) return;
    Operator ew = like(f, inst, "dX", f.type + ".grad", Phase::backward_dx);
    ew.kind = OpKind::elementwise;
    ew.ops_per_iteration = training ? 6 : 2;  // (γ·rstd/N)(N·dy − Σdy − x̂·Σdy·x̂) ; inference: dy·γ·rstd
    const TensorId g = grad_tensor(inst, x.tensor);
    ew.operands.push_back(operand(g, OperandSlot::O, x.access));
    ew.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    if (training) ew.operands.push_back(operand(T(inst, x.tensor), OperandSlot::I1, x.access));
    for (const auto& [t, acc] : stats) ew.operands.push_back(operand(t, OperandSlot::I2, acc));
    ew.operands.push_back(operand(T(inst, scale.tensor), OperandSlot::I2, scale.access));
    if (training) {
      ew.operands.push_back(operand(sum_dy, OperandSlot::I2, per_channel));
      ew.operands.push_back(operand(sum_dyx, OperandSlot::I2, per_channel));
    }
    b_.add_operator(std::move(ew));
    add_piece(x.tensor, g);
  }

  /// Layer, group and instance norm: per statistics group (a token; a sample and group) Σdy·γ and Σdy·γ·x̂, then
  /// dx; per parameter element Σdy·x̂ (dγ) and Σdy (dβ). Reads the input and every tensor augment() added to the
  /// forward operator (mean and rstd; instance norm's repeated weight), at `stats_access`.
  void statistics_norm(Instance& inst, const Operator& f, TensorId dy, const std::vector<AffineExpr>& stats_access) {
    const Operand& out = f.operands[0];
    const Operand& x = f.operands[1];
    const Operand* scale = nullptr;
    const Operand* bias = nullptr;
    for (std::size_t j = 2; j < f.operands.size(); ++j) {
      if (f.operands[j].is_output()) continue;
      (scale ? bias : scale) = &f.operands[j];
    }
    const auto& stats = inst.extra.at(f.id);
    auto stats_reads = [&](Operator& op) {
      for (TensorId t : stats) op.operands.push_back(operand(t, OperandSlot::I2, stats_access));
    };
    if ((scale && rg(scale->tensor)) || (bias && rg(bias->tensor))) {
      Operator red = like(f, inst, "dParams", f.type + ".grad.params", Phase::backward_dw);
      red.kind = OpKind::reduction;
      red.ops_per_iteration = 4;
      const TensorId ds = scale && rg(scale->tensor) ? grad_tensor(inst, scale->tensor) : kNone;
      const TensorId db = bias && rg(bias->tensor) ? grad_tensor(inst, bias->tensor) : kNone;
      if (ds != kNone) red.operands.push_back(operand(ds, OperandSlot::O, scale->access));
      if (db != kNone) red.operands.push_back(operand(db, OperandSlot::O, bias->access));
      red.operands.push_back(operand(dy, OperandSlot::I1, out.access));
      red.operands.push_back(operand(T(inst, x.tensor), OperandSlot::I1, x.access));
      stats_reads(red);
      b_.add_operator(std::move(red));
      if (ds != kNone) add_piece(scale->tensor, ds);
      if (db != kNone) add_piece(bias->tensor, db);
    }
    if (!rg(x.tensor)) return;
    const Shape groups = b_.tensor(stats.at(0)).shape;
    const std::string xname = b_.tensor(T(inst, x.tensor)).name;
    const TensorId s1 = new_tensor("d(" + xname + "):sum_dxhat", groups, ElementType::fp32, TensorRole::gradient);
    const TensorId s2 = new_tensor("d(" + xname + "):sum_dxhat_xhat", groups, ElementType::fp32, TensorRole::gradient);
    Operator red = like(f, inst, "dReduce", f.type + ".grad.reduce", Phase::backward_dx);
    red.kind = OpKind::reduction;
    red.ops_per_iteration = 5;
    red.operands.push_back(operand(s1, OperandSlot::O, stats_access));
    red.operands.push_back(operand(s2, OperandSlot::O, stats_access));
    red.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    red.operands.push_back(operand(T(inst, x.tensor), OperandSlot::I1, x.access));
    stats_reads(red);
    if (scale) red.operands.push_back(operand(T(inst, scale->tensor), OperandSlot::I2, scale->access));
    b_.add_operator(std::move(red));
    Operator ew = like(f, inst, "dX", f.type + ".grad", Phase::backward_dx);
    ew.kind = OpKind::elementwise;
    ew.ops_per_iteration = 6;
    const TensorId g = grad_tensor(inst, x.tensor);
    ew.operands.push_back(operand(g, OperandSlot::O, x.access));
    ew.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    ew.operands.push_back(operand(T(inst, x.tensor), OperandSlot::I1, x.access));
    stats_reads(ew);
    if (scale) ew.operands.push_back(operand(T(inst, scale->tensor), OperandSlot::I2, scale->access));
    ew.operands.push_back(operand(s1, OperandSlot::I2, stats_access));
    ew.operands.push_back(operand(s2, OperandSlot::I2, stats_access));
    b_.add_operator(std::move(ew));
    add_piece(x.tensor, g);
  }

  // ---------------------------------------------------------------------------------------- pooling
  void pooling(Instance& inst, const Operator& f, TensorId dy) {
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
      op.keeps_alive = {T(inst, x.tensor)};  // PyTorch keeps the input (for its shape)
      b_.add_operator(std::move(op));
    }
    add_piece(x.tensor, g);
  }

  // -------------------------------------------------------------------------------------- embedding
  /// Scatter-add of dY rows into the table gradient, read at the saved indices.
  void embedding(Instance& inst, const Operator& f, TensorId dy) {
    if (f.type == "EmbeddingBag") return embedding_bag(inst, f, dy);
    const Operand& out = f.operands[0];
    for (std::size_t j = 1; j < f.operands.size(); ++j) {
      const Operand& table = f.operands[j];
      if (table.slot != OperandSlot::I2 || !rg(table.tensor)) continue;
      Operator op = like(f, inst, "dW", "Embedding.dW", Phase::backward_dw);
      op.ops_per_iteration = 1;
      const TensorId g = grad_tensor(inst, table.tensor);
      Operand go = operand(g, OperandSlot::O, table.access);
      go.indirect = true;
      op.operands.push_back(go);
      op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
      for (std::size_t k = 1; k < f.operands.size(); ++k) {
        if (f.operands[k].slot == OperandSlot::I1) {
          op.operands.push_back(operand(T(inst, f.operands[k].tensor), OperandSlot::I2, f.operands[k].access));
        }
      }
      b_.add_operator(std::move(op));
      add_piece(table.tensor, g);
    }
  }

  /// EmbeddingBag (sum): each lookup's gradient row is its bag's row of dY. With the forward operator's `sparse`
  /// attribute (nn.EmbeddingBag(sparse=True), TorchRec's sharded tables) the gradient is row-sparse, as PyTorch's
  /// _embedding_bag_sparse_backward makes it: one row per lookup (B·L rows, not coalesced), written in lookup order;
  /// its row ids are the saved indices. Otherwise the rows are scatter-added into a dense gradient of the table.
  /// The backward keeps the indices and the bags' offsets, as FBGEMM's table-batched lookup does (nn.EmbeddingBag
  /// keeps two more int64 per bag, bag_size and max_indices on CPUs, or offset2bag per lookup on GPUs).
  void embedding_bag(Instance& inst, const Operator& f, TensorId dy) {
    const Operand& out = f.operands[0];
    const Operand& table = f.operands.back();
    if (!rg(table.tensor)) return;
    const auto it = f.attributes.find("sparse");
    const bool sparse = it != f.attributes.end() && !it->second.empty() && it->second.front() != 0;
    if (sparse && s_.micro_batches > 1) {
      throw UserError(f.origin, "autodiff: '" + f.name + "' has a sparse gradient; accumulating sparse gradients over "
                                "micro_batches = " + std::to_string(s_.micro_batches) + " is not modelled");
    }
    Operator op = like(f, inst, "dW", "EmbeddingBag.dW", Phase::backward_dw);
    op.ops_per_iteration = sparse ? 0 : 1;  // a copy per lookup, or its addition into the table's row
    TensorId g;
    Operand go;
    if (sparse) {
      const Tensor& t = b_.tensor(T(inst, table.tensor));
      std::int64_t lookups = 1;  // every loop dim but the last (K): B, (T,) L
      for (std::size_t d = 0; d + 1 < f.dims.size(); ++d) lookups *= f.dims[d].size;
      g = new_tensor("grad(" + t.name + ")", {lookups, t.shape[1]}, t.dtype, TensorRole::weight_gradient);
      go = operand(g, OperandSlot::O, table.access);  // each lookup a row of its own
    } else {
      g = grad_tensor(inst, table.tensor);
      go = operand(g, OperandSlot::O, table.access);
      go.indirect = true;
    }
    op.operands.push_back(go);
    op.operands.push_back(operand(dy, OperandSlot::I1, out.access));
    for (std::size_t k = 1; k + 1 < f.operands.size(); ++k) {  // the indices and the offsets: kept for it
      op.operands.push_back(operand(T(inst, f.operands[k].tensor), OperandSlot::I2, f.operands[k].access));
    }
    b_.add_operator(std::move(op));
    add_piece(table.tensor, g);
  }

  // ------------------------------------------------------------------------------------------ views
  void view(Instance& inst, const Operator& f, TensorId dy) {
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

  const Graph& f_;
  TrainingSettings s_;
  GraphBuilder b_;
  ClassAxis class_axis_;
  ElementType mask_type_;
  std::vector<bool> rg_;
  std::map<TensorId, std::vector<Piece>> grads_;  // forward tensor -> gradient pieces (this micro-batch)
  std::set<std::string> warned_;
};

class Autodiff final : public BackwardGenerator {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::backward;
    i.name = "autodiff";
    i.version = "1.0.0";
    i.summary = "Forward graph -> one training step: forward, loss (cross-entropy or binary cross-entropy), backward (dX and dW)";
    i.description =
        "Gradient loop nests per operator (PyTorch derivative conventions for what is saved): conv dX as a "
        "transposed convolution split into stride phases (no multiply on inserted zeros) and dW with the batch in "
        "the reduction, gemm/matmul/attention with dY in place of one operand, batch/layer norm as a reduction then "
        "an elementwise pass, softmax (masked too), pointwise ops, max pooling through saved indices, average "
        "pooling as a scatter, embedding dW as a scatter-add (EmbeddingBag with its sparse attribute: a row-sparse "
        "gradient, one row per lookup), views, gradient sums at fan-outs. No gradient flows "
        "to graph inputs or into paths that only reach frozen parameters. [training] micro_batches = k repeats "
        "forward and backward k times and accumulates the weight gradients.";
    i.params = {
        ParamSpec::choice("class_axis", {"auto", "channels", "last"}, "auto")
            .with_doc("the class axis of the logits for the cross-entropy loss: channels = axis 1 of [N, C, ...] "
                      "(PyTorch's CrossEntropyLoss, segmentation), last = [..., classes] (token logits); auto: "
                      "channels from rank 4 on, else last"),
    };
    return i;
  }
  explicit Autodiff(const ParamValues& params) {
    const std::string& axis = params.get_string("class_axis");
    class_axis_ = axis == "channels" ? ClassAxis::channels : axis == "last" ? ClassAxis::last : ClassAxis::automatic;
  }
  [[nodiscard]] GraphPtr generate(const Graph& forward, const TrainingSettings& settings) const override {
    return Generator(forward, settings, class_axis_).run();
  }

 private:
  ClassAxis class_axis_ = ClassAxis::automatic;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Autodiff)
