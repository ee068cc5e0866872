// Optimizer-state models of the common optimizers. Each adds, for every trainable parameter with a gradient,
// its state tensors (persistent across steps) and the update as loop nests in phase `optimizer`, with the
// operation count per element from the reference update rule (training-graph notes, table in docs/training.md).
// Hyper-parameters that do not change the work (learning rate, betas) are declared for the record.
#include <functional>
#include <map>

#include "monet/ir/ops.hpp"
#include "monet/ir/renumber.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/optimizer_model.hpp"

namespace monet::plugins {
namespace {

/// What one optimizer does per parameter tensor.
struct Plan {
  std::vector<std::string> states;  // full-size state tensors (same shape as the parameter)
  double update_ops = 2;            // elementwise operations per parameter element
  bool factored = false;            // Adafactor: row and column statistics for matrices instead of a full state
  bool trust_ratio = false;         // LAMB: per-parameter norms of the weight and of the update
};

/// Shared machinery: states, master weights, loss scaling, update operators.
class OptimizerBase : public OptimizerModel {
 public:
  [[nodiscard]] GraphPtr apply(const Graph& graph, const TrainingSettings& settings) const override {
    const Precision precision = settings.precision.value_or(Precision{});
    const ElementType state_type = settings.precision ? precision.optimizer_state : ElementType::fp32;
    std::map<TensorId, TensorId> gradient;  // parameter -> its complete gradient
    for (const Tensor& t : graph.tensors()) {
      if (t.gradient_of != kNone) gradient[t.gradient_of] = t.id;
    }
    GraphBuilder b = settings.precision && precision.loss_scaling ? with_loss_scaling(graph) : GraphBuilder(graph);
    for (const Tensor& w : graph.tensors()) {
      if (!w.is_trainable() || w.producer != kNone) continue;
      auto g = gradient.find(w.id);
      if (g == gradient.end()) continue;  // no gradient reaches it (e.g. unused)
      if (graph.tensor(g->second).shape != w.shape) {
        sparse_update(b, w, g->second);  // a row-sparse gradient (EmbeddingBag with `sparse`)
        continue;
      }
      update(b, w, g->second, settings, precision, state_type);
    }
    return std::move(b).build();
  }

 protected:
  virtual Plan plan() const = 0;

  /// The step with each loss multiplied by the scale before its backward pass (one operation), right after the
  /// operator that computes it: with several micro-batches each micro-batch's loss scalar then dies in its own
  /// pass, and the passes stay copies of one another (the checkpoint solvers rely on it).
  static GraphBuilder with_loss_scaling(const Graph& graph) {
    GraphBuilder b(graph.name());
    for (const Tensor& t : graph.tensors()) b.add_tensor(t);
    std::vector<OperatorId> new_id(graph.operators().size(), kNone);
    for (const Operator& op : graph.operators()) {
      new_id[static_cast<std::size_t>(op.id)] = b.add_operator(op);
      for (const Operand& o : op.operands) {
        const Tensor& t = graph.tensor(o.tensor);
        if (!o.is_output() || t.role != TensorRole::loss) continue;
        Tensor scaled;
        scaled.name = t.name + ":scaled";
        scaled.shape = t.shape;
        scaled.dtype = t.dtype;
        scaled.role = TensorRole::loss;
        const TensorId s = b.add_tensor(std::move(scaled));
        Operator scale = make_op(b, "loss_scale(" + t.name + ")", "LossScale");
        scale.phase = Phase::loss;
        ops::elementwise(b, std::move(scale), {t.id}, s, 1);
      }
    }
    follow_moved_operators(b, new_id);
    return b;
  }
  static Operator make_op(const GraphBuilder& b, const std::string& name, const std::string& type) {
    Operator op;
    op.name = name;
    for (int k = 2; b.has_operator(op.name); ++k) op.name = name + "#" + std::to_string(k);
    op.kind = OpKind::elementwise;
    op.type = type;
    op.phase = Phase::optimizer;
    return op;
  }
  static TensorId add(GraphBuilder& b, const std::string& name, const Shape& shape, ElementType dtype,
                      TensorRole role, TensorId in_place_of = kNone) {
    Tensor t;
    t.name = name;
    t.shape = shape;
    t.dtype = dtype;
    t.role = role;
    t.in_place_of = in_place_of;
    return b.add_tensor(std::move(t));
  }
  /// A reduction of `input` onto `shape_out` by dropping trailing axes (`keep` leading axes kept, the rest summed),
  /// or to a scalar when keep is empty.
  static OperatorId reduce(GraphBuilder& b, const std::string& name, const std::string& type, TensorId input,
                           TensorId output, const std::vector<bool>& keep_axis, double ops) {
    const Shape shape = b.tensor(input).shape;
    Operator op = make_op(b, name, type);
    op.kind = OpKind::reduction;
    op.ops_per_iteration = ops;
    const auto names = ops::axis_dim_names(shape.size());
    std::vector<AffineExpr> in_acc;
    std::vector<AffineExpr> out_acc;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      op.dims.push_back(LoopDim{names[a], shape[a]});
      in_acc.push_back(AffineExpr::of_dim(static_cast<int>(a)));
      if (keep_axis[a]) out_acc.push_back(AffineExpr::of_dim(static_cast<int>(a)));
    }
    if (out_acc.empty()) out_acc.push_back(AffineExpr::constant(0));
    op.operands.push_back(ops::operand(b, output, OperandSlot::O, std::move(out_acc)));
    op.operands.push_back(ops::operand(b, input, OperandSlot::I1, std::move(in_acc)));
    return b.add_operator(std::move(op));
  }

