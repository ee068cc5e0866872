#pragma once
// A graph of operators and tensors, immutable once built and shared by pointer (copy-on-write for search).
// Operators are stored in a topological order: every operator's inputs are produced by earlier operators.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "monet/ir/operator.hpp"

namespace monet {

class MONET_API Graph {
 public:
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::vector<Tensor>& tensors() const { return tensors_; }
  [[nodiscard]] const std::vector<Operator>& operators() const { return operators_; }
  [[nodiscard]] const Tensor& tensor(TensorId id) const { return tensors_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] const Operator& op(OperatorId id) const { return operators_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] const Tensor* find_tensor(std::string_view name) const;
  [[nodiscard]] const Operator* find_operator(std::string_view name) const;
  /// Tensors without a producer that the network reads: inputs, labels, weights, buffers.
  [[nodiscard]] std::vector<TensorId> sources() const;
  /// Tensors that no operator consumes (the network's outputs).
  [[nodiscard]] const std::vector<TensorId>& outputs() const { return outputs_; }

  // Totals over all operators.
  [[nodiscard]] std::int64_t total_macs() const;
  [[nodiscard]] double total_vector_ops() const;
  [[nodiscard]] std::int64_t parameter_count() const;  // elements of weight tensors (trainable and frozen)
  [[nodiscard]] std::int64_t trainable_parameter_count() const;  // elements of weights that are not frozen
  [[nodiscard]] std::int64_t buffer_count() const;     // elements of buffer tensors

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<Tensor> tensors_;
  std::vector<Operator> operators_;
  std::vector<TensorId> outputs_;
  std::unordered_map<std::string, TensorId> tensor_index_;
  std::unordered_map<std::string, OperatorId> operator_index_;
};

using GraphPtr = std::shared_ptr<const Graph>;

/// Builds a Graph; build() checks every invariant and throws a UserError naming the operator or tensor
/// (and its origin) when the description is inconsistent.
class MONET_API GraphBuilder {
 public:
  explicit GraphBuilder(std::string name);
  /// Starts from an existing graph (to extend it: training graphs, recompute operators).
  explicit GraphBuilder(const Graph& base);

  TensorId add_tensor(Tensor t);  // id assigned; the name must be unique; its shape passes check_shape
  /// A UserError at `where` unless every size is positive and the tensor's size in bits fits monet's 64-bit
  /// counters. add_tensor checks at the tensor's origin; a frontend calls it to point at the shape itself.
  static void check_shape(const std::string& tensor, const Shape& shape, const SourceLocation& where);
  OperatorId add_operator(Operator op);  // id assigned; operands must refer to existing tensors
  [[nodiscard]] const Tensor& tensor(TensorId id) const { return tensors_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] Tensor& tensor(TensorId id) { return tensors_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] const Operator& op(OperatorId id) const { return operators_.at(static_cast<std::size_t>(id)); }
  /// For adjustments after construction (precisions, attributes); build() re-checks the graph.
  [[nodiscard]] Operator& op(OperatorId id) { return operators_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] TensorId find_tensor(std::string_view name) const;  // kNone when absent
  [[nodiscard]] bool has_operator(std::string_view name) const { return operator_names_.contains(std::string(name)); }
  [[nodiscard]] std::size_t operator_count() const { return operators_.size(); }

  [[nodiscard]] GraphPtr build() &&;

 private:
  std::string name_;
  std::vector<Tensor> tensors_;
  std::vector<Operator> operators_;
  std::unordered_map<std::string, TensorId> tensor_names_;
  std::unordered_map<std::string, OperatorId> operator_names_;
};

}  // namespace monet
