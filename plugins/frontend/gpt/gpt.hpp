#pragma once
// A GPT forward graph generated from Megatron-LM's dimensions (docs/datacenter.md): a workload file whose
// [workload] table says `generator = "gpt"` instead of listing [[layers]].
#include <cstdint>

#include "monet/config/toml_reader.hpp"
#include "monet/ir/graph.hpp"

namespace monet::plugins {

/// Reads the [workload] table of `doc` (hidden, layers, heads, seq_length, vocab, ffn_hidden, global_batch,
/// micro_batch, dropouts, dtype, tensor_parallel, sequence_parallel, context_parallel) and builds the graph. Every
/// mistake is a UserError at its key.
struct GptOverrides {
  std::int64_t micro_batch = 0;       // > 0 replaces micro_batch
  std::int64_t tensor = 0;            // > 0 replaces tensor_parallel
  bool sequence_parallel = false;     // true replaces the file's choice
  std::int64_t context = 0;           // > 0 replaces context_parallel
};
GraphPtr build_gpt(const TomlDocument& doc, const GptOverrides& overrides = {});

}  // namespace monet::plugins