  void update(GraphBuilder& b, const Tensor& w, TensorId grad, const TrainingSettings& settings,
              const Precision& precision, ElementType state_type) const {
    const Plan p = plan();
    const Shape& shape = w.shape;
    const std::string& n = w.name;
    // Loss scaling: unscale the gradient and check it for inf/NaN (2 operations per element).
    if (settings.precision && precision.loss_scaling) {
      const TensorId unscaled = add(b, "grad(" + n + "):unscaled", shape, b.tensor(grad).dtype,
                                    TensorRole::weight_gradient, grad);
      ops::elementwise(b, make_op(b, "unscale(" + n + ")", "GradUnscale"), {grad}, unscaled, 2);
      grad = unscaled;
    }
    // What the update reads and writes: the fp32 master copy when the working weights are narrower.
    const bool master = settings.precision && precision.has_master_weights();
    TensorId target = w.id;
    if (master) target = add(b, n + ":master", shape, precision.master_weight, TensorRole::master_weight);
    std::vector<TensorId> reads{grad, target};
    std::vector<TensorId> states;
    for (const std::string& s : p.states) {
      states.push_back(add(b, n + ":" + s, shape, state_type, TensorRole::optimizer_state));
    }
    if (p.factored && shape.size() >= 2) {
      // Adafactor: row and column means of g² (two reductions) replace the full second moment.
      std::vector<bool> rows(shape.size(), true);
      rows.back() = false;
      std::vector<bool> cols(shape.size(), true);
      cols[shape.size() - 2] = false;
      Shape rs(shape.begin(), shape.end() - 1);
      Shape cs(shape.begin(), shape.end() - 2);
      cs.push_back(shape.back());
      const TensorId r = add(b, n + ":row_stat", rs, state_type, TensorRole::optimizer_state);
      const TensorId c = add(b, n + ":col_stat", cs, state_type, TensorRole::optimizer_state);
      const TensorId r2 = add(b, n + ":row_stat'", rs, state_type, TensorRole::optimizer_state, r);
      const TensorId c2 = add(b, n + ":col_stat'", cs, state_type, TensorRole::optimizer_state, c);
      reduce(b, "adafactor_rows(" + n + ")", "AdafactorRowStat", grad, r2, rows, 3);  // g², mean, EMA
      reduce(b, "adafactor_cols(" + n + ")", "AdafactorColStat", grad, c2, cols, 3);
      reads.push_back(r2);
      reads.push_back(c2);
    } else if (p.factored) {
      states.push_back(add(b, n + ":exp_avg_sq", shape, state_type, TensorRole::optimizer_state));
    }
    for (TensorId s : states) reads.push_back(s);
    if (p.trust_ratio) {
      // LAMB: the Adam direction, then ‖w‖ and ‖r‖ per parameter, then the scaled update.
      const TensorId dir = add(b, n + ":lamb_direction", shape, state_type, TensorRole::gradient);
      std::vector<TensorId> new_states;
      for (TensorId s : states) {
        new_states.push_back(add(b, b.tensor(s).name + "'", shape, state_type, TensorRole::optimizer_state, s));
      }
      Operator d = make_op(b, "lamb_direction(" + n + ")", "LambDirection");
      update_op(b, std::move(d), reads, {dir}, new_states, 14);
      const TensorId wn = add(b, n + ":norm", {1}, ElementType::fp32, TensorRole::gradient);
      const TensorId dn = add(b, n + ":direction_norm", {1}, ElementType::fp32, TensorRole::gradient);
      reduce(b, "lamb_weight_norm(" + n + ")", "Norm", target, wn, std::vector<bool>(shape.size(), false), 2);
      reduce(b, "lamb_update_norm(" + n + ")", "Norm", dir, dn, std::vector<bool>(shape.size(), false), 2);
      reads = {dir, target, wn, dn};
      states.clear();
    }
    // The update writes the parameter (or master copy) and the states in place.
    const TensorId updated = add(b, b.tensor(target).name + "'", shape, b.tensor(target).dtype,
                                 master ? TensorRole::master_weight : TensorRole::weight, target);
    std::vector<TensorId> new_states;
    for (TensorId s : states) {
      new_states.push_back(add(b, b.tensor(s).name + "'", shape, state_type, TensorRole::optimizer_state, s));
    }
    update_op(b, make_op(b, "update(" + n + ")", type_name()), reads, {updated}, new_states,
              p.trust_ratio ? 4 : p.update_ops);
    if (master) {
      // The working copy in the narrow format.
      const TensorId working = add(b, n + "'", shape, w.dtype, TensorRole::weight, w.id);
      ops::elementwise(b, make_op(b, "cast(" + n + ")", "CastMaster"), {updated}, working, 1);
    }
  }

