// The DLRM generator: Naumov et al.'s deep learning recommendation model (facebookresearch/dlrm's dlrm_s_pytorch.py,
// the MLPerf Training DLRM up to v2.1) as a forward graph of monet's standard operators. Dense features go through
// the bottom MLP (Linear + ReLU per layer); each categorical feature looks up exactly L_i rows of its table and sums
// them (EmbeddingBag, sum); the dot interaction concatenates the bottom MLP's output with the pooled embeddings as
// F = 1 + T vectors, takes every pairwise dot product (a batched matmul) and keeps the strictly lower triangle
// (F(F−1)/2 values, dlrm_s_pytorch's li/lj indexing); the top MLP (Linear + ReLU, the last Linear alone) gives one
// logit per sample for the binary cross-entropy loss ([training] loss = "binary_cross_entropy").
//
// Sharding (TorchRec's, docs/workloads.md#dlrm): with data_parallel = N > 1 (which the experiment's [parallelism]
// data must equal: the torchrec plugin checks the bags' `ranks`) and sharding = "table_wise" each table
// lives on one rank — split by columns into c equal shards placed separately when it is larger than an even share
// (c the smallest power of two with table/c <= all tables/N, at most N shards of at least 16 columns) — and the
// graph is the step of the rank holding the most bytes. It receives the indices of its tables for all N·b samples
// of the micro-batch (input all-to-all), looks them up with sparse gradients (its rows are its own: the optimizer
// updates them in the backward pass), and sends each rank the pooled vectors of its b samples (output all-to-all);
// the backward pass sends the pooled gradients back. "AllToAll" operators mark those places; the parallelism
// plugin (`torchrec`) costs the collectives. With sharding = "data_parallel" every rank holds every table and
// their dense gradients are all-reduced with the MLPs'. With sharding = "row_wise" (TorchRec's RW) every rank holds
// ⌈rows/N⌉ rows of every table: it receives the ids that fall in its rows (b·L per table and micro-batch when the
// ids are spread evenly over the rows, with a length for each of the N·b bags), sums them into partial pooled
// vectors for all N·b bags (zero where it holds none of a bag's ids, as FBGEMM writes them), and a reduce-scatter
// sums the partials and leaves each rank its b samples' vectors; the backward pass all-gathers their gradients.
// TorchRec's planner picks a sharding per table: `row_wise_min_rows` and `data_parallel_max_rows` do that by size
// (tables of at least / at most that many rows are row-wise / replicated), so a search can pick the thresholds.
#include "dlrm.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "monet/ir/generated_graph.hpp"
#include "monet/ir/ops.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

/// Where a table's rows live (TorchRec's sharding types; column-wise is table-wise's split of a large table).
enum class Placement { table_wise, row_wise, table_row_wise, replicated };
constexpr Placement kPlacements[] = {Placement::table_wise, Placement::row_wise, Placement::table_row_wise,
                                     Placement::replicated};

struct DlrmConfig {
  std::string name = "dlrm";
  std::int64_t dense = 0, dim = 0;
  std::vector<std::int64_t> bottom, top, rows, lookups;
  std::int64_t micro_batch = 1, global_batch = 1;
  std::int64_t data = 1;  // ranks the tables are sharded over
  std::int64_t node_ranks = 0;  // of them on one node (TorchRec's local world size; table-row-wise needs it)
  Placement sharding = Placement::table_wise;  // of the tables the thresholds do not pick
  std::int64_t row_wise_min_rows = 0, data_parallel_max_rows = 0;  // 0: no table picked
  ElementType dtype = ElementType::fp32, embedding_dtype = ElementType::fp32;
  SparseUpdate embedding_optimizer = SparseUpdate::rowwise_adagrad;  // of the sharded tables

