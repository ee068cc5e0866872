#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "monet/ir/types.hpp"
#include "monet/util/error.hpp"

namespace monet {

using Shape = std::vector<std::int64_t>;

MONET_API std::string to_string(const Shape& shape);  // "[1, 64, 56, 56]"
MONET_API std::int64_t element_count(const Shape& shape);

/// A value of the graph. Tensors are in SSA form: at most one producing operator.
struct Tensor {
  TensorId id = kNone;
  std::string name;
  Shape shape;
  ElementType dtype = ElementType::fp32;
  TensorRole role = TensorRole::activation;
  bool frozen = false;                // a weight that receives no gradient (fine-tuning, LoRA-style studies)
  TensorId in_place_of = kNone;       // the tensor this one overwrites in place (optimizer updates): one storage
  TensorId gradient_of = kNone;       // a parameter's complete gradient (what the optimizer reads)
  OperatorId producer = kNone;       // filled by GraphBuilder::build
  std::vector<OperatorId> consumers;  // filled by GraphBuilder::build, in operator order
  SourceLocation origin;             // where the user defined it (for messages)
  SparseUpdate sparse_update = SparseUpdate::rowwise_adagrad;  // read only where the gradient is row-sparse

  [[nodiscard]] std::int64_t elements() const { return element_count(shape); }
  [[nodiscard]] std::int64_t bits() const { return elements() * bits_of(dtype); }
  /// Storage in whole bytes (sub-byte types are packed, rounded up).
  [[nodiscard]] std::int64_t bytes() const { return (bits() + 7) / 8; }
  [[nodiscard]] bool is_parameter() const { return role == TensorRole::weight; }
  [[nodiscard]] bool is_trainable() const { return role == TensorRole::weight && !frozen; }
};

}  // namespace monet