  /// One elementwise loop nest over the parameter's axes reading `reads`, writing `outputs` then `states`.
  static void update_op(GraphBuilder& b, Operator op, const std::vector<TensorId>& reads,
                        const std::vector<TensorId>& outputs, const std::vector<TensorId>& states, double ops) {
    const Shape shape = b.tensor(outputs[0]).shape;
    const auto names = ops::axis_dim_names(shape.size());
    std::vector<AffineExpr> all;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      op.dims.push_back(LoopDim{names[a], shape[a]});
      all.push_back(AffineExpr::of_dim(static_cast<int>(a)));
    }
    op.ops_per_iteration = ops;
    auto add_operand = [&](TensorId t, OperandSlot slot) {
      const Shape& s = b.tensor(t).shape;
      Operand o;
      o.tensor = t;
      o.slot = slot;
      o.precision_bits = bits_of(b.tensor(t).dtype);
      const std::size_t r = shape.size();
      if (s == shape) {
        o.access = all;
      } else if (s == Shape{1}) {
        o.access = {AffineExpr::constant(0)};  // a per-parameter scalar (LAMB norms)
      } else if (r >= 2 && s == Shape(shape.begin(), shape.end() - 1)) {
        o.access.assign(all.begin(), all.end() - 1);  // row statistics
      } else if (r >= 2 && s.size() == r - 1 && s.back() == shape.back()) {
        o.access.assign(all.begin(), all.end() - 2);  // column statistics
        o.access.push_back(all.back());
      } else {
        throw InternalError("optimizer: cannot broadcast " + to_string(s) + " to " + to_string(shape));
      }
      op.operands.push_back(o);
    };
    for (TensorId t : outputs) add_operand(t, OperandSlot::O);
    for (TensorId t : states) add_operand(t, OperandSlot::O);
    bool first = true;
    for (TensorId t : reads) {
      add_operand(t, first ? OperandSlot::I1 : OperandSlot::I2);
      first = false;
    }
    b.add_operator(std::move(op));
  }

  virtual std::string type_name() const = 0;