  /// Table t's placement. Over one rank every sharding is the whole table on it (table-wise); table-row-wise on one
  /// node is row-wise.
  [[nodiscard]] Placement placement(std::size_t t) const {
    Placement p = sharding;
    if (row_wise_min_rows > 0 && rows[t] >= row_wise_min_rows) p = Placement::row_wise;
    if (data_parallel_max_rows > 0 && rows[t] <= data_parallel_max_rows) p = Placement::replicated;
    if (p == Placement::table_row_wise && nodes() == 1) p = Placement::row_wise;
    return p == Placement::row_wise && data <= 1 ? Placement::table_wise : p;
  }
  /// The nodes the ranks span (table-row-wise places each table on the ranks of one).
  [[nodiscard]] std::int64_t nodes() const { return node_ranks > 0 && node_ranks < data ? data / node_ranks : 1; }
};

/// A table's columns [offset, offset + width) and `rows` of its rows on one rank.
struct Shard {
  std::size_t table = 0;
  std::int64_t offset = 0, width = 0, part = 0, rows = 0;
  Placement placement = Placement::table_wise;
};

Placement parse_placement(const std::string& s) {
  return s == "row_wise"         ? Placement::row_wise
         : s == "table_row_wise" ? Placement::table_row_wise
         : s == "data_parallel"  ? Placement::replicated
                                 : Placement::table_wise;
}

ElementType read_type(TableReader& w, const char* key, ElementType fallback) {
  auto d = w.string(key);
  if (!d) return fallback;
  auto e = parse_element_type(*d);
  if (!e) w.fail(key, "'" + *d + "' is not an element type; expected one of " + join(all_element_type_names()));
  return *e;
}

