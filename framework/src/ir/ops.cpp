#include "monet/ir/ops.hpp"

#include <algorithm>

#include "ops_detail.hpp"

namespace monet::ops {

using detail::add_dim;
using detail::dim;
using detail::fail;
using detail::linear2;

Operand operand(const GraphBuilder& b, TensorId t, OperandSlot slot, std::vector<AffineExpr> access) {
  Operand o;
  o.tensor = t;
  o.slot = slot;
  o.access = std::move(access);
  o.precision_bits = bits_of(b.tensor(t).dtype);
  return o;
}

std::vector<std::string> axis_dim_names(std::size_t rank) {
  switch (rank) {
    case 0: return {};
    case 1: return {"K"};
    case 2: return {"D", "K"};
    case 3: return {"B", "D", "K"};
    case 4: return {"B", "K", "OY", "OX"};
    default: {
      std::vector<std::string> n;
      for (std::size_t i = 0; i + 3 < rank; ++i) n.push_back(i == 0 ? "B" : "B" + std::to_string(i));
      n.insert(n.end(), {"H", "D", "K"});
      return n;
    }
  }
}

// ---------------------------------------------------------------------------------------------- matmul

Shape broadcast_shapes(const std::vector<Shape>& shapes, const SourceLocation& where, const std::string& name) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t axis = rank - s.size() + i;
      if (s[i] == out[axis] || s[i] == 1) continue;
      if (out[axis] == 1) {
        out[axis] = s[i];
        continue;
      }
      std::vector<std::string> txt;
      for (const Shape& x : shapes) txt.push_back(to_string(x));
      fail(where, name, "shapes " + [&] {
        std::string j;
        for (std::size_t k = 0; k < txt.size(); ++k) j += (k ? " and " : "") + txt[k];
        return j;
      }() + " cannot be broadcast together");
    }
  }
  return out;
}

Shape matmul_output_shape(const Shape& a, const Shape& bm, const MatmulSpec& s, const SourceLocation& where,
                          const std::string& name) {
  if (a.size() < 2 || bm.size() < 2) {
    fail(where, name, "matrix product needs operands of rank >= 2, got " + to_string(a) + " and " + to_string(bm));
  }
  const std::int64_t D = s.transpose_a ? a[a.size() - 1] : a[a.size() - 2];
  const std::int64_t Ca = s.transpose_a ? a[a.size() - 2] : a[a.size() - 1];
  const std::int64_t Cb = s.transpose_b ? bm[bm.size() - 1] : bm[bm.size() - 2];
  const std::int64_t K = s.transpose_b ? bm[bm.size() - 2] : bm[bm.size() - 1];
  if (Ca != Cb) {
    fail(where, name, "inner dimensions differ: " + to_string(a) + " x " + to_string(bm) + " (" +
                          std::to_string(Ca) + " vs " + std::to_string(Cb) + ")");
  }
  Shape batch = broadcast_shapes({Shape(a.begin(), a.end() - 2), Shape(bm.begin(), bm.end() - 2)}, where, name);
  batch.push_back(D);
  batch.push_back(K);
  return batch;
}

