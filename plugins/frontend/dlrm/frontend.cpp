// The `dlrm` frontend: a workload file whose [workload] table says generator = "dlrm" (TorchRec's DLRMs,
// docs/workloads.md#dlrm). Its parameters are what an experiment or a search gene changes per run: the micro-batch,
// the ranks the tables are sharded over, the sharding, the tables' type and their update rule.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/frontend.hpp"
#include "dlrm.hpp"

namespace monet::plugins {
namespace {

class DlrmFrontend final : public WorkloadFrontend {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::frontend;
    i.name = "dlrm";
    i.version = "1.0.0";
    i.summary = "Deep learning recommendation models generated from their dimensions (docs/workloads.md#dlrm)";
    i.description =
        "Reads a TOML workload file whose [workload] table says generator = \"dlrm\" and gives dense_features, "
        "bottom_mlp, embedding_dim, table_rows, lookups, top_mlp, micro_batch, global_batch, dtype, embedding_dtype, "
        "embedding_optimizer, sharding, row_wise_min_rows, data_parallel_max_rows, data_parallel and node_ranks: the "
        "step of the most loaded rank of TorchRec's table-wise, row-wise, table-row-wise or replicated tables, with "
        "the exchanges' places as operators for the torchrec parallelism plugin. Chosen by the file's generator key; "
        "every parameter below overrides the file's key of the same name (`batch`: micro_batch).";
    i.params = {ParamSpec::integer("batch", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("samples")
                    .with_doc("overrides the file's micro_batch; 0 keeps the file's"),
                ParamSpec::choice("embedding_dtype", {"", "fp32", "fp16", "bf16"}, "")
                    .with_doc("the tables' element type (FBGEMM keeps tables in fp32 or fp16; a search gene: "
                              "workload.embedding_dtype); empty keeps the file's"),
                ParamSpec::choice("embedding_optimizer", {"", "rowwise_adagrad", "adagrad", "sgd"}, "")
                    .with_doc("the update of the sharded tables (row-sparse gradients), applied to the looked-up rows "
                              "in the backward pass as FBGEMM's fused table-batched embeddings do: rowwise_adagrad "
                              "(EXACT_ROWWISE_ADAGRAD, one fp32 state per row, TorchRec's and MLPerf DLRM's choice, the "
                              "file's default), adagrad (EXACT_ADAGRAD, a state per element) or sgd (EXACT_SGD, no "
                              "state); the dense parameters keep [training.optimizer]; empty keeps the file's"),
                ParamSpec::choice("sharding", {"", "table_wise", "row_wise", "table_row_wise", "data_parallel"}, "")
                    .with_doc("the TorchRec sharding type of the tables that row_wise_min_rows and "
                              "data_parallel_max_rows do not pick (a search gene: workload.sharding); empty keeps the "
                              "file's"),
                ParamSpec::integer("row_wise_min_rows", -1)
                    .with_bounds(Bounds::at_least(-1))
                    .with_unit("rows")
                    .with_doc("tables with at least this many rows are sharded row-wise over the ranks (0: none; a "
                              "search gene standing for TorchRec's planner's per-table choice); -1 keeps the file's"),
                ParamSpec::integer("data_parallel_max_rows", -1)
                    .with_bounds(Bounds::at_least(-1))
                    .with_unit("rows")
                    .with_doc("tables with at most this many rows are replicated on every rank, their gradients "
                              "all-reduced (0: none); -1 keeps the file's"),
                ParamSpec::integer("data_parallel", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("chips")
                    .with_doc("the ranks the tables are sharded over, which must be [parallelism] data (the torchrec "
                              "plugin checks; in a search, one gene with both paths); 0 keeps the file's"),
                ParamSpec::integer("node_ranks", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("chips")
                    .with_doc("the data-parallel ranks on one node (TorchRec's local world size), over which sharding "
                              "= \"table_row_wise\" splits each table's rows (the kernel checks it against the "
                              "system); 0 keeps the file's")};
    return i;
  }
  explicit DlrmFrontend(const ParamValues& p) {
    overrides_.micro_batch = p.get_int("batch");
    overrides_.data = p.get_int("data_parallel");
    overrides_.embedding_dtype = p.get_string("embedding_dtype");
    overrides_.embedding_optimizer = p.get_string("embedding_optimizer");
    overrides_.sharding = p.get_string("sharding");
    overrides_.row_wise_min_rows = p.get_int("row_wise_min_rows");
    overrides_.data_parallel_max_rows = p.get_int("data_parallel_max_rows");
    overrides_.node_ranks = p.get_int("node_ranks");
  }

  [[nodiscard]] GraphPtr load(const std::filesystem::path& file) const override {
    return build_dlrm(TomlDocument::parse_file(file), overrides_);
  }
  [[nodiscard]] GraphPtr load_document(const TomlDocument& doc) const override { return build_dlrm(doc, overrides_); }

 private:
  DlrmOverrides overrides_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::DlrmFrontend)
