#pragma once
// The parallelism plugin kind (`parallelism`): the tensor-parallel rules of a model family — after which
// operators of one rank's training step a tensor-parallel group communicates, what and how much. The kernel owns
// what does not depend on the family (docs/datacenter.md, docs/plugins.md#parallelism): pipeline stages along the
// module chain, data parallelism and ZeRO over the parameters, the pipeline schedule, the collective cost model.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it passes.
#include <cstdint>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, send };

/// How a step is spread over chips, in Megatron-LM's names ([parallelism]).
struct ParallelLayout {
  std::int64_t tensor = 1;
  std::int64_t pipeline = 1;
  std::int64_t data = 1;
  std::int64_t virtual_pipeline = 1;
  bool sequence_parallel = false;
  std::int64_t zero_stage = 0;
  std::int64_t context = 1;  // cp: the sequence split over cp ranks, each attending to every key (ring attention)
};

/// The group a collective of one rank's step runs in: its tensor-parallel group (t ranks, consecutive), its
/// context-parallel group (cp ranks, t apart), or its data-parallel group (d·cp ranks, t apart: the ranks that
/// replicate the dense parameters, over which a family may shard other parameters, as TorchRec shards a DLRM's
/// embedding tables: their all-to-alls). A data-parallel group spanning nodes splits in two kinds of subgroups, as
/// hierarchical sharding uses them (TorchRec's table-row-wise): `data_in_node`, its ranks on the rank's node, and
/// `data_across_nodes`, its ranks on the other nodes with the same place in theirs (one per node).
enum class ParallelGroup : std::uint8_t { tensor, context, data, data_in_node, data_across_nodes };

/// One collective of a model-parallel group, per micro-batch: it runs right after operator `op` of the rank's
/// step (a forward operator for a forward collective; `backward`: in the backward pass of that forward operator,
/// on the gradient), on the critical path. When `op` is recomputed, a forward collective runs again with it.
/// A collective the family runs asynchronously names where it is issued and where the rank waits for it instead
/// (`issued_by`, `awaited_by`, operators of the step in any phase): the kernel schedules it on the links of its
/// group beside the operators between those points (docs/datacenter.md#collectives-in-a-pass). Such an entry is one
/// run: a recomputed operator's second run is an entry of its own.
struct TensorParallelComm {
  OperatorId op = kNone;
  bool backward = false;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;  // the whole array (nccl-tests' S): what each rank holds before an all-reduce
  ParallelGroup group = ParallelGroup::tensor;
  bool issued_at_start = false;   // issued when `issued_by` starts (else when it ends)
  bool awaited_at_start = false;  // `awaited_by` waits for it before it starts (else the pass waits when it ends)
  OperatorId issued_by = kNone;   // kNone: synchronous, right after `op` (or its backward) as above
  OperatorId awaited_by = kNone;  // kNone with issued_by set: awaited where it is issued
};

/// What a family's rules say about one rank's step.
struct TensorParallelPlan {
  std::vector<TensorParallelComm> comms;  // per micro-batch, in graph order
  std::int64_t micro_batch = 1;           // samples (sequences) per micro-batch of the step
  /// The data-parallel ranks per node the rank's step was built for (its data_in_node subgroup), which the kernel
  /// checks against the system's placement; 0: the step does not depend on it.
  std::int64_t data_ranks_per_node = 0;
};

class MONET_API ParallelismModel : public Plugin {
 public:
  ~ParallelismModel() override;
  /// The plan for `rank_step`, the training step of ONE rank of a tensor-parallel group of layout.tensor (as the
  /// workload generated it). A layout or graph the family's rules cannot split is a UserError.
  [[nodiscard]] virtual TensorParallelPlan plan(const Graph& rank_step, const ParallelLayout& layout) const = 0;
};

}  // namespace monet
