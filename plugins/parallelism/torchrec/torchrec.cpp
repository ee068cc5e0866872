// TorchRec's model parallelism for a DLRM (Ivchenko et al. 2022; torchrec.distributed's ShardedEmbeddingBagCollection):
// the embedding tables are sharded over the data-parallel ranks (the `dlrm` generator places them and builds the
// most loaded rank's step), the dense MLPs are replicated (the kernel all-reduces their gradients). The
// generator's "AllToAll" operators mark the two exchanges of a sharded lookup: the input distribution (each rank
// sends every other rank the ids of its tables' features for its b samples, int64) and the output distribution
// (each rank sends every other rank the pooled vectors of that rank's samples for its own tables); the backward
// pass returns the pooled vectors' gradients by the reverse all-to-all. Each collective's bytes are the larger of
// what the rank sends and receives (nccl-tests' S for an all-to-all); the ids travel with one length per bag and
// table (the KeyedJaggedTensor's values and lengths, int64 here). The exchanges are synchronous, unless
// `pipelined_input_dist` (TorchRec's TrainPipelineSparseDist: the next batch's ids are distributed while this batch
// trains): then the input distribution runs beside the forward pass, issued as it starts and awaited as it ends
// (the next micro-batch's ids, so no lookup waits for it; one forward pass stands for the overlap window).
// Row-wise tables have their own input all-to-all (the ids that fall in each rank's rows) and, at the generator's
// "ReduceScatter" operator, a reduce-scatter of the partial pooled vectors of all N·b bags (TorchRec's
// PooledEmbeddingsReduceScatter) whose gradients the backward pass all-gathers. Table-row-wise tables (each on the
// ranks of one node, rows split over them) have their own input all-to-all over all ranks, and their output
// distribution in two: a reduce-scatter over the node's ranks, then an all-to-all across the nodes (TorchRec's
// TwRwPooledEmbeddingDist); the operators' `data_group` attribute names the subgroup (1: the node's data-parallel
// ranks, 2: one per node), and the tables' `node_ranks` the ranks per node the rank was built for, which the kernel
// checks against the system.
#include <algorithm>
#include <string>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/util/error.hpp"

namespace monet::plugins {
namespace {

class TorchRec final : public ParallelismModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::parallelism;
    i.name = "torchrec";
    i.version = "1.1.0";
    i.summary = "TorchRec's all-to-alls of a DLRM whose embedding tables are sharded over the data-parallel ranks";
    i.description =
        "For one rank of the data-parallel group (d ranks): per micro-batch, an all-to-all at each AllToAll operator "
        "of the rank's step (the `dlrm` generator's sparse_dist: the features' ids, int64; embedding_dist: the "
        "pooled embeddings), of the larger of the bytes the rank sends and receives, and for embedding_dist the "
        "reverse all-to-all of their gradients in the backward pass; at each ReduceScatter operator (row-wise "
        "tables' partial pooled embeddings of every rank's samples) a reduce-scatter of its input, all-gathered "
        "back in the backward pass; an operator's data_group attribute puts its collective in the node's data-parallel "
        "ranks (1) or in one rank per node (2; table-row-wise tables' intra-node reduce-scatter and cross-node "
        "all-to-all). Synchronous, but for the ids' all-to-alls with "
        "pipelined_input_dist. The dense parameters are replicated (the kernel reduces their gradients); the "
        "tables' rows are updated where they live. Refuses "
        "tensor, context or pipeline parallelism and ZeRO (not modelled with sharded tables).";
    i.params = {
        ParamSpec::boolean("pipelined_input_dist", false)
            .with_doc("TorchRec's TrainPipelineSparseDist: the ids' all-to-all (sparse_dist) of the next micro-batch "
                      "runs beside this micro-batch's forward pass (issued as it starts, awaited as it ends) instead "
                      "of on the critical path before the lookups (TrainPipelineBase)"),
    };
    return i;
  }
  explicit TorchRec(const ParamValues& p) : pipelined_(p.get_bool("pipelined_input_dist")) {}