OperatorId matmul(GraphBuilder& b, Operator op, TensorId ta, TensorId tb, std::optional<TensorId> bias,
                  TensorId output, const MatmulSpec& s) {
  const Shape a = b.tensor(ta).shape;
  const Shape bm = b.tensor(tb).shape;
  const Shape out = b.tensor(output).shape;
  const Shape expected = matmul_output_shape(a, bm, s, op.origin, op.name);
  if (out != expected) fail(op.origin, op.name, "output shape " + to_string(out) + " should be " + to_string(expected));
  if (op.type.empty()) op.type = op.kind == OpKind::gemm ? "Gemm" : "MatMul";
  const std::size_t nbatch = out.size() - 2;
  std::vector<int> batch_dims;
  const auto names = axis_dim_names(out.size() + 0);  // reuse batch names; D K are renamed below
  for (std::size_t i = 0; i < nbatch; ++i) {
    std::string n = nbatch == 1 ? "B" : (i == nbatch - 1 ? "H" : (i == 0 ? "B" : "B" + std::to_string(i)));
    batch_dims.push_back(add_dim(op, n, out[i]));
  }
  const int dD = add_dim(op, "D", out[nbatch]);
  const int dK = add_dim(op, "K", out[nbatch + 1]);
  const int dC = add_dim(op, "C", s.transpose_a ? a[a.size() - 2] : a[a.size() - 1]);
  auto batch_access = [&](const Shape& sh) {
    std::vector<AffineExpr> acc;
    const std::size_t nb = sh.size() - 2;
    for (std::size_t i = 0; i < nb; ++i) {
      const std::size_t out_axis = nbatch - nb + i;
      acc.push_back(sh[i] == 1 && out[out_axis] != 1 ? AffineExpr::constant(0) : dim(batch_dims[out_axis]));
    }
    return acc;
  };
  std::vector<AffineExpr> acc_o = batch_access(out);
  acc_o.push_back(dim(dD));
  acc_o.push_back(dim(dK));
  std::vector<AffineExpr> acc_a = batch_access(a);
  if (s.transpose_a) {
    acc_a.push_back(dim(dC));
    acc_a.push_back(dim(dD));
  } else {
    acc_a.push_back(dim(dD));
    acc_a.push_back(dim(dC));
  }
  std::vector<AffineExpr> acc_b = batch_access(bm);
  if (s.transpose_b) {
    acc_b.push_back(dim(dK));
    acc_b.push_back(dim(dC));
  } else {
    acc_b.push_back(dim(dC));
    acc_b.push_back(dim(dK));
  }
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  op.operands.push_back(operand(b, ta, OperandSlot::I1, std::move(acc_a)));
  op.operands.push_back(operand(b, tb, OperandSlot::I2, std::move(acc_b)));
  if (bias) {
    const Shape& bs = b.tensor(*bias).shape;
    if (bs.empty() || bs.size() > out.size() || bs.back() != out.back() ||
        element_count(bs) != out.back()) {
      fail(op.origin, op.name, "bias shape " + to_string(bs) + " should be [" + std::to_string(out.back()) + "]");
    }
    std::vector<AffineExpr> acc(bs.size() - 1, AffineExpr::constant(0));
    acc.push_back(dim(dK));
    op.operands.push_back(operand(b, *bias, OperandSlot::I2, std::move(acc)));
  }
  op.attributes["transA"] = {s.transpose_a ? 1 : 0};
  op.attributes["transB"] = {s.transpose_b ? 1 : 0};
  (void)names;
  return b.add_operator(std::move(op));
}

// ----------------------------------------------------------------------------------------- elementwise

OperatorId elementwise(GraphBuilder& b, Operator op, const std::vector<TensorId>& inputs, TensorId output,
                       double ops_per_element) {
  const Shape out = b.tensor(output).shape;
  std::vector<Shape> in_shapes;
  for (TensorId t : inputs) in_shapes.push_back(b.tensor(t).shape);
  const Shape expected = broadcast_shapes(in_shapes, op.origin, op.name);
  if (!inputs.empty() && expected != out) {
    fail(op.origin, op.name, "output shape " + to_string(out) + " should be " + to_string(expected));
  }
  op.kind = op.kind == OpKind::view ? OpKind::elementwise : op.kind;
  op.ops_per_iteration = ops_per_element;
  const auto names = axis_dim_names(out.size());
  std::vector<int> dims;
  for (std::size_t i = 0; i < out.size(); ++i) dims.push_back(add_dim(op, names[i], out[i]));
  std::vector<AffineExpr> acc_o;
  for (int d : dims) acc_o.push_back(dim(d));
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(acc_o)));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = in_shapes[k];
    std::vector<AffineExpr> acc;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t axis = out.size() - s.size() + i;
      acc.push_back(s[i] == 1 && out[axis] != 1 ? AffineExpr::constant(0) : dim(dims[axis]));
    }
    op.operands.push_back(operand(b, inputs[k], k == 0 ? OperandSlot::I1 : OperandSlot::I2, std::move(acc)));
  }
  return b.add_operator(std::move(op));
}

// ------------------------------------------------------------------------------- norms, softmax, lookup

using detail::all_of;
using detail::axis_dims;
using detail::trailing_access;

