// Normalization layers: the statistics their forward pass saves and their gradients (batch norm; layer, RMS,
// group and instance norm), each a reduction then an elementwise pass.
#include "generator.hpp"

namespace monet::plugins::autodiff {

bool Generator::training_bn(const Operator& op) {
  auto it = op.attributes.find("training_mode");
  return it == op.attributes.end() || it->second.empty() || it->second[0] != 0;
}

/// Batch norm (in training) keeps per-channel statistics, layer and RMS norm per-token ones, group and instance
/// norm per-(sample, group) ones.
void Generator::save_norm_statistics(Instance& inst, const Operator& fop, Operator& op, const std::string& base) {
  if (fop.type == "BatchNormalization" && training_bn(fop)) {
    const Shape c{f_.tensor(fop.operands[1].tensor).shape.at(1)};
    for (const char* what : {"save_mean", "save_invstd"}) {
      const TensorId t = new_tensor(base + ":" + what, c, ElementType::fp32, TensorRole::activation);
      op.operands.push_back(operand(t, OperandSlot::O, {AffineExpr::of_dim(1)}));
      inst.extra[fop.id].push_back(t);
    }
  } else if (fop.type == "LayerNormalization" || fop.type == "RMSNormalization") {
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
  } else if (fop.attributes.contains("groups")) {
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
  }
}

void Generator::norm(Instance& inst, const Operator& f, TensorId dy) {
  if (f.type == "LayerNormalization" || f.type == "RMSNormalization") {  // statistics per token: the leading axes
    return statistics_norm(inst, f, dy, b_.op(inst.op[static_cast<std::size_t>(f.id)]).operands.back().access);
  }
  if (f.attributes.contains("groups")) {  // group / instance norm: statistics per (sample, group)
    return statistics_norm(inst, f, dy, {AffineExpr::of_dim(0), AffineExpr::of_dim(1)});
  }
  return batch_norm(inst, f, dy);
}

/// Batch norm: Σdy and Σdy·x̂ per channel (= d(bias), d(scale)), then dx elementwise.
void Generator::batch_norm(Instance& inst, const Operator& f, TensorId dy) {
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
void Generator::statistics_norm(Instance& inst, const Operator& f, TensorId dy,
                                const std::vector<AffineExpr>& stats_access) {
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

}  // namespace monet::plugins::autodiff