  [[nodiscard]] TensorParallelPlan plan(const Graph& g, const ParallelLayout& layout) const override {
    if (layout.tensor > 1 || layout.context > 1 || layout.pipeline > 1) {
      throw UserError("torchrec: tensor, context and pipeline must be 1 (the tables are sharded over the data-parallel "
                      "ranks; the MLPs are replicated), got " + std::to_string(layout.tensor) + ", " +
                      std::to_string(layout.context) + ", " + std::to_string(layout.pipeline));
    }
    if (layout.zero_stage > 0) {
      throw UserError("torchrec: zero_stage = " + std::to_string(layout.zero_stage) + ": ZeRO over the dense "
                      "parameters beside sharded tables is not modelled (TorchRec replicates them with DDP)");
    }
    TensorParallelPlan plan;
    const Tensor* first = nullptr;
    for (const Tensor& t : g.tensors()) {
      if (t.role == TensorRole::input && !t.shape.empty()) {
        first = &t;
        break;
      }
    }
    if (first == nullptr) throw UserError("torchrec: the step has no input tensor to take the micro-batch from");
    plan.micro_batch = first->shape.front();
    bool any = false;
    OperatorId last_forward = kNone;
    for (const Operator& op : g.operators()) {
      if (op.phase == Phase::forward) last_forward = op.id;
    }
    for (const Operator& op : g.operators()) {
      if (op.type == "AllGather" || op.type == "Shard") {
        throw UserError("torchrec: the workload's rank has Megatron's sequence-parallel operators ('" + op.name +
                        "'); use [parallelism] plugin = \"megatron\"");
      }
      if (op.type == "EmbeddingBag" && op.phase == Phase::forward) {
        const auto r = op.attributes.find("ranks");
        const std::int64_t ranks = r == op.attributes.end() || r->second.empty() ? 0 : r->second.front();
        const auto per_node = op.attributes.find("node_ranks");
        if (per_node != op.attributes.end() && !per_node->second.empty()) plan.data_ranks_per_node = per_node->second.front();
        if (ranks > 0 && ranks != layout.data * layout.context) {
          throw UserError("torchrec: the workload's tables are sharded over " + std::to_string(ranks) +
                          " ranks (its data_parallel) but [parallelism] data = " + std::to_string(layout.data) +
                          ": set both ([workload] data_parallel; in a search, one gene with both paths)");
        }
      }
      if (op.phase != Phase::forward || (op.type != "AllToAll" && op.type != "ReduceScatter")) continue;
      any = true;
      double sent = 0, received = 0;
      bool integer = false;
      for (const Operand& o : op.operands) {
        const Tensor& t = g.tensor(o.tensor);
        (o.is_output() ? received : sent) += static_cast<double>(t.bytes());
        if (o.is_output()) integer = t.dtype == ElementType::int64 || t.dtype == ElementType::int32;
      }
      const double bytes = std::max(sent, received);
      const auto sub = op.attributes.find("data_group");
      const std::int64_t which = sub == op.attributes.end() || sub->second.empty() ? 0 : sub->second.front();
      const ParallelGroup group = which == 1   ? ParallelGroup::data_in_node
                                  : which == 2 ? ParallelGroup::data_across_nodes
                                               : ParallelGroup::data;
      if (op.type == "ReduceScatter") {  // S: the whole array, the partial vectors of every rank's samples
        plan.comms.push_back({op.id, false, CollectiveKind::reduce_scatter, bytes, group});
        plan.comms.push_back({op.id, true, CollectiveKind::all_gather, bytes, group});
        continue;
      }
      TensorParallelComm comm{op.id, false, CollectiveKind::all_to_all, bytes, group};
      if (integer && pipelined_) {
        comm.issued_by = op.id, comm.issued_at_start = true;
        comm.awaited_by = last_forward;  // when it ends: the end of the forward pass
      }
      plan.comms.push_back(comm);
      if (!integer) plan.comms.push_back({op.id, true, CollectiveKind::all_to_all, bytes, group});
    }
    if (any && layout.data * layout.context < 2) {
      throw UserError("torchrec: the workload's rank was generated with its tables sharded (all-to-all operators) but "
                      "[parallelism] data = " + std::to_string(layout.data));
    }
    return plan;
  }

 private:
  bool pipelined_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::TorchRec)