OperatorId batch_norm(GraphBuilder& b, Operator op, TensorId x, TensorId scale, TensorId bias,
                      std::optional<TensorId> mean, std::optional<TensorId> var, TensorId output, bool training) {
  const Shape out = b.tensor(output).shape;
  if (out.size() < 2 || b.tensor(x).shape != out) {
    fail(op.origin, op.name, "batch normalization needs an [N, C, ...] input and an output of the same shape");
  }
  for (std::optional<TensorId> t : {std::optional<TensorId>(scale), std::optional<TensorId>(bias), mean, var}) {
    if (t && b.tensor(*t).shape != Shape{out[1]}) {
      fail(op.origin, op.name, "'" + b.tensor(*t).name + "' should have shape [" + std::to_string(out[1]) + "]");
    }
  }
  op.kind = OpKind::norm;
  if (op.type.empty()) op.type = "BatchNormalization";
  op.ops_per_iteration = training ? kBatchNormTrainingOps : kBatchNormInferenceOps;
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  for (std::optional<TensorId> t : {std::optional<TensorId>(scale), std::optional<TensorId>(bias), mean, var}) {
    if (t) op.operands.push_back(operand(b, *t, OperandSlot::I2, {dim(dims[1])}));
  }
  op.attributes["training_mode"] = {training ? 1 : 0};
  return b.add_operator(std::move(op));
}

OperatorId layer_norm(GraphBuilder& b, Operator op, TensorId x, std::optional<TensorId> scale,
                      std::optional<TensorId> bias, TensorId output, std::size_t axis) {
  const Shape out = b.tensor(output).shape;
  if (b.tensor(x).shape != out || axis >= out.size()) {
    fail(op.origin, op.name, "layer normalization: bad axis or output shape");
  }
  const Shape normalized(out.begin() + static_cast<std::ptrdiff_t>(axis), out.end());
  op.kind = OpKind::norm;
  if (op.type.empty()) op.type = "LayerNormalization";
  op.ops_per_iteration = kLayerNormOps;
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  for (std::optional<TensorId> t : {scale, bias}) {
    if (!t) continue;
    if (b.tensor(*t).shape != normalized) {
      fail(op.origin, op.name, "'" + b.tensor(*t).name + "' should have shape " + to_string(normalized));
    }
    op.operands.push_back(operand(b, *t, OperandSlot::I2, trailing_access(normalized, out, dims)));
  }
  op.attributes["axis"] = {static_cast<std::int64_t>(axis)};
  return b.add_operator(std::move(op));
}

OperatorId softmax(GraphBuilder& b, Operator op, TensorId x, std::optional<TensorId> mask, TensorId output,
                   std::size_t axis) {
  const Shape out = b.tensor(output).shape;
  if (b.tensor(x).shape != out || axis >= out.size()) fail(op.origin, op.name, "softmax: bad axis or output shape");
  op.kind = OpKind::softmax;
  if (op.type.empty()) op.type = "Softmax";
  op.ops_per_iteration = kSoftmaxOps + (mask ? 1 : 0);
  const std::vector<int> dims = axis_dims(op, out);
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  op.operands.push_back(operand(b, x, OperandSlot::I1, all_of(dims)));
  if (mask) {
    const Shape& ms = b.tensor(*mask).shape;
    if (broadcast_shapes({ms, out}, op.origin, op.name) != out) {
      fail(op.origin, op.name, "mask " + to_string(ms) + " does not broadcast to " + to_string(out));
    }
    op.operands.push_back(operand(b, *mask, OperandSlot::I2, trailing_access(ms, out, dims)));
  }
  op.attributes["axis"] = {static_cast<std::int64_t>(axis)};
  return b.add_operator(std::move(op));
}

OperatorId embedding(GraphBuilder& b, Operator op, TensorId table, std::optional<TensorId> indices, TensorId output,
                     bool positions) {
  const Shape out = b.tensor(output).shape;
  const Shape& ts = b.tensor(table).shape;
  if (ts.size() != 2 || out.empty() || out.back() != ts[1]) {
    fail(op.origin, op.name, "embedding: table " + to_string(ts) + " and output " + to_string(out) + " disagree");
  }
  op.kind = OpKind::embedding;
  if (op.type.empty()) op.type = "Gather";
  op.ops_per_iteration = 0;
  const std::vector<int> dims = axis_dims(op, out);
  const int lookup = out.size() >= 2 ? dims[dims.size() - 2] : -1;
  op.operands.push_back(operand(b, output, OperandSlot::O, all_of(dims)));
  Operand tab = operand(b, table, OperandSlot::I2,
                        {lookup >= 0 ? dim(lookup) : AffineExpr::constant(0), dim(dims.back())});
  if (indices) {
    const Shape& is = b.tensor(*indices).shape;
    if (Shape(out.begin(), out.end() - 1) != is) {
      fail(op.origin, op.name, "embedding: indices " + to_string(is) + " do not match output " + to_string(out));
    }
    std::vector<AffineExpr> acc(dims.size() - 1);
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) acc[i] = dim(dims[i]);
    op.operands.push_back(operand(b, *indices, OperandSlot::I1, std::move(acc)));
    tab.indirect = !positions;
    if (positions && (lookup < 0 || out[out.size() - 2] > ts[0])) {
      fail(op.origin, op.name, "embedding: more positions than table rows");
    }
  } else if (lookup < 0 || out[out.size() - 2] > ts[0]) {
    fail(op.origin, op.name, "embedding: more positions than table rows");
  }
  op.operands.push_back(std::move(tab));
  return b.add_operator(std::move(op));
}

