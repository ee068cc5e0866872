// Embedding gradients: the table's rows scatter-added at the saved indices (Embedding, EmbeddingBag), or a
// row-sparse gradient for a sparse EmbeddingBag.
#include "generator.hpp"

namespace monet::plugins::autodiff {

/// Scatter-add of dY rows into the table gradient, read at the saved indices.
void Generator::embedding(Instance& inst, const Operator& f, TensorId dy) {
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
void Generator::embedding_bag(Instance& inst, const Operator& f, TensorId dy) {
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

}  // namespace monet::plugins::autodiff