DlrmConfig read_config(TableReader& w, const DlrmOverrides& o) {
  DlrmConfig c;
  c.name = w.string("name").value_or(c.name);
  (void)w.choice("generator", {"dlrm"});
  const Bounds dims{1.0, 1048576.0, false, false};
  c.dense = w.required_integer("dense_features", dims);
  c.dim = w.required_integer("embedding_dim", dims);
  auto list = [&](const char* key, Bounds b) {
    auto v = w.integer_list(key, b);
    if (!v || v->empty()) w.fail_missing(key, "a non-empty list of integers");
    return *v;
  };
  c.bottom = list("bottom_mlp", dims);
  c.top = list("top_mlp", dims);
  c.rows = list("table_rows", Bounds{1.0, 1099511627776.0, false, false});
  c.lookups = w.integer_or_list("lookups", c.rows.size(), Bounds{1.0, 65536.0, false, false})
                  .value_or(std::vector<std::int64_t>(c.rows.size(), 1));
  (void)w.choice("interaction", {"dot"});
  if (c.bottom.back() != c.dim) {
    w.fail("bottom_mlp", "the dot interaction needs the bottom MLP's last layer (" + std::to_string(c.bottom.back()) +
                             ") to be embedding_dim = " + std::to_string(c.dim));
  }
  c.micro_batch = w.integer("micro_batch", Bounds::at_least(1)).value_or(1);
  c.global_batch = w.integer("global_batch", Bounds::at_least(1)).value_or(c.micro_batch);
  if (c.global_batch % c.micro_batch != 0) {
    w.fail("global_batch", "global_batch = " + std::to_string(c.global_batch) + " is not a multiple of micro_batch = " +
                               std::to_string(c.micro_batch));
  }
  const std::optional<std::int64_t> given = w.integer("data_parallel", Bounds{1.0, 1048576.0, false, false});
  if (given && o.data > 0 && *given != o.data) {
    w.fail("data_parallel", "data_parallel = " + std::to_string(*given) + " here, but the experiment generates the rank "
                            "with " + std::to_string(o.data) + " (from [parallelism] data): remove the key or make "
                            "them agree");
  }
  c.data = o.data > 0 ? o.data : given.value_or(1);
  c.sharding = parse_placement(
      w.choice("sharding", {"table_wise", "row_wise", "table_row_wise", "data_parallel"}).value_or("table_wise"));
  if (!o.sharding.empty()) c.sharding = parse_placement(o.sharding);
  if (auto n = w.integer("node_ranks", Bounds{1.0, 1048576.0, false, false})) c.node_ranks = *n;
  if (o.node_ranks > 0) c.node_ranks = o.node_ranks;
  if (c.sharding == Placement::table_row_wise && c.data > 1) {
    if (c.node_ranks == 0) {
      w.fail_missing("node_ranks", "the data-parallel ranks on one node (TorchRec's local world size), which "
                                   "sharding = \"table_row_wise\" places each table on");
    }
    if (c.node_ranks < c.data && c.data % c.node_ranks != 0) {
      w.fail("node_ranks", "node_ranks = " + std::to_string(c.node_ranks) + " does not divide the " +
                               std::to_string(c.data) + " ranks (data_parallel) into whole nodes");
    }
  }
  const Bounds rows_bound = Bounds::non_negative();
  c.row_wise_min_rows = o.row_wise_min_rows >= 0 ? o.row_wise_min_rows
                                                 : w.integer("row_wise_min_rows", rows_bound).value_or(0);
  c.data_parallel_max_rows = o.data_parallel_max_rows >= 0 ? o.data_parallel_max_rows
                                                           : w.integer("data_parallel_max_rows", rows_bound).value_or(0);
  c.dtype = read_type(w, "dtype", ElementType::fp32);
  c.embedding_dtype = read_type(w, "embedding_dtype", c.dtype);
  if (!o.embedding_dtype.empty()) c.embedding_dtype = *parse_element_type(o.embedding_dtype);
  // FBGEMM's EmbOptimType for the sharded tables, whatever optimizer the dense parameters use.
  if (auto u = w.choice("embedding_optimizer", all_sparse_update_names())) c.embedding_optimizer = *parse_sparse_update(*u);
  if (!o.embedding_optimizer.empty()) c.embedding_optimizer = *parse_sparse_update(o.embedding_optimizer);
  if (o.micro_batch > 0) c.micro_batch = o.micro_batch;
  // Every count in int64: the tables in bits, the lookups of N·b samples and the interaction's b·F² products.
  using R = long double;
  const R b = static_cast<R>(c.micro_batch) * static_cast<R>(c.data), K = static_cast<R>(c.dim);
  R table_bits = 0, lookups = 0;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    table_bits += static_cast<R>(c.rows[i]) * K * 32;
    lookups += static_cast<R>(c.lookups[i]);
  }
  const R features = static_cast<R>(c.rows.size() + 1);
  const R max = static_cast<R>(std::numeric_limits<std::int64_t>::max());
  if (table_bits > max / 64 || b * lookups * K * 64 > max / 64 || b * features * features * K > max / 64) {
    w.fail("table_rows", "these tables and batch need more than monet counts in 64-bit integers");
  }
  w.finish({"name", "generator", "dense_features", "embedding_dim", "bottom_mlp", "top_mlp", "table_rows", "lookups",
            "interaction", "micro_batch", "global_batch", "data_parallel", "sharding", "row_wise_min_rows",
            "data_parallel_max_rows", "dtype", "embedding_dtype", "embedding_optimizer", "node_ranks"});
  return c;
}

