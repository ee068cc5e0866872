#pragma once
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
//
// generator.cpp walks the graph (micro-batches, requires-grad, gradient sums, accumulation), loss.cpp appends the
// loss; each operator family's gradient builder, and the tensors its operators save, is in the family's file.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/ir/ops.hpp"
#include "monet/plugin/training_settings.hpp"
#include "rules.hpp"

namespace monet::plugins::autodiff {

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
  Generator(const Graph& forward, const TrainingSettings& settings, ClassAxis class_axis);

  GraphPtr run();

 private:
  // ------------------------------------------------------------------------------------------- helpers
  std::string unique_tensor_name(const std::string& base);
  std::string unique_op_name(const std::string& base);
  TensorId new_tensor(const std::string& name, Shape shape, ElementType dtype, TensorRole role);
  Operator make_op(const std::string& name, OpKind kind, std::string type, Phase phase, OperatorId from);
  Operand operand(TensorId t, OperandSlot slot, std::vector<AffineExpr> access) const {
    return ops::operand(b_, t, slot, std::move(access));
  }
  /// A gradient tensor for forward tensor x (of this instance).
  TensorId grad_tensor(const Instance& inst, TensorId fx);
  bool is_weight(TensorId fx) const { return f_.tensor(fx).role == TensorRole::weight; }
  Phase phase_for(TensorId fx) const { return is_weight(fx) ? Phase::backward_dw : Phase::backward_dx; }
  void add_piece(TensorId fx, TensorId g, bool disjoint = false) { grads_[fx].push_back(Piece{g, disjoint}); }
  TensorId T(const Instance& inst, TensorId fx) const { return inst.tensor[static_cast<std::size_t>(fx)]; }
  /// A backward operator with the forward operator's loop nest.
  Operator like(const Operator& f, const Instance& inst, const std::string& suffix, std::string type, Phase phase);

  // -------------------------------------------------------------------- the walk (generator.cpp)
  Instance identity() const;
  Instance copy_forward(const std::string& suffix);
  void augment(Instance& inst);
  void compute_requires_grad(const Instance& inst);
  bool rg(TensorId fx) const { return rg_[static_cast<std::size_t>(fx)]; }
  void backward(Instance& inst, TensorId flogits, TensorId dlogits);
  TensorId combine(TensorId fx, std::vector<Piece> pieces, bool final_weight, const Instance& inst);
  void apply_rule(Instance& inst, const Operator& f, TensorId dy);

  // ------------------------------------------------------------------------------ loss (loss.cpp)
  TensorId find_logits() const;
  TensorId append_loss(const Instance& inst, TensorId flogits);
  TensorId append_binary_loss(const Instance& inst, TensorId flogits);

  // ------------------------------------------------- tensors the forward operators save (augment())
  // `op` is fop's copy in the training graph, `base` the name of its output.
  void save_norm_statistics(Instance& inst, const Operator& fop, Operator& op, const std::string& base);
  void save_softmax_lse(Instance& inst, const Operator& fop, Operator& op, const std::string& base);
  void save_pool_indices(Instance& inst, const Operator& fop, Operator& op, const std::string& base);
  void save_dropout_mask(Instance& inst, const Operator& fop, Operator& op, const std::string& base);

  // --------------------------------------------------------- gradient builders, one file per family
  void bilinear(Instance& inst, const Operator& f, TensorId dy);                                // bilinear.cpp
  void bias_grad(Instance& inst, const Operator& f, const Operand& bias, TensorId dy);          // bilinear.cpp
  void conv_dx(Instance& inst, const Operator& f, TensorId dy);                                 // conv.cpp
  void flash_attention(Instance& inst, const Operator& f, TensorId dy);                         // attention.cpp
  void pointwise(Instance& inst, const Operator& f, TensorId dy);                               // pointwise.cpp
  static bool reads_every_dim(const std::vector<AffineExpr>& access, const std::vector<LoopDim>& dims);
  void data_movement(Instance& inst, const Operator& f, TensorId dy, const GradientRule& rule);  // data_movement.cpp
  void view(Instance& inst, const Operator& f, TensorId dy);                                    // data_movement.cpp
  void softmax(Instance& inst, const Operator& f, TensorId dy);                                 // softmax.cpp
  void norm(Instance& inst, const Operator& f, TensorId dy);                                    // norm.cpp
  void batch_norm(Instance& inst, const Operator& f, TensorId dy);
  void statistics_norm(Instance& inst, const Operator& f, TensorId dy, const std::vector<AffineExpr>& stats_access);
  static bool training_bn(const Operator& op);
  void pooling(Instance& inst, const Operator& f, TensorId dy);                                 // pooling.cpp
  TensorId unpadded_pool_input(const Operator& pool, TensorId fx) const;
  void embedding(Instance& inst, const Operator& f, TensorId dy);                               // embedding.cpp
  void embedding_bag(Instance& inst, const Operator& f, TensorId dy);

  const Graph& f_;
  TrainingSettings s_;
  GraphBuilder b_;
  ClassAxis class_axis_;
  ElementType mask_type_;
  std::vector<bool> rg_;
  std::map<TensorId, std::vector<Piece>> grads_;  // forward tensor -> gradient pieces (this micro-batch)
  std::set<std::string> warned_;
};

}  // namespace monet::plugins::autodiff
