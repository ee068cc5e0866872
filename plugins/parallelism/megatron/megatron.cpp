// Megatron-LM's tensor parallelism for GPT (Shoeybi et al. 2019; Narayanan et al. SC'21 §2.3): each layer's
// attention and MLP are a column-parallel linear layer followed by a row-parallel one, so the forward pass
// all-reduces the row-parallel outputs (linear_proj, linear_fc2) and the backward pass all-reduces the gradient of
// the column-parallel inputs (linear_qkv, linear_fc1): Megatron's conjugate operators g and f. The word embedding
// is split by vocabulary (its lookup is all-reduced), and so are the logits: the cross-entropy all-reduces the
// row maximum, the target logit and the sum of exponentials (3 fp32 values per token), and the backward pass
// all-reduces the gradient of the output layer's input. Operators are recognised by Megatron-core's module names,
// which the `gpt` workload generator writes (docs/datacenter.md).
//
// With sequence parallelism (Korthikanti et al. 2022, §4.2.2) the all-reduces around the layers become the
// generator's AllGather (before a column-parallel layer: an all-gather forward, a reduce-scatter of the gradient)
// and ReduceScatter (after a row-parallel layer: a reduce-scatter forward, an all-gather of the gradient)
// operators; the embeddings are all-reduced, then Shard splits them (no communication; the gradient is
// all-gathered). The output layer's input gradient is then the reduce-scatter of its AllGather.
//
// With context parallelism (Megatron-core's context_parallel_size) the generator's AllGather operators marked
// context_parallel gather each layer's keys and values over the context-parallel group (all-gather forward,
// reduce-scatter of their gradients backward; the exchange runs again in the backward pass). With cp_comm_type =
// p2p (Megatron's default: Transformer Engine's ring) the blocks travel while the attention computes, so each
// exchange runs beside the attention's forward or backward kernel; all_gather (Llama 3's) puts them before it.
//
// Asynchronous collectives (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication, since September 2021):
// a column-parallel layer's backward pass issues the all-reduce (or, with sequence parallelism, the
// reduce-scatter) of its input gradient when that gradient is computed and waits for it only after its weight
// gradient, so the collective runs beside the weight-gradient GEMM; with sequence parallelism it also issues the
// all-gather of its sharded input as its backward pass starts and waits for it before the weight gradient, so the
// gather runs beside the input-gradient GEMM. Every other collective is synchronous, unless tp_comm_overlap.
//
// tp_comm_overlap (Megatron-LM's --tp-comm-overlap: Transformer Engine's userbuffers, with sequence parallelism) also
// pipelines the remaining sequence-parallel collectives with the GEMM next to them, chunk by chunk: the forward
// all-gather of a column-parallel layer's input with that layer's GEMM, the forward reduce-scatter of a
// row-parallel layer's output with the GEMM producing it, and the backward all-gather of that output's gradient
// with the row-parallel layer's input-gradient GEMM. Each is issued as its GEMM starts and awaited as it ends.
#include <string>
#include <string_view>
#include <vector>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/util/error.hpp"