/// Places `items` (whole shards) on `bins` bins, largest first, each on the bin whose larger share after taking it —
/// of all the items' bytes, or of all their lookups (columns read per sample) — is least (then the one holding the
/// fewest bytes, then the lowest index): a greedy balance of memory and lookups, as TorchRec's greedy partitioner
/// balances its storage and perf estimates. Returns the items of the bin with the largest share (the most bytes on
/// ties).
std::vector<Shard> most_loaded(std::vector<Shard> items, std::int64_t bins, const DlrmConfig& c) {
  if (items.empty()) return {};
  using R = long double;
  auto bytes = [&](const Shard& s) { return static_cast<R>(s.rows) * static_cast<R>(s.width); };
  auto reads = [&](const Shard& s) { return static_cast<R>(c.lookups[s.table]) * static_cast<R>(s.width); };
  R all_bytes = 0, all_reads = 0;
  for (const Shard& s : items) all_bytes += bytes(s), all_reads += reads(s);
  std::stable_sort(items.begin(), items.end(), [&](const Shard& a, const Shard& b) { return bytes(a) > bytes(b); });
  std::vector<R> held(static_cast<std::size_t>(bins), 0), read(static_cast<std::size_t>(bins), 0);
  auto share = [&](std::size_t r, R more_bytes, R more_reads) {
    return std::max((held[r] + more_bytes) / all_bytes, (read[r] + more_reads) / all_reads);
  };
  std::vector<std::vector<Shard>> on(static_cast<std::size_t>(bins));
  for (const Shard& s : items) {
    std::size_t best = 0;
    for (std::size_t r = 1; r < held.size(); ++r) {
      const R a = share(r, bytes(s), reads(s)), b = share(best, bytes(s), reads(s));
      if (a < b || (a == b && held[r] < held[best])) best = r;
    }
    held[best] += bytes(s);
    read[best] += reads(s);
    on[best].push_back(s);
  }
  std::size_t most = 0;
  for (std::size_t r = 1; r < held.size(); ++r) {
    const R a = share(r, 0, 0), b = share(most, 0, 0);
    if (a > b || (a == b && held[r] > held[most])) most = r;
  }
  return on[most];
}

/// The shards of the most loaded rank. Table-wise tables' shards are balanced over the N ranks (most_loaded), and
/// the rank built is the one with the largest share, so its memory bounds every rank's in the usual case; another
/// rank may read more columns per sample (docs/datacenter.md#sharding-types). Table-row-wise tables are balanced
/// over the nodes the same way, whole, and every rank of a node holds ⌈rows / node_ranks⌉ rows of each of its
/// node's tables: the rank built holds those of the most loaded node (with table-wise tables too, the two most
/// loaded together: a bound). Row-wise and replicated tables put the same rows on every rank.
std::vector<Shard> rank_shards(const DlrmConfig& c) {
  std::vector<Shard> all, whole, everywhere;
  const std::int64_t n = c.data;
  long double total = 0;
  for (std::size_t t = 0; t < c.rows.size(); ++t) {
    if (c.placement(t) == Placement::table_wise) total += static_cast<long double>(c.rows[t]);
  }
  for (std::size_t t = 0; t < c.rows.size(); ++t) {
    const Placement p = c.placement(t);
    if (p == Placement::table_row_wise) {
      whole.push_back({t, 0, c.dim, 0, c.rows[t], p});
      continue;
    }
    if (p != Placement::table_wise) {
      const std::int64_t rows = p == Placement::row_wise ? (c.rows[t] + n - 1) / n : c.rows[t];
      everywhere.push_back({t, 0, c.dim, 0, rows, p});
      continue;
    }
    std::int64_t parts = 1;
    while (static_cast<long double>(c.rows[t]) / static_cast<long double>(parts) > total / static_cast<long double>(n) &&
           parts * 2 <= n && c.dim % (parts * 2) == 0 && c.dim / (parts * 2) >= 16) {
      parts *= 2;
    }
    for (std::int64_t q = 0; q < parts; ++q) all.push_back({t, q * (c.dim / parts), c.dim / parts, q, c.rows[t], p});
  }
  std::vector<Shard> mine = most_loaded(all, n, c);
  for (Shard sh : most_loaded(whole, c.nodes(), c)) {
    sh.rows = (sh.rows + c.node_ranks - 1) / c.node_ranks;
    mine.push_back(sh);
  }
  mine.insert(mine.end(), everywhere.begin(), everywhere.end());
  std::sort(mine.begin(), mine.end(), [](const Shard& a, const Shard& b) {
    return a.table != b.table ? a.table < b.table : a.offset < b.offset;
  });
  return mine;
}

