#pragma once
// Small graph-building helpers shared by the unit tests that assemble graphs by hand.
#include <string>

#include "monet/ir/graph.hpp"

namespace monet::test {

/// A tensor of the given shape, role and element type (fp32 unless said).
inline TensorId tensor(GraphBuilder& b, const std::string& name, Shape shape, TensorRole role = TensorRole::activation,
                       ElementType dtype = ElementType::fp32) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.role = role;
  t.dtype = dtype;
  return b.add_tensor(std::move(t));
}

/// An operator with only its name set, for the ops:: constructors to fill in.
inline Operator named(const std::string& name) {
  Operator op;
  op.name = name;
  return op;
}

}  // namespace monet::test
