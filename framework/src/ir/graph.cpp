#include "monet/ir/graph.hpp"

#include <algorithm>

namespace monet {

// ------------------------------------------------------------------------------------------------ Graph

const Tensor* Graph::find_tensor(std::string_view n) const {
  auto it = tensor_index_.find(std::string(n));
  return it == tensor_index_.end() ? nullptr : &tensors_[static_cast<std::size_t>(it->second)];
}

const Operator* Graph::find_operator(std::string_view n) const {
  auto it = operator_index_.find(std::string(n));
  return it == operator_index_.end() ? nullptr : &operators_[static_cast<std::size_t>(it->second)];
}

std::vector<TensorId> Graph::sources() const {
  std::vector<TensorId> out;
  for (const Tensor& t : tensors_) {
    if (t.producer == kNone && !t.consumers.empty()) out.push_back(t.id);
  }
  return out;
}

std::int64_t Graph::total_macs() const {
  std::int64_t n = 0;
  for (const Operator& o : operators_) n += o.macs();
  return n;
}

double Graph::total_vector_ops() const {
  double n = 0;
  for (const Operator& o : operators_) n += o.vector_ops();
  return n;
}

// Stored tensors only: the versions an optimizer writes (in place) are not new parameters.
std::int64_t Graph::parameter_count() const {
  std::int64_t n = 0;
  for (const Tensor& t : tensors_) {
    if (t.role == TensorRole::weight && t.producer == kNone) n += t.elements();
  }
  return n;
}

std::int64_t Graph::trainable_parameter_count() const {
  std::int64_t n = 0;
  for (const Tensor& t : tensors_) {
    if (t.is_trainable() && t.producer == kNone) n += t.elements();
  }
  return n;
}

std::int64_t Graph::buffer_count() const {
  std::int64_t n = 0;
  for (const Tensor& t : tensors_) {
    if (t.role == TensorRole::buffer && t.producer == kNone) n += t.elements();
  }
  return n;
}

// ----------------------------------------------------------------------------------------- GraphBuilder

GraphBuilder::GraphBuilder(std::string name) : name_(std::move(name)) {}

GraphBuilder::GraphBuilder(const Graph& base)
    : name_(base.name_), tensors_(base.tensors_), operators_(base.operators_) {
  for (const Tensor& t : tensors_) tensor_names_[t.name] = t.id;
  for (const Operator& o : operators_) operator_names_[o.name] = o.id;
}

void GraphBuilder::check_shape(const std::string& tensor, const Shape& shape, const SourceLocation& where) {
  for (std::int64_t d : shape) {
    if (d <= 0) throw UserError(where, "tensor '" + tensor + "' has a non-positive dimension: " + to_string(shape));
  }
  // Sizes are counted in bits in 64-bit integers, and summed over tensors: keep 8 bits of headroom.
  std::int64_t bits = 64;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(bits, d, &bits) || bits > (std::int64_t{1} << 55)) {
      throw UserError(where, "tensor '" + tensor + "' " + to_string(shape) +
                                 " is too large: its size in bits does not fit monet's 64-bit counters");
    }
  }
}

TensorId GraphBuilder::add_tensor(Tensor t) {
  if (t.name.empty()) throw UserError(t.origin, "a tensor needs a name");
  if (tensor_names_.contains(t.name)) {
    throw UserError(t.origin, "tensor '" + t.name + "' is defined twice");
  }
  check_shape(t.name, t.shape, t.origin);
  t.id = static_cast<TensorId>(tensors_.size());
  t.producer = kNone;
  t.consumers.clear();
  tensor_names_[t.name] = t.id;
  tensors_.push_back(std::move(t));
  return tensors_.back().id;
}

TensorId GraphBuilder::find_tensor(std::string_view n) const {
  auto it = tensor_names_.find(std::string(n));
  return it == tensor_names_.end() ? kNone : it->second;
}

namespace {
[[noreturn]] void op_error(const Operator& op, const std::string& message) {
  throw UserError(op.origin, "operator '" + op.name + "'" + (op.type.empty() ? "" : " (" + op.type + ")") + ": " + message);
}

/// Checks an operand's access relation against its tensor.
void check_access(const Operator& op, const Operand& o, const Tensor& t) {
  if (o.access.empty()) return;
  if (o.access.size() != t.shape.size()) {
    op_error(op, "operand '" + t.name + "' has " + std::to_string(o.access.size()) +
                     " index expressions for a tensor of rank " + std::to_string(t.shape.size()));
  }
  const auto ranges = op.full_ranges();
  const auto names = op.dim_names();
  for (std::size_t axis = 0; axis < t.shape.size(); ++axis) {
    const AffineExpr& e = o.access[axis];
    for (const auto& term : e.terms) {
      if (term.dim < 0 || static_cast<std::size_t>(term.dim) >= op.dims.size()) {
        op_error(op, "operand '" + t.name + "' indexes a loop dimension that does not exist");
      }
    }
    const Range b = e.bounds(ranges);
    const std::int64_t extent = t.shape[axis];
    const std::string what = "axis " + std::to_string(axis) + " of '" + t.name + "' " + to_string(t.shape) +
                             " indexed by " + e.str(names) + " spans [" + std::to_string(b.begin) + ", " +
                             std::to_string(b.end) + ")";
    if (o.is_output()) {
      // A plain index must cover its axis exactly; a compound one (scatter, strided) must stay inside it
      // after clipping the padding, and touch it.
      if (o.indirect && axis == 0) continue;
      if (e.is_plain_dim() ? (b.begin != 0 || b.end != extent) : b.intersect(Range{0, extent}).empty()) {
        op_error(op, what + ": an output must be covered exactly");
      }
    } else if (e.is_plain_dim() && b.size() > extent && !(o.indirect && axis == 0)) {
      op_error(op, what + ": the loop dimension is larger than the tensor");
    } else if (b.end <= 0 || b.begin >= extent) {
      op_error(op, what + ": it never touches the tensor");
    }
  }
}
}  // namespace

