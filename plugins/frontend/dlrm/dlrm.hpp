#pragma once
// A DLRM forward graph generated from its dimensions (docs/workloads.md#dlrm): a workload file whose [workload]
// table says `generator = "dlrm"`. With data_parallel = N > 1 it is the step of the most loaded of N ranks whose
// tables are sharded over them (TorchRec's table-wise sharding, columns split where a table is large; row-wise,
// table-row-wise or replicated per table), with the exchanges' places as operators for the parallelism plugin.
#include <cstdint>
#include <string>

#include "monet/config/toml_reader.hpp"
#include "monet/ir/graph.hpp"

namespace monet::plugins {

struct DlrmOverrides {
  std::int64_t micro_batch = 0;  // > 0 replaces micro_batch
  std::int64_t data = 0;         // > 0 replaces data_parallel: the ranks the tables are sharded over
  std::string embedding_dtype;   // non-empty replaces embedding_dtype
  std::string sharding;          // non-empty replaces sharding
  std::int64_t row_wise_min_rows = -1;       // >= 0 replaces row_wise_min_rows
  std::int64_t data_parallel_max_rows = -1;  // >= 0 replaces data_parallel_max_rows
  std::int64_t node_ranks = 0;               // > 0 replaces node_ranks
  std::string embedding_optimizer;           // non-empty replaces embedding_optimizer
};

/// Reads the [workload] table of `doc` (dense_features, bottom_mlp, embedding_dim, table_rows, lookups, top_mlp,
/// interaction, micro_batch, global_batch, dtype, embedding_dtype, sharding, row_wise_min_rows,
/// data_parallel_max_rows, data_parallel, node_ranks, embedding_optimizer) and builds the graph.
/// Every mistake is a UserError at its key.
GraphPtr build_dlrm(const TomlDocument& doc, const DlrmOverrides& overrides = {});

}  // namespace monet::plugins
