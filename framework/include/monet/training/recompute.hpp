#pragma once
// Megatron-LM's activation recomputation granularity (`[parallelism] recompute`, docs/datacenter.md) as a
// checkpoint policy over Megatron-core's module names, which transformer workloads follow (the GPT generator of
// the TOML frontend names layer i's modules "layers.i", "layers.i.self_attention.core_attention", ...):
//   none       no recomputation;
//   selective  the attention core (scores, softmax, attention dropout, context) of every layer, Korthikanti et
//              al. 2022's selective recomputation: modules = ["layers.*.self_attention.core_attention"];
//   full       every layer keeps only its input: modules = ["layers.*"].
#include <string_view>

#include "monet/training/checkpoint.hpp"

namespace monet {

/// The policy of a granularity; a UserError at `where` for any other spelling.
MONET_API CheckpointPolicy recompute_policy(std::string_view recompute, const SourceLocation& where);

}  // namespace monet
