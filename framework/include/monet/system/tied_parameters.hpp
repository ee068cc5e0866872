#pragma once
// Parameters tied across a pipeline (docs/datacenter.md#a-training-step-on-a-system-of-chips, item 7): a parameter
// that forward operators of the first and of the last model chunk both read — a GPT's word-embedding table, which
// its output layer reads again. Found from the graph alone, not by name. With pipeline parallelism the last stage
// keeps a copy of its own (Megatron-LM: `setup_embeddings_and_output_layer`, formerly `initialize_word_embeddings`):
// the parameter, its gradient and its optimizer states; after the backward passes the two copies' gradients are
// all-reduced between the first and the last stage (`_allreduce_word_embedding_grads`) before the optimizer step,
// and each stage updates its own copy.
#include <cstdint>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/util/export.hpp"

namespace monet {

struct TiedCopies {
  std::vector<TensorId> parameters;  // read by forward operators of the first and of the last chunk
  // Of all of them, as one chip of the first stage holds them before any ZeRO sharding (B).
  std::int64_t weight_bytes = 0;
  std::int64_t gradient_bytes = 0;   // their complete gradients (what the optimizer reads)
  std::int64_t state_bytes = 0;      // optimizer states and master weights
  std::int64_t gradient_elements = 0;
  std::vector<OperatorId> optimizer_ops;  // their updates (unscaling, the update, the cast of the master copy ...)
  // The last chunk's share of their gradients: the tensors the weight-gradient operators of the last chunk's
  // readers write (the output layer's dW), which the last stage's copy accumulates.
  std::vector<TensorId> last_chunk_gradients;
  std::vector<OperatorId> last_chunk_readers;  // forward operators of the last chunk that read them

  [[nodiscard]] bool empty() const { return parameters.empty(); }
};

/// The parameters of `g` (a rank's training step) read by forward operators of chunk 0 and of chunk `chunks` − 1
/// (`chunk_of_op`: per operator, as make_system_step cuts them). None when `chunks` is 1 or `stages` is 1: one
/// stage holds both readers.
MONET_API TiedCopies find_tied_copies(const Graph& g, const std::vector<std::int64_t>& chunk_of_op, std::int64_t chunks,
                                      std::int64_t stages);

}  // namespace monet
