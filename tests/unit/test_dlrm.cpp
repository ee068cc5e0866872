// The DLRM generator (docs/workloads.md#dlrm) and the training step it gets, against PyTorch 1.13
// (scripts/reference/pytorch_dlrm.py -> tests/data/pytorch_dlrm.json: dlrm_s_pytorch's model with
// nn.EmbeddingBag(mode="sum", sparse=True), measured on the CPU): parameters, MACs of every phase, saved bytes,
// the sparse gradients, the row-wise Adagrad state; and the table-wise sharding of the MLPerf tables over 8 ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/memory.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

nlohmann::json reference(const std::string& config) {
  std::ifstream in(test::source_dir() / "tests/data/pytorch_dlrm.json");
  return nlohmann::json::parse(in)["configs"][config];
}

class Dlrm : public ::testing::Test {
 protected:
  GraphPtr load(const std::filesystem::path& file, std::int64_t data = 0) {
    const Registry& r = Registry::global();
    const PluginHandle* f = r.find(PluginKind::frontend, "dlrm");
    ParamValues p = default_params(f->info.params, "test");
    if (data > 0) p.set("data_parallel", data);
    return r.create<WorkloadFrontend>(*f, p)->load(file);
  }
  GraphPtr load_text(const std::string& text) { return load(dir_.write("dlrm.toml", text)); }
  /// forward -> autodiff (binary cross-entropy) -> Adagrad with row-wise Adagrad on the sparse tables.
  static GraphPtr training(const Graph& forward) {
    const Registry& r = Registry::global();
    TrainingSettings settings;
    settings.loss = "binary_cross_entropy";
    const PluginHandle* b = r.find(PluginKind::backward, "autodiff");
    GraphPtr g = r.create<BackwardGenerator>(*b, default_params(b->info.params, "test"))->generate(forward, settings);
    const PluginHandle* o = r.find(PluginKind::optimizer, "adagrad");
    return r.create<OptimizerModel>(*o, default_params(o->info.params, "test"))->apply(*g, settings);
  }
  std::string fail(const std::string& text) {
    try {
      load_text(text);
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  }
  test::ScratchDir dir_;
};

/// Checks one configuration against its PyTorch measurement.
void expect_matches_pytorch(const Graph& forward, const Graph& step, const nlohmann::json& ref) {
  const auto& p = ref["parameters"];
  EXPECT_EQ(forward.parameter_count(), p["total"].get<std::int64_t>());
  std::int64_t embedding = 0;
  for (const Tensor& t : forward.tensors()) {
    if (t.is_parameter() && t.name.rfind("embeddings.", 0) == 0) embedding += t.elements();
  }
  EXPECT_EQ(embedding, p["embedding"].get<std::int64_t>());
  const auto& m = ref["macs"];
  EXPECT_EQ(forward.total_macs(), m["forward"]["total"].get<std::int64_t>());
  auto phase_macs = [&](Phase ph) {
    std::int64_t n = 0;
    for (const Operator& op : step.operators()) n += op.phase == ph ? op.macs() : 0;
    return n;
  };
  EXPECT_EQ(phase_macs(Phase::backward_dx), m["backward_input_grad"]["total"].get<std::int64_t>());
  EXPECT_EQ(phase_macs(Phase::backward_dw), m["backward_weight_grad"]["total"].get<std::int64_t>());
  // Saved bytes: PyTorch's CPU EmbeddingBag also keeps bag_size and max_indices (two int64 per bag and table,
  // measured: tests/data/pytorch_dlrm.json embedding_bag_saves), which FBGEMM's table-batched lookup that monet
  // models does not; everything else is byte-exact.
  const auto B = ref["batch"].get<std::int64_t>();
  const auto tables = static_cast<std::int64_t>(ref["rows"].size());
  EXPECT_EQ(training_memory(step).saved_activation_bytes,
            ref["saved_activation_bytes"].get<std::int64_t>() - 2 * 8 * B * tables);
  // Sparse gradients: one row per lookup, values as PyTorch's (its row ids are the saved indices); none of them
  // is left as a table's complete gradient, and the row-wise Adagrad state is one fp32 per row.
  std::int64_t values = 0, grad_of_table = 0, state = 0, fused = 0;
  for (const Tensor& t : step.tensors()) {
    if (t.name.rfind("grad(embeddings.", 0) == 0) values += t.bytes();
    if (t.gradient_of != kNone && step.tensor(t.gradient_of).name.rfind("embeddings.", 0) == 0) ++grad_of_table;
    if (t.role == TensorRole::optimizer_state && t.in_place_of == kNone && t.name.rfind("embeddings.", 0) == 0) {
      state += t.bytes();
    }
  }
  std::int64_t ref_values = 0;
  for (const auto& g : ref["sparse_gradients"]) {
    EXPECT_TRUE(g["is_sparse"].get<bool>());
    EXPECT_FALSE(g["coalesced"].get<bool>());
    ref_values += g["values_bytes"].get<std::int64_t>();
  }
  EXPECT_EQ(values, ref_values);
  EXPECT_EQ(grad_of_table, 0);
  std::int64_t ref_state = 0;
  for (const auto& b : ref["optimizer_state"]["fbgemm_exact_rowwise_adagrad"]["per_table_bytes"]) ref_state += b.get<std::int64_t>();
  EXPECT_EQ(state, ref_state);
  for (const Operator& op : step.operators()) {
    if (op.type != "RowwiseAdagradUpdate") continue;
    ++fused;
    EXPECT_EQ(op.phase, Phase::backward_dw) << op.name;  // fused into the backward pass
  }
  EXPECT_EQ(fused, ref["groups"].get<std::int64_t>());  // one per table-batched operator
  // The dense parameters keep Adagrad's per-element state (PyTorch's `sum`).
  EXPECT_EQ(training_memory(step).optimizer_state_bytes,
            ref_state + ref["optimizer_state"]["torch_adagrad"]["dense_sum_bytes"].get<std::int64_t>());
}

// The small model's four tables pool 3, 1, 2 and 5 lookups: four table-batched operators, one table each.
TEST_F(Dlrm, SmallModelMatchesPyTorch) {
  const GraphPtr forward = load(test::source_dir() / "workloads/dlrm/dlrm_small_test.toml");
  const GraphPtr step = training(*forward);
  nlohmann::json ref = reference("small");
  ref["groups"] = 4;
  expect_matches_pytorch(*forward, *step, ref);
}

TEST_F(Dlrm, MlperfTerabyteModelMatchesPyTorch) {
  const GraphPtr forward = load(test::source_dir() / "workloads/dlrm/mlperf_dlrm_terabyte.toml");
  nlohmann::json ref = reference("mlperf_v1");
  ref["groups"] = 1;  // 26 one-hot tables of 128 columns: one table-batched lookup, as FBGEMM runs them
  EXPECT_EQ(forward->parameter_count(), 24'036'595'969);
  expect_matches_pytorch(*forward, *training(*forward), ref);
}

// MLPerf's tables over 8 ranks: the five tables above an even share (188 M rows / 8) are split into two 64-column
// shards; the rank is the one the greedy placement loads most. It looks up its shards for all 8·2,048 samples and
// receives every table's pooled vectors for its own 2,048 (TorchRec's table-wise all-to-all: B·T·D·4 bytes).
TEST_F(Dlrm, TableWiseShardingOverEightRanks) {
  const nlohmann::json ref = reference("mlperf_v1");
  const GraphPtr g = load(test::source_dir() / "workloads/dlrm/mlperf_dlrm_terabyte.toml", 8);
  const auto rows = ref["rows"].get<std::vector<std::int64_t>>();
  std::int64_t total_rows = 0, largest_shard = 0;
  for (std::int64_t r : rows) total_rows += r;
  for (std::int64_t r : rows) largest_shard = std::max(largest_shard, r * 128 * 4 / (r * 8 > total_rows ? 2 : 1));
  const std::int64_t total = total_rows * 128 * 4;
  std::int64_t mine = 0, split = 0, batched = 0;
  for (const Operator& op : g->operators()) {
    if (op.type != "EmbeddingBag") continue;
    EXPECT_EQ(op.dims[0].size, 8 * 2048) << op.name;
    EXPECT_EQ(op.attributes.at("sparse"), std::vector<std::int64_t>{1});
    const Tensor& table = g->tensor(op.operands.back().tensor);
    const auto& tables = op.attributes.at("tables");
    std::int64_t rows_of_tables = 0;
    for (std::int64_t t : tables) rows_of_tables += rows[static_cast<std::size_t>(t)];
    EXPECT_EQ(table.shape[0], rows_of_tables) << op.name;  // one buffer holding its shards' rows
    EXPECT_EQ(op.dims[1].size, static_cast<std::int64_t>(tables.size()));
    mine += table.bytes();
    ++batched;
    if (table.shape[1] == 64) ++split;
  }
  EXPECT_LE(batched, 2);  // a width of 128 and of 64 at most (every lookup is one-hot)
  EXPECT_GE(mine, total / 8);                  // the most loaded rank holds at least an even share
  EXPECT_LE(mine, total / 8 + largest_shard);  // and at most one shard more (greedy placement's bound)
  EXPECT_GT(split, 0);
  std::vector<std::string> exchanges;
  for (const Operator& op : g->operators()) {
    if (op.type != "AllToAll") continue;
    exchanges.push_back(op.name);
    if (op.name == "embedding_dist") {
      EXPECT_EQ(g->tensor(op.operands[0].tensor).bytes(), ref["alltoall_table_wise"]["bytes_all_tables"].get<std::int64_t>());
    }
  }
  EXPECT_EQ(exchanges, (std::vector<std::string>{"sparse_dist", "embedding_dist"}));
  // Unsharded, the same file has neither exchange and the whole tables.
  const GraphPtr one = load(test::source_dir() / "workloads/dlrm/mlperf_dlrm_terabyte.toml");
  EXPECT_EQ(std::count_if(one->operators().begin(), one->operators().end(),
                          [](const Operator& op) { return op.type == "AllToAll"; }),
            0);
}

TEST_F(Dlrm, ReplicatedTablesHaveDenseGradients) {
  const std::string text =
      "[workload]\ngenerator = \"dlrm\"\ndense_features = 4\nbottom_mlp = [8]\nembedding_dim = 8\n"
      "table_rows = [100, 30]\nlookups = 2\ntop_mlp = [4, 1]\nmicro_batch = 2\nsharding = \"data_parallel\"\n"
      "data_parallel = 4\n";
  const GraphPtr step = training(*load_text(text));
  int dense = 0;
  for (const Tensor& t : step->tensors()) {
    if (t.gradient_of == kNone || step->tensor(t.gradient_of).name.rfind("embeddings.", 0) != 0) continue;
    EXPECT_EQ(t.shape, step->tensor(t.gradient_of).shape);  // a dense gradient, all-reduced with the MLPs'
    EXPECT_EQ(t.shape, (Shape{130, 8}));  // both tables in one batched buffer
    ++dense;
  }
  EXPECT_EQ(dense, 1);
}

// Criteo 1TB's whole tables over 8 ranks: placed for memory and lookups together, the rank built (the larger of its
// byte and lookup shares the largest) holds 66.6 GB of tables and reads 320 columns per sample, the mean being 416
// (26·128/8) and the busiest rank's 480 (placing by bytes alone, it read 64 and another rank 2,720).
TEST_F(Dlrm, TableWiseShardsBalanceBytesAndLookups) {
  const GraphPtr g = load(test::source_dir() / "workloads/dlrm/dlrm_criteo_1tb.toml", 8);
  std::int64_t columns = 0, bytes = 0;
  for (const Operator& op : g->operators()) {
    if (op.type != "EmbeddingBag") continue;
    const Tensor& table = g->tensor(op.operands.back().tensor);
    columns += op.dims[1].size * table.shape[1];  // tables × width, one lookup each
    bytes += table.bytes();
  }
  EXPECT_EQ(columns, 320);
  EXPECT_NEAR(static_cast<double>(bytes), 66.6e9, 0.05e9);
}

// TorchRec's row-wise sharding of MLPerf's tables over 8 ranks: every rank holds ⌈rows/8⌉ rows of every table in one
// table-batched buffer, looks up the 2,048·1 ids per table that fall in its rows, writes the partial pooled vectors
// of all 8·2,048 bags (zero where it holds none of a bag's ids) and reduce-scatters them: 8·2,048·26·128·4 bytes in,
// 2,048·26·128·4 out. Its own input all-to-all brings the ids with a length for each of the 8·2,048 bags.
TEST_F(Dlrm, RowWiseShardingOverEightRanks) {
  const nlohmann::json ref = reference("mlperf_v1");
  const auto rows = ref["rows"].get<std::vector<std::int64_t>>();
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "dlrm");
  ParamValues p = default_params(f->info.params, "test");
  p.set("data_parallel", std::int64_t{8});
  p.set("sharding", std::string("row_wise"));
  const GraphPtr g = r.create<WorkloadFrontend>(*f, p)->load(test::source_dir() / "workloads/dlrm/mlperf_dlrm_terabyte.toml");
  std::int64_t shard_rows = 0;
  for (std::int64_t n : rows) shard_rows += (n + 7) / 8;
  std::vector<std::string> exchanges;
  int bags = 0;
  for (const Operator& op : g->operators()) {
    if (op.type == "EmbeddingBag") {
      ++bags;
      EXPECT_EQ(op.dims[0].size, 2048);  // b·L = 2,048 ids per table reach each rank
      EXPECT_EQ(op.attributes.at("sparse"), std::vector<std::int64_t>{1});
      EXPECT_EQ(op.attributes.at("ranks"), std::vector<std::int64_t>{8});
      EXPECT_EQ(g->tensor(op.operands.back().tensor).shape, (Shape{shard_rows, 128}));
    }
    if (op.type == "AllToAll" || op.type == "ReduceScatter") exchanges.push_back(op.name);
    if (op.type == "ReduceScatter") {
      EXPECT_EQ(g->tensor(op.operands[1].tensor).bytes(), 8 * 2048 * 26 * 128 * 4);
      EXPECT_EQ(g->tensor(op.operands[0].tensor).bytes(), 2048 * 26 * 128 * 4);
    }
    if (op.name == "sparse_dist.row_wise") {  // 26 ids and 8·26 lengths per sample
      EXPECT_EQ(g->tensor(op.operands[0].tensor).shape, (Shape{2048, 26 + 8 * 26}));
    }
  }
  EXPECT_EQ(bags, 1);
  EXPECT_EQ(exchanges, (std::vector<std::string>{"sparse_dist.row_wise", "embedding_dist.row_wise"}));
  // The backward pass updates the rank's rows in place: no gradient of a whole table.
  const GraphPtr step = training(*g);
  for (const Tensor& t : step->tensors()) {
    if (t.gradient_of != kNone) {
      EXPECT_NE(step->tensor(t.gradient_of).name.rfind("embeddings.", 0), 0u) << t.name;
    }
  }
}

// TorchRec's planner's per-table choice by size: of the small model's tables (100, 30, 1,000, 10 rows), those of at
// least 1,000 rows are row-wise, of at most 30 replicated, the rest table-wise; each sharding type its own lookup,
// exchanges and, for the replicated tables, a dense gradient all-reduced with the MLPs'.
TEST_F(Dlrm, TablesAreShardedPerTableBySize) {
  const std::string text =
      "[workload]\ngenerator = \"dlrm\"\ndense_features = 4\nbottom_mlp = [8]\nembedding_dim = 8\n"
      "table_rows = [100, 30, 1000, 10]\nlookups = 2\ntop_mlp = [4, 1]\nmicro_batch = 2\ndata_parallel = 4\n"
      "row_wise_min_rows = 1000\ndata_parallel_max_rows = 30\n";
  const GraphPtr g = load_text(text);
  std::map<std::string, Shape> tables;
  std::vector<std::string> exchanges;
  for (const Operator& op : g->operators()) {
    if (op.type == "EmbeddingBag") tables[op.name] = g->tensor(op.operands.back().tensor).shape;
    if (op.type == "AllToAll" || op.type == "ReduceScatter") exchanges.push_back(op.name);
  }
  EXPECT_EQ(tables, (std::map<std::string, Shape>{{"embeddings.tbe0", {100, 8}},
                                                  {"embeddings.row_wise.tbe0", {250, 8}},
                                                  {"embeddings.replicated.tbe0", {40, 8}}}));
  EXPECT_EQ(exchanges, (std::vector<std::string>{"sparse_dist", "embedding_dist", "sparse_dist.row_wise",
                                                 "embedding_dist.row_wise"}));
  // The rank's ids are the KeyedJaggedTensor's columns per sharding type: 3 per table (2 ids, 1 length).
  for (const Tensor& t : g->tensors()) {
    if (t.name == "sparse_features.table_wise" || t.name == "sparse_features.row_wise") {
      EXPECT_EQ(t.shape, (Shape{2, 3}));
    }
    if (t.name == "sparse_features.replicated") {
      EXPECT_EQ(t.shape, (Shape{2, 6}));
    }
    if (t.name == "embedding_dist") {  // one table-wise table's vectors
      EXPECT_EQ(t.shape, (Shape{2, 8}));
    }
  }
  const GraphPtr step = training(*g);
  int dense = 0;
  for (const Tensor& t : step->tensors()) {
    if (t.gradient_of == kNone || step->tensor(t.gradient_of).name.rfind("embeddings.", 0) != 0) continue;
    EXPECT_EQ(step->tensor(t.gradient_of).name, "embeddings.replicated.tbe0.weight");
    ++dense;
  }
  EXPECT_EQ(dense, 1);
}

// Table-row-wise over 8 ranks on 2 nodes of 4: whole tables balanced over the nodes like table-wise shards over
// ranks (memory and lookups: 1,000 rows on one node, 100, 30 and 10 on the other, whose lookups are 3/4 of all), the
// rank built one of the most loaded node's, holding ⌈1,000 / 4⌉ rows. It receives its rows' ids from all 16 samples'
// bags, 4 per lookup row (b·N/4 = 4 rows of 2 ids and 4 lengths); reduce-scatters the 16 bags' partial vectors over
// its node (each keeps 2 nodes × 2 samples) and exchanges them across the nodes for its 2 samples' 4 tables.
TEST_F(Dlrm, TableRowWiseTablesGoToNodesAndSplitTheirRows) {
  const std::string text =
      "[workload]\ngenerator = \"dlrm\"\ndense_features = 4\nbottom_mlp = [8]\nembedding_dim = 8\n"
      "table_rows = [100, 30, 1000, 10]\nlookups = 2\ntop_mlp = [4, 1]\nmicro_batch = 2\ndata_parallel = 8\n"
      "sharding = \"table_row_wise\"\nnode_ranks = 4\n";
  const GraphPtr g = load_text(text);
  std::map<std::string, Shape> tables, exchanges;
  for (const Operator& op : g->operators()) {
    if (op.type == "EmbeddingBag") {
      tables[op.name] = g->tensor(op.operands.back().tensor).shape;
      EXPECT_EQ(op.attributes.at("node_ranks"), std::vector<std::int64_t>{4});
      EXPECT_EQ(op.attributes.at("tables"), std::vector<std::int64_t>{2});
    }
    if (op.type == "AllToAll" || op.type == "ReduceScatter") exchanges[op.type + " " + op.name] = g->tensor(op.operands.front().tensor).shape;
  }
  EXPECT_EQ(tables, (std::map<std::string, Shape>{{"embeddings.table_row_wise.tbe0", {250, 8}}}));
  EXPECT_EQ(exchanges, (std::map<std::string, Shape>{{"AllToAll sparse_dist.table_row_wise", {4, 6}},
                                                     {"ReduceScatter embedding_dist.table_row_wise.intra", {4, 8}},
                                                     {"AllToAll embedding_dist.table_row_wise", {2, 32}}}));
  for (const Operator& op : g->operators()) {
    if (op.name == "embedding_dist.table_row_wise.intra") {
      EXPECT_EQ(op.attributes.at("data_group"), std::vector<std::int64_t>{1});
    }
    if (op.name == "embedding_dist.table_row_wise") {
      EXPECT_EQ(op.attributes.at("data_group"), std::vector<std::int64_t>{2});
    }
  }
}

// The frontend's embedding_dtype (a search gene) sets the tables' type. The table keys are the dlrm frontend's
// alone: the gpt and toml frontends have none (an experiment setting one on them is an unknown key), and the dlrm
// frontend refuses another generator's file at its generator key.
TEST_F(Dlrm, EmbeddingDtypeOverrideSetsTheTablesOnly) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "dlrm");
  ParamValues p = default_params(f->info.params, "test");
  p.set("embedding_dtype", std::string("fp16"));
  const auto frontend = r.create<WorkloadFrontend>(*f, p);
  const GraphPtr g = frontend->load(test::source_dir() / "workloads/dlrm/dlrm_small_test.toml");
  for (const Tensor& t : g->tensors()) {
    if (!t.is_parameter()) continue;
    EXPECT_EQ(t.dtype, t.name.rfind("embeddings.", 0) == 0 ? ElementType::fp16 : ElementType::fp32) << t.name;
  }
  try {
    frontend->load(test::source_dir() / "workloads/gpt/gpt_small_test.toml");
    ADD_FAILURE() << "a GPT is not the dlrm frontend's";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gpt_small_test.toml:"));
    EXPECT_THAT(e.what(), HasSubstr("workload.generator"));
  }
  for (const char* other : {"gpt", "toml"}) {
    for (const ParamSpec& s : r.find(PluginKind::frontend, other)->info.params) {
      for (const char* key : {"embedding_dtype", "embedding_optimizer", "sharding", "row_wise_min_rows",
                              "data_parallel_max_rows", "data_parallel", "node_ranks"}) {
        EXPECT_NE(s.name, key) << other;
      }
    }
  }
}