  /// A row-sparse gradient ([lookups, K] rows of a [V, K] table) is applied to the looked-up rows in the backward
  /// pass, fused into the embedding's backward as FBGEMM's table-batched embeddings do (TorchRec's sharded tables):
  /// one loop nest over the lookups reading the gradient rows and writing the table's and the state's rows (indirect,
  /// in place). No complete gradient is left for a data-parallel reduction: a rank updates the rows it holds. The
  /// rule is the table's own (Tensor::sparse_update, FBGEMM's EmbOptimType, chosen by the workload: the dlrm
  /// generator's embedding_optimizer), whatever optimizer the dense parameters use. Every
  /// lookup is counted, as if no two lookups of a batch hit one row (FBGEMM's exact optimizers first merge
  /// duplicates: fewer rows, not counted).
  void sparse_update(GraphBuilder& b, const Tensor& w, TensorId grad) const {
    const Shape gs = b.tensor(grad).shape;
    if (w.shape.size() != 2 || gs.size() != 2 || gs[1] != w.shape[1]) {
      throw InternalError("optimizer: gradient " + to_string(gs) + " of '" + w.name + "' " + to_string(w.shape) +
                          " is neither dense nor row-sparse");
    }
    Tensor& g = b.tensor(grad);
    g.gradient_of = kNone;  // consumed in the backward pass
    g.role = TensorRole::gradient;
    const std::string& n = w.name;
    Operator op = make_op(b, "sparse_update(" + n + ")", "SparseUpdate");
    op.phase = Phase::backward_dw;
    op.kind = OpKind::embedding;
    op.dims = {LoopDim{"R", gs[0]}, LoopDim{"K", gs[1]}};
    const std::vector<AffineExpr> rows{AffineExpr::of_dim(0), AffineExpr::of_dim(1)};
    auto row_operand = [&](TensorId t, OperandSlot slot, bool per_row) {
      Operand o;
      o.tensor = t;
      o.slot = slot;
      o.precision_bits = bits_of(b.tensor(t).dtype);
      o.access = per_row ? std::vector<AffineExpr>{rows[0]} : rows;
      o.indirect = true;
      return o;
    };
    std::vector<std::pair<TensorId, TensorId>> states;  // (state, its updated version)
    auto state = [&](const std::string& name, Shape shape) {
      const TensorId s = add(b, n + ":" + name, shape, ElementType::fp32, TensorRole::optimizer_state);
      states.emplace_back(s, add(b, n + ":" + name + "'", shape, ElementType::fp32, TensorRole::optimizer_state, s));
    };
    if (w.sparse_update == SparseUpdate::rowwise_adagrad) {
      state("momentum1", {w.shape[0]});  // one fp32 per row: the mean of g² over the row, accumulated
      op.ops_per_iteration = 4;           // g² and its row sum, the scaled step, the subtraction
      op.type = "RowwiseAdagradUpdate";
    } else if (w.sparse_update == SparseUpdate::adagrad) {
      state("momentum1", w.shape);
      op.ops_per_iteration = 6;
      op.type = "AdagradUpdate";
    } else {
      op.ops_per_iteration = 2;
      op.type = "SgdUpdate";
    }
    const TensorId updated = add(b, n + "'", w.shape, w.dtype, TensorRole::weight, w.id);
    op.operands.push_back(row_operand(updated, OperandSlot::O, false));
    for (const auto& [s, s2] : states) op.operands.push_back(row_operand(s2, OperandSlot::O, b.tensor(s).shape.size() == 1));
    Operand go = row_operand(grad, OperandSlot::I1, false);
    go.indirect = false;  // the gradient's own rows, in lookup order
    op.operands.push_back(go);
    op.operands.push_back(row_operand(w.id, OperandSlot::I2, false));
    for (const auto& [s, s2] : states) op.operands.push_back(row_operand(s, OperandSlot::I2, b.tensor(s).shape.size() == 1));
    b.add_operator(std::move(op));
  }
};

// --------------------------------------------------------------------------------------------- helpers
ParamSpec lr(double def) {
  return ParamSpec::number("lr", def).with_bounds(Bounds::positive()).with_doc("learning rate (does not change the cost)");
}
ParamSpec weight_decay(double def) {
  return ParamSpec::number("weight_decay", def)
      .with_bounds(Bounds::non_negative())
      .with_doc("weight decay; > 0 adds 2 operations per element where it is coupled to the gradient");
}
PluginInfo info(const std::string& name, const std::string& summary, std::vector<ParamSpec> params) {
  PluginInfo i;
  i.kind = PluginKind::optimizer;
  i.name = name;
  i.version = "2.0.0";
  i.summary = summary;
  i.description = "Adds the optimizer states of every trainable parameter (persistent, in optimizer_state precision) "
                  "and its update in phase 'optimizer' (docs/training.md lists the operation counts). With "
                  "[precision] master weights the update works on an fp32 master copy and casts it to the working "
                  "weights; with loss_scaling the gradients are unscaled and checked first.";
  i.params = std::move(params);
  return i;
}