OperatorId GraphBuilder::add_operator(Operator op) {
  if (op.name.empty()) throw UserError(op.origin, "an operator needs a name");
  if (operator_names_.contains(op.name)) throw UserError(op.origin, "operator '" + op.name + "' is defined twice");
  for (const LoopDim& d : op.dims) {
    if (d.size <= 0) op_error(op, "loop dimension " + d.name + " has size " + std::to_string(d.size));
  }
  std::int64_t iterations = 1;  // with headroom for operations per iteration and sums over operators
  for (const LoopDim& d : op.dims) {
    if (__builtin_mul_overflow(iterations, d.size, &iterations) || iterations > (std::int64_t{1} << 55)) {
      op_error(op, "its loop nest is too large: the iteration count does not fit monet's 64-bit counters");
    }
  }
  for (const Operand& o : op.operands) {
    if (o.tensor < 0 || static_cast<std::size_t>(o.tensor) >= tensors_.size()) op_error(op, "operand refers to no tensor");
    // 0 bits: an operand that is not stored or moved (ZigZag's pooling "weights")
    if (o.precision_bits < 0 || (o.precision_bits == 0 && o.is_output())) {
      op_error(op, "operand '" + tensor(o.tensor).name + "' has no precision");
    }
    check_access(op, o, tensor(o.tensor));
  }
  op.id = static_cast<OperatorId>(operators_.size());
  operator_names_[op.name] = op.id;
  operators_.push_back(std::move(op));
  return operators_.back().id;
}

GraphPtr GraphBuilder::build() && {
  auto g = std::make_shared<Graph>();
  g->name_ = name_;
  g->tensors_ = std::move(tensors_);
  g->operators_ = std::move(operators_);
  for (Tensor& t : g->tensors_) {
    t.producer = kNone;
    t.consumers.clear();
  }
  for (const Operator& op : g->operators_) {
    for (const Operand& o : op.operands) {
      Tensor& t = g->tensors_[static_cast<std::size_t>(o.tensor)];
      if (o.is_output()) {
        if (t.producer != kNone && t.producer != op.id) {
          op_error(op, "tensor '" + t.name + "' is already produced by '" +
                           g->operators_[static_cast<std::size_t>(t.producer)].name + "'");
        }
        // Parameters are written by optimizer updates, or in place by an update fused into the backward pass (a
        // sparse table's rows: FBGEMM's table-batched embeddings).
        const bool fused = op.phase == Phase::backward_dw && t.in_place_of != kNone;
        const bool update = (op.phase == Phase::optimizer || fused) && t.role != TensorRole::input && t.role != TensorRole::label;
        if (!update && (t.role == TensorRole::weight || t.role == TensorRole::input || t.role == TensorRole::label)) {
          op_error(op, "writes '" + t.name + "', which is a " + to_string(t.role));
        }
        t.producer = op.id;
      }
    }
  }
  // Topological order: an operator may only read tensors produced by earlier operators (or sources).
  for (const Operator& op : g->operators_) {
    for (const Operand& o : op.operands) {
      if (o.is_output()) continue;
      Tensor& t = g->tensors_[static_cast<std::size_t>(o.tensor)];
      if (t.producer != kNone && t.producer >= op.id) {
        op_error(op, "reads '" + t.name + "' before it is produced (operators must be in dependency order)");
      }
      if (t.consumers.empty() || t.consumers.back() != op.id) t.consumers.push_back(op.id);
    }
    for (TensorId k : op.keeps_alive) {
      ensure(k >= 0 && static_cast<std::size_t>(k) < g->tensors_.size(), "keeps_alive refers to no tensor");
    }
  }
  for (const Tensor& t : g->tensors_) {
    if (t.producer != kNone && t.consumers.empty()) g->outputs_.push_back(t.id);
    g->tensor_index_[t.name] = t.id;
  }
  for (const Operator& op : g->operators_) g->operator_index_[op.name] = op.id;
  return g;
}

}  // namespace monet