// The tables' update rule is the workload's (FBGEMM's EmbOptimType, the file's or the frontend's
// embedding_optimizer), whatever optimizer the dense parameters use: row-wise Adagrad keeps one fp32 per row,
// Adagrad one per element, SGD none; the dense parameters keep Adagrad's per-element sum either way.
TEST_F(Dlrm, EmbeddingOptimizerIsTheWorkloads) {
  const Registry& r = Registry::global();
  const PluginHandle* f = r.find(PluginKind::frontend, "dlrm");
  const auto step_with = [&](const std::string& update) {
    ParamValues p = default_params(f->info.params, "test");
    p.set("embedding_optimizer", update);
    return training(*r.create<WorkloadFrontend>(*f, p)->load(test::source_dir() / "workloads/dlrm/dlrm_small_test.toml"));
  };
  const GraphPtr rowwise = step_with("");  // the file's default
  const GraphPtr adagrad = step_with("adagrad");
  const GraphPtr sgd = step_with("sgd");
  std::int64_t table_rows = 0, table_elements = 0;
  for (const Tensor& t : rowwise->tensors()) {
    if (t.is_parameter() && t.producer == kNone && t.name.rfind("embeddings.", 0) == 0) {
      EXPECT_EQ(t.sparse_update, SparseUpdate::rowwise_adagrad) << t.name;
      table_rows += t.shape[0];
      table_elements += t.elements();
    }
  }
  ASSERT_GT(table_rows, 0);
  const std::int64_t dense = training_memory(*sgd).optimizer_state_bytes;  // the tables keep no state with SGD
  EXPECT_EQ(training_memory(*rowwise).optimizer_state_bytes, dense + 4 * table_rows);
  EXPECT_EQ(training_memory(*adagrad).optimizer_state_bytes, dense + 4 * table_elements);
  const auto count = [](const Graph& g, const std::string& type) {  // the tables' updates, fused into the backward
    return std::count_if(g.operators().begin(), g.operators().end(),
                         [&](const Operator& op) { return op.type == type && op.phase == Phase::backward_dw; });
  };
  EXPECT_EQ(count(*rowwise, "RowwiseAdagradUpdate"), 4);
  EXPECT_EQ(count(*adagrad, "AdagradUpdate"), 4);
  EXPECT_EQ(count(*sgd, "SgdUpdate"), 4);
  EXPECT_THAT(fail("[workload]\ngenerator = \"dlrm\"\ndense_features = 4\nembedding_dim = 8\nbottom_mlp = [8]\n"
                   "top_mlp = [4, 1]\ntable_rows = [10]\nembedding_optimizer = \"adam\"\n"),
              HasSubstr("dlrm.toml:8:23: error: workload.embedding_optimizer:"));
}