// -------------------------------------------------------------------------------------------- plugins
class Sgd final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("sgd", "Plain SGD: w -= lr·g (2 operations per element, no state)", {lr(0.01), weight_decay(0)});
  }
  explicit Sgd(const ParamValues& p) : decay_(p.get_number("weight_decay") > 0) {}
  Plan plan() const override { return Plan{{}, 2.0 + (decay_ ? 2 : 0)}; }
  std::string type_name() const override { return "SgdUpdate"; }

 private:
  bool decay_;
};

class Momentum final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("momentum", "SGD with momentum: b = μb + g; w -= lr·b (1 state; 4 operations, Nesterov 6)",
                {lr(0.01), ParamSpec::number("momentum", 0.9).with_bounds(Bounds::fraction()).with_doc("μ"),
                 ParamSpec::boolean("nesterov", false).with_doc("step with g + μb (2 more operations per element)"),
                 weight_decay(0)});
  }
  explicit Momentum(const ParamValues& p)
      : nesterov_(p.get_bool("nesterov")), decay_(p.get_number("weight_decay") > 0) {}
  Plan plan() const override { return Plan{{"momentum_buffer"}, (nesterov_ ? 6.0 : 4.0) + (decay_ ? 2 : 0)}; }
  std::string type_name() const override { return nesterov_ ? "NesterovUpdate" : "MomentumUpdate"; }

 private:
  bool nesterov_;
  bool decay_;
};

class Adam final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("adam", "Adam: two moments (8 bytes per parameter in fp32), 14 operations per element (MONET's count)",
                {lr(1e-3), ParamSpec::number("beta1", 0.9).with_bounds(Bounds::fraction()).with_doc("first-moment decay"),
                 ParamSpec::number("beta2", 0.999).with_bounds(Bounds::fraction()).with_doc("second-moment decay"),
                 ParamSpec::number("eps", 1e-8).with_bounds(Bounds::positive()).with_doc("denominator term"),
                 weight_decay(0),
                 ParamSpec::boolean("amsgrad", false).with_doc("keep the maximum second moment (a third state, +2 operations)")});
  }
  explicit Adam(const ParamValues& p) : amsgrad_(p.get_bool("amsgrad")), decay_(p.get_number("weight_decay") > 0) {}
  Plan plan() const override {
    Plan p{{"exp_avg", "exp_avg_sq"}, 14.0 + (decay_ ? 2 : 0)};
    if (amsgrad_) {
      p.states.push_back("max_exp_avg_sq");
      p.update_ops += 2;
    }
    return p;
  }
  std::string type_name() const override { return "AdamUpdate"; }

 private:
  bool amsgrad_;
  bool decay_;
};

class AdamW final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("adamw", "AdamW: Adam with decoupled weight decay, 16 operations per element, two moments",
                {lr(1e-3), ParamSpec::number("beta1", 0.9).with_bounds(Bounds::fraction()).with_doc("first-moment decay"),
                 ParamSpec::number("beta2", 0.999).with_bounds(Bounds::fraction()).with_doc("second-moment decay"),
                 ParamSpec::number("eps", 1e-8).with_bounds(Bounds::positive()).with_doc("denominator term"),
                 ParamSpec::number("weight_decay", 0.01).with_bounds(Bounds::non_negative()).with_doc("decoupled decay λ")});
  }
  explicit AdamW(const ParamValues& /*params*/) {}
  Plan plan() const override { return Plan{{"exp_avg", "exp_avg_sq"}, 16}; }
  std::string type_name() const override { return "AdamWUpdate"; }
};

class Adagrad final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("adagrad", "Adagrad: s += g²; w -= lr·g/(√s + ε) (1 state, 6 operations per element)",
                {lr(0.01), ParamSpec::number("eps", 1e-10).with_bounds(Bounds::positive()).with_doc("denominator term"),
                 weight_decay(0)});
  }
  explicit Adagrad(const ParamValues& p) : decay_(p.get_number("weight_decay") > 0) {}
  Plan plan() const override { return Plan{{"sum"}, 6.0 + (decay_ ? 2 : 0)}; }
  std::string type_name() const override { return "AdagradUpdate"; }

 private:
  bool decay_;
};