class DlrmBuilder : GeneratedGraph {
 public:
  DlrmBuilder(const DlrmConfig& c, SourceLocation where) : GeneratedGraph(c.name, std::move(where)), c_(c) {}

  GraphPtr build() && {
    const std::int64_t b = c_.micro_batch, K = c_.dim, T = static_cast<std::int64_t>(c_.rows.size());
    const std::int64_t all_lookups = std::accumulate(c_.lookups.begin(), c_.lookups.end(), std::int64_t{0});
    const TensorId dense = tensor("dense_features", {b, c_.dense}, c_.dtype, TensorRole::input);
    // The KeyedJaggedTensor: per sharding type (table-wise, row-wise, table-row-wise, replicated), its tables' ids, then one length
    // per bag and table (TorchRec's values and lengths, split by the sharding types' input distributions; a bag's
    // offset follows from the lengths).
    const TensorId ids = tensor("sparse_features", {b, all_lookups + T}, ElementType::int64, TensorRole::input);
    std::vector<std::int64_t> type_ids(std::size(kPlacements), 0), type_tables(type_ids);
    for (std::size_t t = 0; t < c_.rows.size(); ++t) {
      type_ids[static_cast<std::size_t>(c_.placement(t))] += c_.lookups[t] + 1;
      ++type_tables[static_cast<std::size_t>(c_.placement(t))];
    }
    const bool mixed = std::count_if(type_tables.begin(), type_tables.end(), [](std::int64_t n) { return n > 0; }) > 1;

    // The sparse arch: this rank's shards, batched as FBGEMM's table-batched embeddings (TBE) batch them — one
    // lookup kernel for every shard of a sharding type, a width and a pooling size, over one buffer holding their
    // rows (its weights_offsets), and one backward kernel that updates them.
    const std::vector<Shard> shards = rank_shards(c_);
    std::vector<TensorId> received;           // each sharding type's pooled vectors of this rank's b samples
    std::vector<std::int64_t> received_at;    // and their first column
    std::int64_t received_width = 0, own_at = 0;
    for (const Placement p : kPlacements) {
      const auto pi = static_cast<std::size_t>(p);
      if (type_tables[pi] == 0) continue;
      const TensorId own = mixed ? columns("sparse_features." + label(p), ids, own_at, type_ids[pi]) : ids;
      own_at += type_ids[pi];
      std::vector<Shard> mine;
      std::copy_if(shards.begin(), shards.end(), std::back_inserter(mine), [&](const Shard& sh) { return sh.placement == p; });
      const TensorId pooled = lookups(p, own, mine);
      received.push_back(distributed(p, pooled, type_tables[pi] * K));
      received_at.push_back(received_width);
      received_width += type_tables[pi] * K;
    }
    TensorId embeddings = concat("embeddings.received", "embeddings", received, received_at, {b, T * K});

    // The dense arch and the dot interaction.
    TensorId x = dense;
    for (std::size_t i = 0; i < c_.bottom.size(); ++i) x = relu(linear("bottom_mlp." + std::to_string(i), x, c_.bottom[i]));
    const std::int64_t F = T + 1, P = F * (F - 1) / 2;
    const TensorId cat = concat("interaction.concat", "interaction", {x, embeddings}, {0, K}, {b, F * K});
    const TensorId vectors = tensor("interaction.vectors", {b, F, K}, c_.dtype, TensorRole::activation);
    ops::view(b_, op("interaction.vectors", "interaction", "Reshape"), cat, vectors);
    const TensorId z = tensor("interaction.dots", {b, F, F}, c_.dtype, TensorRole::activation);
    Operator dots = op("interaction.dots", "interaction", "MatMul");
    dots.kind = OpKind::matmul;
    ops::einsum(b_, std::move(dots), "bfk,bgk->bfg", {vectors, vectors}, z);
    // Z[:, li, lj]: the strictly lower triangle, through two index vectors that dlrm_s_pytorch builds per call (an
    // input of the step, not a stored buffer: the backward keeps them).
    const TensorId tril = tensor("interaction.tril_indices", {2, P}, ElementType::int64, TensorRole::input);
    const TensorId pairs = tensor("interaction.pairs", {b, P}, c_.dtype, TensorRole::activation);
    ops::copy(b_, op("interaction.pairs", "interaction", "GatherND"), {z, tril}, pairs);
    x = concat("interaction.output", "interaction", {x, pairs}, {0, K}, {b, K + P});
    for (std::size_t i = 0; i < c_.top.size(); ++i) {
      x = linear("top_mlp." + std::to_string(i), x, c_.top[i]);
      if (i + 1 < c_.top.size()) x = relu(x);
    }
    return std::move(b_).build();
  }