namespace monet::plugins {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class Megatron final : public ParallelismModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::parallelism;
    i.name = "megatron";
    i.version = "1.1.0";
    i.summary = "Megatron-LM's tensor-parallel collectives of a GPT layer (column- then row-parallel linear layers)";
    i.description =
        "For one rank of a tensor-parallel group of t: per micro-batch and layer, an all-reduce of the output of "
        "*.linear_proj and *.linear_fc2 in the forward pass and of the input gradient of *.linear_qkv and "
        "*.linear_fc1 in the backward pass (b*s*h elements each); an all-reduce of embedding.word_embeddings' "
        "output (vocabulary-parallel lookup); for output_layer (vocabulary-parallel logits), three all-reduces of "
        "one fp32 value per token in the forward pass (the cross-entropy's maximum, target logit and sum) and one of "
        "its input gradient in the backward pass. Operators are found by Megatron-core's module names, as the "
        "`gpt` workload generator writes them. With sequence_parallel the all-reduces around the layers become the "
        "generator's AllGather (all-gather forward, reduce-scatter backward), ReduceScatter (reduce-scatter "
        "forward, all-gather backward) and Shard (all-gather backward) operators, each of the whole array. With "
        "context parallelism, the keys' and values' AllGather operators marked context_parallel run over the "
        "context-parallel group, beside the attention kernel (cp_comm_type = p2p, the ring) or before it "
        "(all_gather). The backward collectives of column-parallel layers (linear_qkv, linear_fc1, "
        "output_layer) are asynchronous as in Megatron-LM since September 2021: issued when the input gradient is "
        "computed and awaited after the weight gradient; with sequence_parallel the all-gather of the layer's "
        "sharded input is issued as its backward pass starts and awaited before the weight gradient.";
    i.params = {
        ParamSpec::boolean("async_tensor_model_parallel_allreduce", true)
            .with_doc("Megatron-LM's flag (default on since September 2021): the backward all-reduce of a "
                      "column-parallel layer's input gradient runs beside its weight-gradient GEMM; false: after "
                      "it, on the critical path (the code of Narayanan et al. SC'21). Sequence parallelism's "
                      "backward all-gather and reduce-scatter overlap either way, as Megatron-LM's sequence-parallel "
                      "code does"),
        ParamSpec::choice("cp_comm_type", {"p2p", "all_gather"}, "p2p")
            .with_doc("Megatron-LM's --cp-comm-type: how a context-parallel group exchanges each layer's keys and "
                      "values. p2p (Megatron's default, Transformer Engine's ring): the blocks travel around the "
                      "ring while the attention computes on the blocks it holds, so the exchange runs beside the "
                      "attention kernel (forward: the gather; backward: the gather again and the reduce-scatter of "
                      "their gradients, beside the attention's backward kernel). all_gather (Llama 3's): gathered "
                      "before the attention, the gradients reduce-scattered after its backward, on the critical path"),
        ParamSpec::boolean("tp_comm_overlap", false)
            .with_doc("Megatron-LM's --tp-comm-overlap (Transformer Engine's userbuffers; needs sequence_parallel): "
                      "the forward all-gather before linear_qkv, linear_fc1 and output_layer runs beside that "
                      "layer's GEMM, the forward reduce-scatter after linear_proj and linear_fc2 beside the GEMM "
                      "producing it, and its backward all-gather beside their input-gradient GEMM (issued as the "
                      "GEMM starts, awaited as it ends: the chunked pipeline's time is the longer of the two). The "
                      "SMs the collectives' kernels take from the GEMM are not modelled"),
    };
    return i;
  }
  explicit Megatron(const ParamValues& p)
      : async_(p.get_bool("async_tensor_model_parallel_allreduce")),
        ring_(p.get_string("cp_comm_type") == "p2p"),
        overlap_(p.get_bool("tp_comm_overlap")) {}

  [[nodiscard]] TensorParallelPlan plan(const Graph& g, const ParallelLayout& layout) const override {
    TensorParallelPlan plan;
    const Tensor* tokens = nullptr;
    for (const Tensor& t : g.tensors()) {
      if (t.role == TensorRole::input && !t.shape.empty()) {
        tokens = &t;
        break;
      }
    }
    if (tokens == nullptr) throw UserError("megatron: the step has no input tensor to take the micro-batch from");
    plan.micro_batch = tokens->shape.front();
    auto bytes_of = [&](const Operator& op, bool output) {
      for (const Operand& o : op.operands) {
        const Tensor& t = g.tensor(o.tensor);
        if (output == o.is_output() && (output || !t.is_parameter())) return static_cast<double>(t.bytes());
      }
      return 0.0;
    };
    auto context_parallel = [](const Operator& op) {
      const auto it = op.attributes.find("context_parallel");
      return op.type == "AllGather" && it != op.attributes.end() && !it->second.empty() && it->second.front() != 0;
    };
    // Per forward operator: its input-gradient and weight-gradient operators, and its recomputation.
    const std::size_t n = g.operators().size();
    std::vector<OperatorId> dx(n, kNone), dw(n, kNone), again(n, kNone);
    for (const Operator& op : g.operators()) {
      if (op.derived_from == kNone) continue;
      const auto f = static_cast<std::size_t>(op.derived_from);
      if (op.phase == Phase::backward_dx && dx[f] == kNone) dx[f] = op.id;
      if (op.phase == Phase::backward_dw && dw[f] == kNone) dw[f] = op.id;
      if (op.phase == Phase::recompute) again[f] = op.id;
    }
    // A collective pipelined with the kernel `beside` (issued as it starts, awaited as it ends): tp_comm_overlap's
    // GEMMs, the context-parallel ring's attention.
    auto beside = [](TensorParallelComm c, OperatorId kernel) {
      c.issued_by = kernel, c.issued_at_start = true;
      c.awaited_by = kernel, c.awaited_at_start = false;
      return c;
    };
    // The attention kernel reading a context-parallel gather's keys or values (kNone: none with a backward).
    auto attention = [&](const Operator& gather) {
      for (const Operand& o : gather.operands) {
        if (!o.is_output()) continue;
        for (OperatorId c : g.tensor(o.tensor).consumers) {
          if (g.op(c).phase == Phase::forward && dx[static_cast<std::size_t>(c)] != kNone) return c;
        }
      }
      return kNone;
    };
    bool context_ops = false;
    for (const Operator& op : g.operators()) {
      if (op.type == "AllToAll") {
        throw UserError("megatron: the workload's rank has all-to-all operators ('" + op.name + "': tables sharded "
                        "over the data-parallel ranks, a DLRM's); Megatron's rules do not cost them: [parallelism] "
                        "plugin = \"torchrec\"");
      }
      if (op.phase != Phase::forward || !context_parallel(op)) continue;
      context_ops = true;
      const double whole = bytes_of(op, true);
      const TensorParallelComm gather{op.id, false, CollectiveKind::all_gather, whole, ParallelGroup::context};
      const TensorParallelComm scatter{op.id, true, CollectiveKind::reduce_scatter, whole, ParallelGroup::context};
      const OperatorId kernel = ring_ ? attention(op) : kNone;
      if (kernel == kNone) {  // all_gather: before the attention (again before its backward), gradients after it
        plan.comms.push_back(gather);
        plan.comms.push_back(scatter);
        continue;
      }
      // The ring: the blocks travel while the attention computes, in its forward and again in its backward kernel,
      // where the gradients travel too.
      const OperatorId backward = dx[static_cast<std::size_t>(kernel)];
      TensorParallelComm again_gather = gather;
      again_gather.backward = true;
      plan.comms.push_back(beside(gather, kernel));
      plan.comms.push_back(beside(again_gather, backward));
      plan.comms.push_back(beside(scatter, backward));
    }
    if (context_ops != (layout.context > 1)) {
      throw UserError("megatron: [parallelism] context = " + std::to_string(layout.context) +
                      " but the workload's rank was generated " + (context_ops ? "with" : "without") +
                      " context parallelism (its context_parallel key)");
    }
    if (overlap_ && (layout.tensor < 2 || !layout.sequence_parallel)) {
      throw UserError("megatron: tp_comm_overlap pipelines sequence parallelism's collectives with their GEMMs: it "
                      "needs [parallelism] tensor >= 2 and sequence_parallel = true (Megatron-LM's rule)");
    }
    if (layout.tensor < 2) return plan;
    const bool sp = layout.sequence_parallel;
    bool found = false, sequence_ops = false;
    // The column-parallel layer reading a sequence-parallel gather's output.
    auto reader = [&](const Operator& gather) {
      for (const Operand& o : gather.operands) {
        if (!o.is_output()) continue;
        for (OperatorId c : g.tensor(o.tensor).consumers) {
          const auto ci = static_cast<std::size_t>(c);
          if (g.op(c).phase == Phase::forward && dx[ci] != kNone && dw[ci] != kNone) return c;
        }
      }
      return kNone;
    };
    // The row-parallel layer whose output a sequence-parallel reduce-scatter reads (with its backward operators).
    auto producer = [&](const Operator& scatter) {
      for (const Operand& o : scatter.operands) {
        if (o.is_output()) continue;
        const OperatorId p = g.tensor(o.tensor).producer;
        if (p != kNone && dx[static_cast<std::size_t>(p)] != kNone) return p;
      }
      return kNone;
    };
    // A column-parallel layer's input-gradient collective beside its weight gradient (kNone: synchronous).
    auto beside_weight_gradient = [&](OperatorId owner, OperatorId layer, CollectiveKind kind, double whole) {
      TensorParallelComm c{owner, true, kind, whole};
      if (layer != kNone) {
        const auto l = static_cast<std::size_t>(layer);
        if (dx[l] != kNone && dw[l] != kNone) c.issued_by = dx[l], c.awaited_by = dw[l];
      }
      plan.comms.push_back(c);
    };
    for (const Operator& op : g.operators()) {
      if (op.phase != Phase::forward || context_parallel(op)) continue;
      auto bytes = [&](bool output) { return bytes_of(op, output); };
      const std::string& n = op.name;
      if (op.type == "AllGather" || op.type == "ReduceScatter" || op.type == "Shard") {
        sequence_ops = true;
        // The whole array: the gathered output, the row-parallel layer's (or the embeddings') full input.
        const double whole = bytes(op.type == "AllGather");
        if (op.type == "AllGather") {
          const OperatorId layer = reader(op);
          if (layer == kNone) {  // no weight gradient to overlap: synchronous, gathered again with its recomputation
            plan.comms.push_back({op.id, false, CollectiveKind::all_gather, whole});
            plan.comms.push_back({op.id, true, CollectiveKind::reduce_scatter, whole});
            continue;
          }
          const auto l = static_cast<std::size_t>(layer);
          TensorParallelComm forward{op.id, false, CollectiveKind::all_gather, whole};
          forward.issued_by = op.id;  // one run: the runs in the backward pass are listed below
          plan.comms.push_back(overlap_ ? beside(forward, layer) : forward);
          // A recomputed layer (full recomputation) runs its forward again, gather included, before its backward.
          const OperatorId gathered_again = again[static_cast<std::size_t>(op.id)];
          if (again[l] != kNone && gathered_again != kNone) {
            TensorParallelComm rerun = forward;
            rerun.issued_by = gathered_again;
            plan.comms.push_back(overlap_ ? beside(forward, again[l]) : rerun);
          }
          // The layer's backward gathers its sharded input beside its input-gradient GEMM.
          TensorParallelComm regather{op.id, true, CollectiveKind::all_gather, whole};
          regather.issued_by = dx[l], regather.issued_at_start = true;
          regather.awaited_by = dw[l], regather.awaited_at_start = true;
          plan.comms.push_back(regather);
          beside_weight_gradient(op.id, layer, CollectiveKind::reduce_scatter, whole);
        } else {
          const TensorParallelComm forward{op.id, false, CollectiveKind::reduce_scatter, whole};
          const TensorParallelComm backward{op.id, true, CollectiveKind::all_gather, whole};
          const OperatorId layer = op.type == "ReduceScatter" && overlap_ ? producer(op) : kNone;
          if (layer == kNone) {
            if (op.type == "ReduceScatter") plan.comms.push_back(forward);
            plan.comms.push_back(backward);
          } else {
            const auto l = static_cast<std::size_t>(layer);
            plan.comms.push_back(beside(forward, layer));
            if (again[l] != kNone) plan.comms.push_back(beside(forward, again[l]));  // full recomputation
            plan.comms.push_back(beside(backward, dx[l]));
          }
          found = found || op.type == "ReduceScatter";
        }
      } else if (n == "embedding.word_embeddings" || (!sp && (ends_with(n, ".linear_proj") || ends_with(n, ".linear_fc2")))) {
        plan.comms.push_back({op.id, false, CollectiveKind::all_reduce, bytes(true)});
        found = found || n != "embedding.word_embeddings";
      } else if (!sp && (ends_with(n, ".linear_qkv") || ends_with(n, ".linear_fc1"))) {
        beside_weight_gradient(op.id, async_ ? op.id : kNone, CollectiveKind::all_reduce, bytes(false));
      } else if (n == "output_layer") {
        const double tokens_fp32 = static_cast<double>(tokens->elements()) * 4;
        for (int i = 0; i < 3; ++i) plan.comms.push_back({op.id, false, CollectiveKind::all_reduce, tokens_fp32});
        if (!sp) beside_weight_gradient(op.id, async_ ? op.id : kNone, CollectiveKind::all_reduce, bytes(false));
      }
    }
    if (sequence_ops != sp) {
      throw UserError(std::string("megatron: [parallelism] sequence_parallel = ") + (sp ? "true" : "false") +
                      " but the workload's rank was generated " + (sp ? "without" : "with") +
                      " sequence parallelism (its sequence_parallel key)");
    }
    if (!found) {
      throw UserError("megatron: tensor = " + std::to_string(layout.tensor) +
                      " but the step has no operator named like Megatron-core's row-parallel layers "
                      "(*.linear_proj, *.linear_fc2): generate the workload with the `gpt` generator");
    }
    return plan;
  }

 private:
  bool async_;
  bool ring_;
  bool overlap_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Megatron)
