#pragma once
// A GPT forward graph generated from Megatron-LM's dimensions (docs/datacenter.md): a workload file whose
// [workload] table says `generator = "gpt"` instead of listing [[layers]].
#include <cstdint>

#include "monet/config/toml_reader.hpp"
#include "monet/ir/graph.hpp"

namespace monet::plugins {

/// Reads the [workload] table of `doc` (hidden, layers, heads, seq_length, vocab, ffn_hidden, global_batch,
/// micro_batch, dropouts, dtype, tensor_parallel, sequence_parallel) and builds the graph; `batch_override` > 0
/// replaces micro_batch, `tensor_override` > 0 tensor_parallel, `sequence_parallel` true the file's choice. Every
/// mistake is a UserError at its key.
GraphPtr build_gpt(const TomlDocument& doc, std::int64_t batch_override, std::int64_t tensor_override = 0,
                   bool sequence_parallel = false);

}  // namespace monet::plugins