 private:
  /// The lookups of one sharding type's shards on this rank from `own` (the rank's ids of those tables), as
  /// [samples, pooled columns]: table-wise over N ranks for the N·b samples whose ids the input all-to-all brings
  /// (TorchRec's sparse_dist); row-wise for the b·L ids per table that fall in this rank's rows (the bags' lengths
  /// come for all N·b samples); table-row-wise likewise from the node's G = node_ranks ranks, (N/G)·b·L ids per table
  /// of its node (the lengths of all N·b bags); replicated for the rank's own b samples.
  TensorId lookups(Placement p, TensorId own, const std::vector<Shard>& shards) {
    const std::int64_t b = c_.micro_batch, N = c_.data;
    const bool exchanged = p != Placement::replicated && N > 1;
    const std::string suffix = p == Placement::table_wise ? "" : "." + label(p);
    std::vector<std::vector<Shard>> groups;
    for (const Shard& sh : shards) {
      auto same = [&](const std::vector<Shard>& g) {
        return g.front().width == sh.width && c_.lookups[g.front().table] == c_.lookups[sh.table];
      };
      auto it = std::find_if(groups.begin(), groups.end(), same);
      if (it == groups.end()) groups.push_back({sh});
      else it->push_back(sh);
    }
    // The rank's ids: each group's shards' ids side by side, then the bags' lengths (one per bag and shard; row-wise,
    // one per bag of all N·b samples). Not exchanged, that is `own` itself.
    // The rows of the lookup: the bags whose ids arrive (table-wise), or the N·b bags in rows of bags_per_row (the
    // ranks a row-wise table is split over: each receives 1/G of the ids).
    const bool row_sharded = p == Placement::row_wise || p == Placement::table_row_wise;
    const std::int64_t G = p == Placement::row_wise ? N : p == Placement::table_row_wise ? c_.node_ranks : 1;
    const std::int64_t B = row_sharded ? b * N / G : p == Placement::table_wise && exchanged ? b * N : b;
    const std::int64_t bags_per_row = G;
    std::vector<std::int64_t> at(groups.size(), 0), bag_at(groups.size(), 0);
    std::int64_t width = 0, bags = 0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      at[gi] = width;
      width += static_cast<std::int64_t>(groups[gi].size()) * c_.lookups[groups[gi].front().table];
    }
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      bag_at[gi] = width + bags;
      bags += static_cast<std::int64_t>(groups[gi].size()) * bags_per_row;
    }
    TensorId rank_ids = own;
    if (exchanged) {
      rank_ids = tensor("sparse_dist" + suffix, {B, width + bags}, ElementType::int64, TensorRole::activation);
      ops::copy(b_, op("sparse_dist" + suffix, "sparse_dist", "AllToAll"), {own}, rank_ids);
    }
    std::vector<TensorId> pooled;
    std::vector<std::int64_t> placed;  // each group's first pooled column
    std::int64_t pooled_width = 0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const std::vector<Shard>& g = groups[gi];
      const auto n = static_cast<std::int64_t>(g.size());
      const std::int64_t L = c_.lookups[g.front().table], w = g.front().width;
      std::int64_t rows = 0;
      std::vector<std::int64_t> tables, columns_of;
      for (const Shard& sh : g) {
        rows += sh.rows;
        tables.push_back(static_cast<std::int64_t>(sh.table));
        columns_of.push_back(sh.offset);
      }
      const std::string name = "embeddings" + suffix + ".tbe" + std::to_string(gi);
      const TensorId idx = reshaped(name + ".indices", columns(name + ".ids", rank_ids, at[gi], n * L), {B, n, L});
      // Row-wise, the lookup's bag pointers: monet's EmbeddingBag reads one per lookup row (b of the N·b lengths).
      const TensorId offsets = columns(name + ".offsets", rank_ids, bag_at[gi], n);
      const TensorId weight = tensor(name + ".weight", {rows, w}, c_.embedding_dtype, TensorRole::weight);
      b_.tensor(weight).sparse_update = c_.embedding_optimizer;
      const TensorId out = tensor(name, {B, n, w}, c_.dtype, TensorRole::activation);  // FBGEMM's output type
      Operator bag = op(name, "embeddings", "EmbeddingBag");
      const bool sharded = p != Placement::replicated;
      bag.attributes["sparse"] = {sharded ? 1 : 0};
      bag.attributes["ranks"] = {sharded ? N : 0};  // sharded over (0: replicated on every rank)
      if (p == Placement::table_row_wise) bag.attributes["node_ranks"] = {c_.node_ranks};
      bag.attributes["tables"] = tables;
      bag.attributes["column_offsets"] = columns_of;
      ops::embedding_bag(b_, std::move(bag), weight, idx, offsets, out);
      pooled.push_back(reshaped(name + ".pooled", out, {B, n * w}));
      placed.push_back(pooled_width);
      pooled_width += n * w;
    }
    return concat("embeddings" + suffix + ".concat", "embeddings", pooled, placed, {B, pooled_width});
  }

  /// One sharding type's pooled vectors `pooled` as this rank's b samples' [b, width]: table-wise, the output
  /// all-to-all (embedding_dist: every table's vectors of the rank's samples); row-wise, the partial sums of all N·b
  /// bags (FBGEMM writes a zero vector for a bag with no ids here) reduce-scattered; table-row-wise, those of the
  /// node's tables reduce-scattered over the node's ranks (each keeps the bags of the samples of the ranks with its
  /// place on every node), then all-to-all across the nodes (TorchRec's TwRwPooledEmbeddingDist: intra-node
  /// reduce-scatter, cross-node all-to-all); replicated, as they are. The collectives' operators carry their
  /// data-parallel subgroup (`data_group`: 0 the whole group, 1 the node's ranks, 2 one rank per node).
  TensorId distributed(Placement p, TensorId pooled, std::int64_t width) {
    const std::int64_t b = c_.micro_batch, N = c_.data;
    if (p == Placement::replicated || N <= 1) return pooled;
    const std::string name = p == Placement::table_wise ? "embedding_dist" : "embedding_dist." + label(p);
    const TensorId mine = tensor(name, {b, width}, c_.dtype, TensorRole::activation);
    if (p == Placement::table_wise) {
      ops::copy(b_, op(name, "embedding_dist", "AllToAll"), {pooled}, mine);
      return mine;
    }
    const std::int64_t node_width = b_.tensor(pooled).shape[1];
    const TensorId bags = tensor("embeddings." + label(p) + ".bags", {b * N, node_width}, c_.dtype, TensorRole::activation);
    ops::pad(b_, op("embeddings." + label(p) + ".bags", "embeddings", "Pad"), pooled, bags, {0, 0});
    // The chip's part as Megatron's sequence-parallel reduce-scatter has it: a copy of the rank's part (the ring's
    // time on the links is the plugin's collective).
    if (p == Placement::row_wise) {
      ops::pad(b_, op(name, "embedding_dist", "ReduceScatter"), bags, mine, {0, 0});
      return mine;
    }
    const std::int64_t nodes = c_.nodes();
    const TensorId summed = tensor(name + ".intra", {nodes * b, node_width}, c_.dtype, TensorRole::activation);
    Operator scatter = op(name + ".intra", "embedding_dist", "ReduceScatter");
    scatter.attributes["data_group"] = {1};
    ops::pad(b_, std::move(scatter), bags, summed, {0, 0});
    Operator across = op(name, "embedding_dist", "AllToAll");
    across.attributes["data_group"] = {2};
    ops::copy(b_, std::move(across), {summed}, mine);
    return mine;
  }

  static std::string label(Placement p) {
    switch (p) {
      case Placement::table_wise: return "table_wise";
      case Placement::row_wise: return "row_wise";
      case Placement::table_row_wise: return "table_row_wise";
      case Placement::replicated: return "replicated";
    }
    return "?";
  }

  TensorId linear(const std::string& name, TensorId x, std::int64_t out) {
    return GeneratedGraph::linear(name, x, out, c_.dtype);
  }

  /// x viewed with another shape (the same elements).
  TensorId reshaped(const std::string& name, TensorId x, Shape shape) {
    const TensorId y = tensor(name, std::move(shape), b_.tensor(x).dtype, TensorRole::activation);
    ops::view(b_, op(name, "embeddings", "Reshape"), x, y);
    return y;
  }

  /// Columns [first, first + n) of an id buffer: a view.
  TensorId columns(const std::string& name, TensorId ids, std::int64_t first, std::int64_t n) {
    const TensorId y = tensor(name, {b_.tensor(ids).shape[0], n}, ElementType::int64, TensorRole::activation);
    Operator view = op(name, "embeddings", "Split");
    view.kind = OpKind::view;
    view.ops_per_iteration = 0;
    view.attributes["axis"] = {1};
    view.attributes["offset"] = {first};
    view.operands.push_back(ops::operand(b_, y, OperandSlot::O, {}));
    view.operands.push_back(ops::operand(b_, ids, OperandSlot::I1, {}));
    b_.add_operator(std::move(view));
    return y;
  }

  TensorId relu(TensorId x) {
    const Tensor t = b_.tensor(x);  // a copy: adding the output may move the graph's tensors
    const std::string name = t.name + ".relu";
    const TensorId y = tensor(name, t.shape, t.dtype, TensorRole::activation);
    ops::elementwise(b_, op(name, t.name, "Relu"), {x}, y, 1);
    return y;
  }

  /// torch.cat along axis 1: a new storage holding its inputs side by side (a view operator with their offsets).
  TensorId concat(const std::string& name, const std::string& module, const std::vector<TensorId>& xs,
                  const std::vector<std::int64_t>& offsets, Shape shape) {
    if (xs.size() == 1) return xs.front();
    const TensorId y = tensor(name, std::move(shape), b_.tensor(xs.front()).dtype, TensorRole::activation);
    Operator o = op(name, module, "Concat");
    o.kind = OpKind::view;
    o.ops_per_iteration = 0;
    o.attributes["axis"] = {1};
    o.attributes["offsets"] = offsets;
    o.operands.push_back(ops::operand(b_, y, OperandSlot::O, {}));
    for (TensorId x : xs) o.operands.push_back(ops::operand(b_, x, OperandSlot::I1, {}));
    b_.add_operator(std::move(o));
    return y;
  }

  const DlrmConfig& c_;
};

}  // namespace

GraphPtr build_dlrm(const TomlDocument& doc, const DlrmOverrides& overrides) {
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  TableReader w = root.required_table("workload");
  const SourceLocation where = w.where();
  const DlrmConfig c = read_config(w, overrides);
  root.finish();
  return DlrmBuilder(c, where).build();
}

}  // namespace monet::plugins