OperatorId embedding_bag(GraphBuilder& b, Operator op, TensorId table, TensorId indices, std::optional<TensorId> offsets,
                         TensorId output) {
  const Shape& out = b.tensor(output).shape;
  const Shape& ts = b.tensor(table).shape;
  const Shape& is = b.tensor(indices).shape;
  const bool batched = is.size() == 3;  // [B, T, L]: T bags per sample, one per table of a batched buffer
  Shape expected{is.empty() ? 0 : is[0]};
  if (batched) expected.push_back(is[1]);
  if (ts.size() == 2) expected.push_back(ts[1]);
  if (ts.size() != 2 || (is.size() != 2 && !batched) || out != expected) {
    fail(op.origin, op.name, "embedding bag: table " + to_string(ts) + ", indices " + to_string(is) + " and output " +
                                 to_string(out) + " disagree (expected [V, K], [B, L] or [B, T, L], and [B, K] or "
                                 "[B, T, K])");
  }
  op.kind = OpKind::embedding;
  if (op.type.empty()) op.type = "EmbeddingBag";
  op.ops_per_iteration = 1;  // the sum over the bag
  const std::int64_t T = batched ? is[1] : 1, L = is.back();
  // Loop dims B, (T), L, K; the lookup l of bag (b, t) is row T·L·b + L·t + l of the lookups.
  op.dims = {LoopDim{"B", is[0]}};
  if (batched) op.dims.push_back(LoopDim{"T", T});
  op.dims.push_back(LoopDim{"L", L});
  op.dims.push_back(LoopDim{"K", ts[1]});
  const int t = batched ? 1 : -1, l = batched ? 2 : 1, k = batched ? 3 : 2;
  std::vector<AffineExpr> out_access{dim(0)}, idx_access{dim(0)}, bag_access{dim(0)};
  AffineExpr lookup{{AffineExpr::Term{0, T * L}, AffineExpr::Term{l, 1}}, 0};
  if (batched) {
    out_access.push_back(dim(t));
    idx_access.push_back(dim(t));
    bag_access.push_back(dim(t));
    lookup.terms.push_back(AffineExpr::Term{t, L});
  }
  out_access.push_back(dim(k));
  idx_access.push_back(dim(l));
  op.operands.push_back(operand(b, output, OperandSlot::O, std::move(out_access)));
  op.operands.push_back(operand(b, indices, OperandSlot::I1, std::move(idx_access)));
  if (offsets) {
    const Shape want = batched ? Shape{is[0], T} : Shape{is[0], 1};
    if (b.tensor(*offsets).shape != want) {
      fail(op.origin, op.name, "embedding bag: offsets " + to_string(b.tensor(*offsets).shape) + " should be " +
                                   to_string(want));
    }
    if (!batched) bag_access.push_back(AffineExpr::constant(0));
    op.operands.push_back(operand(b, *offsets, OperandSlot::I1, std::move(bag_access)));
  }
  Operand tab = operand(b, table, OperandSlot::I2, {std::move(lookup), dim(k)});
  tab.indirect = true;
  op.operands.push_back(std::move(tab));
  return b.add_operator(std::move(op));
}

// ------------------------------------------------------------------------------------------------- view

OperatorId view(GraphBuilder& b, Operator op, TensorId input, TensorId output) {
  if (b.tensor(input).elements() != b.tensor(output).elements()) {
    fail(op.origin, op.name, "a view cannot change the element count: " + to_string(b.tensor(input).shape) + " -> " +
                                 to_string(b.tensor(output).shape));
  }
  op.kind = OpKind::view;
  op.ops_per_iteration = 0;
  op.operands.push_back(operand(b, output, OperandSlot::O, {}));
  op.operands.push_back(operand(b, input, OperandSlot::I1, {}));
  return b.add_operator(std::move(op));
}

}  // namespace monet::ops
