#pragma once
// What the workload generators (frontend plugins that build a network from its dimensions: gpt, dlrm) build their
// graphs with: named tensors and operators at the [workload] table's location, and PyTorch's nn.Linear.
#include <optional>
#include <string>
#include <utility>

#include "monet/ir/ops.hpp"

namespace monet {

class GeneratedGraph {
 protected:
  GeneratedGraph(const std::string& name, SourceLocation where) : where_(std::move(where)), b_(name) {}

  TensorId tensor(const std::string& name, Shape shape, ElementType dtype, TensorRole role) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.role = role;
    t.origin = where_;
    return b_.add_tensor(std::move(t));
  }

  [[nodiscard]] Operator op(const std::string& name, const std::string& module, const std::string& type) const {
    Operator o;
    o.name = name;
    o.module = module;
    o.type = type;
    o.origin = where_;
    return o;
  }

  /// nn.Linear: y = x·Wᵀ (+ b), W [out, in], everything in `dtype`; the operator is its own module.
  TensorId linear(const std::string& name, TensorId x, std::int64_t out, ElementType dtype, bool bias = true) {
    Shape shape = b_.tensor(x).shape;
    const std::int64_t in = shape.back();
    shape.back() = out;
    const TensorId y = tensor(name, shape, dtype, TensorRole::activation);
    Operator o = op(name, name, "MatMul");
    o.kind = OpKind::gemm;
    ops::matmul(b_, std::move(o), x, tensor(name + ".weight", {out, in}, dtype, TensorRole::weight),
                bias ? std::optional<TensorId>(tensor(name + ".bias", {out}, dtype, TensorRole::weight)) : std::nullopt, y,
                ops::MatmulSpec{false, true});
    return y;
  }

  SourceLocation where_;
  GraphBuilder b_;
};

}  // namespace monet