TEST_F(Dlrm, MistakesAreErrorsAtTheirKeys) {
  const std::string base =
      "[workload]\ngenerator = \"dlrm\"\ndense_features = 4\nembedding_dim = 8\ntop_mlp = [4, 1]\n";
  EXPECT_THAT(fail(base + "bottom_mlp = [16]\ntable_rows = [10]\n"), HasSubstr("bottom_mlp"));
  EXPECT_THAT(fail(base + "bottom_mlp = [16]\ntable_rows = [10]\n"), HasSubstr("embedding_dim = 8"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10, 20]\nlookups = [1, 2, 3]\n"), HasSubstr("lookups"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\n"), HasSubstr("table_rows"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\nsharding = \"column_wise\"\n"), HasSubstr("sharding"));
  // Table-row-wise needs the ranks per node, in whole nodes.
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\ndata_parallel = 8\nsharding = \"table_row_wise\"\n"),
              HasSubstr("node_ranks"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\ndata_parallel = 8\nsharding = \"table_row_wise\"\n"
                          "node_ranks = 3\n"),
              HasSubstr("node_ranks = 3 does not divide the 8 ranks"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\nrow_wise_min_rows = -1\n"), HasSubstr("row_wise_min_rows"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\nmicro_batch = 3\nglobal_batch = 10\n"),
              HasSubstr("global_batch"));
  EXPECT_THAT(fail(base + "bottom_mlp = [8]\ntable_rows = [10]\nhidden = 3\n"), HasSubstr("hidden"));
}

}  // namespace
}  // namespace monet