class RmsProp final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("rmsprop", "RMSprop: v = αv + (1−α)g²; w -= lr·g/(√v + ε) (1 state, 8 operations; +momentum, +centered)",
                {lr(0.01), ParamSpec::number("alpha", 0.99).with_bounds(Bounds::fraction()).with_doc("smoothing"),
                 ParamSpec::number("eps", 1e-8).with_bounds(Bounds::positive()).with_doc("denominator term"),
                 ParamSpec::number("momentum", 0.0).with_bounds(Bounds::non_negative()).with_doc("> 0 adds a momentum buffer (+2 operations)"),
                 ParamSpec::boolean("centered", false).with_doc("subtract the mean gradient: a grad_avg state (+4 operations)"),
                 weight_decay(0)});
  }
  explicit RmsProp(const ParamValues& p)
      : momentum_(p.get_number("momentum") > 0), centered_(p.get_bool("centered")), decay_(p.get_number("weight_decay") > 0) {}
  Plan plan() const override {
    Plan p{{"square_avg"}, 8.0 + (decay_ ? 2 : 0)};
    if (momentum_) {
      p.states.push_back("momentum_buffer");
      p.update_ops += 2;
    }
    if (centered_) {
      p.states.push_back("grad_avg");
      p.update_ops += 4;
    }
    return p;
  }
  std::string type_name() const override { return "RmsPropUpdate"; }

 private:
  bool momentum_;
  bool centered_;
  bool decay_;
};

class Adafactor final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("adafactor",
                "Adafactor (β1 = 0): factored row/column second-moment statistics for matrices (≈ 0 bytes per "
                "parameter), a full one for vectors; 12 operations per element + row, column reductions",
                {lr(1e-2), ParamSpec::number("beta2_decay", -0.8).with_doc("decay-rate exponent"),
                 ParamSpec::number("eps1", 1e-30).with_bounds(Bounds::positive()).with_doc("regularisation of g²"),
                 ParamSpec::number("eps2", 1e-3).with_bounds(Bounds::positive()).with_doc("relative step floor"),
                 ParamSpec::number("clip_threshold", 1.0).with_bounds(Bounds::positive()).with_doc("update RMS clip"),
                 weight_decay(0)});
  }
  explicit Adafactor(const ParamValues& /*params*/) {}
  Plan plan() const override {
    Plan p{{}, 12};
    p.factored = true;
    return p;
  }
  std::string type_name() const override { return "AdafactorUpdate"; }
};

class Lion final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("lion", "Lion: w -= lr·(sign(β1m + (1−β1)g) + λw); m = β2m + (1−β2)g (1 state, 10 operations)",
                {lr(1e-4), ParamSpec::number("beta1", 0.9).with_bounds(Bounds::fraction()).with_doc("interpolation"),
                 ParamSpec::number("beta2", 0.99).with_bounds(Bounds::fraction()).with_doc("momentum decay"),
                 weight_decay(0)});
  }
  explicit Lion(const ParamValues& /*params*/) {}
  Plan plan() const override { return Plan{{"exp_avg"}, 10}; }
  std::string type_name() const override { return "LionUpdate"; }
};

class Lamb final : public OptimizerBase {
 public:
  static PluginInfo describe() {
    return info("lamb",
                "LAMB: the Adam direction (14 operations), the norms of the weight and of the direction per "
                "parameter (two reductions), then the update scaled by the trust ratio (4 operations); two moments",
                {lr(1e-3), ParamSpec::number("beta1", 0.9).with_bounds(Bounds::fraction()).with_doc("first-moment decay"),
                 ParamSpec::number("beta2", 0.999).with_bounds(Bounds::fraction()).with_doc("second-moment decay"),
                 ParamSpec::number("eps", 1e-6).with_bounds(Bounds::positive()).with_doc("denominator term"),
                 ParamSpec::number("weight_decay", 0.01).with_bounds(Bounds::non_negative()).with_doc("decoupled decay λ")});
  }
  explicit Lamb(const ParamValues& /*params*/) {}
  Plan plan() const override {
    Plan p{{"exp_avg", "exp_avg_sq"}, 18};
    p.trust_ratio = true;
    return p;
  }
  std::string type_name() const override { return "LambUpdate"; }
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Sgd, monet::plugins::Momentum, monet::plugins::Adam, monet::plugins::AdamW,
                     monet::plugins::Adagrad, monet::plugins::RmsProp, monet::plugins::Adafactor,
                     monet::plugins::Lion, monet::plugins::Lamb)
