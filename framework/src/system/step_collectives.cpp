// The collectives of a step on a system, placed: the tensor- and context-parallel ones in their passes, ZeRO 2-3's
// gathers and reduce-scatters block by block, and each stage's gradient reduction after its last backward pass.
#include <algorithm>

#include "parallel_step_model.hpp"

namespace monet::detail {

void ParallelStepModel::place_model_parallel_collectives() {
  // Tensor- and context-parallel collectives as operators of their pass, on their group's links. A synchronous one
  // (the plugin names no points) runs right after its operator — a forward collective again after the operator's
  // recomputation, a backward one after the operator's last backward operator — and the pass waits for it.
  auto place = [&](const TensorParallelComm& tc, OperatorId issued, bool issued_at_start, OperatorId awaited,
                   bool awaited_at_start, std::size_t pi) {  // pi: its pass when `issued` is kNone
    // The group's ranks and spacing, the pass group its exposure is accounted to, and how many such groups one data
    // group holds (the energy below counts every chip).
    const bool context = tc.group == ParallelGroup::context, data = tc.group != ParallelGroup::tensor && !context;
    std::int64_t ranks = data ? D : context ? L.context : L.tensor, stride = data || context ? L.tensor : 1;
    double groups = 1;
    if (tc.group == ParallelGroup::data_in_node) ranks = data_per_node, groups = static_cast<double>(D / data_per_node);
    if (tc.group == ParallelGroup::data_across_nodes) {
      ranks = D / data_per_node, stride = L.tensor * data_per_node, groups = static_cast<double>(data_per_node);
    }
    CommCost cost = group_collective(sys, tc.kind, tc.bytes, ranks, stride);
    cost.energy_j *= groups;
    PassCollective x;
    x.seconds = cost.seconds;
    x.tiers = collective_tiers(sys, tc.kind, ranks, stride);
    x.compute_share = collective_compute_share(sys, x.tiers);
    x.group = data ? 3 : context ? 1 : 0;
    if (issued != kNone) {
      pi = pass_of(g.op(issued));
      x.issued_by = index_in_pass[static_cast<std::size_t>(issued)];
      x.issued_at_start = issued_at_start;
    } else if (!pass_ops[pi].empty()) {
      x.issued_by = pass_ops[pi].size() - 1;  // the operator has none of its own here: the end of the pass
    }
    x.awaited_by = x.issued_by, x.awaited_at_start = x.issued_at_start;
    if (awaited != kNone) {
      if (pass_of(g.op(awaited)) != pi) {
        throw InternalError("parallelism plugin: a collective of '" + g.op(tc.op).name + "' is issued by '" + g.op(issued).name +
                            "' and awaited by '" + g.op(awaited).name + "', in another pass");
      }
      x.awaited_by = index_in_pass[static_cast<std::size_t>(awaited)];
      x.awaited_at_start = awaited_at_start;
    }
    passes[pi].collectives.push_back(x);
    (data ? sharded_energy : context ? cp_energy : tp_energy) += cost.energy_j;
  };
  for (const TensorParallelComm& tc : in.plan.comms) {
    const auto backward_pass = static_cast<std::size_t>(2 * chunk_of_op(tc.op) + 1);
    if (tc.issued_by != kNone) {
      place(tc, tc.issued_by, tc.issued_at_start, tc.awaited_by, tc.awaited_at_start, 0);
    } else if (!tc.backward) {
      place(tc, tc.op, false, kNone, false, 0);
      for (OperatorId again : recompute_copies[static_cast<std::size_t>(tc.op)]) place(tc, again, false, kNone, false, 0);
    } else {
      // After the operator's last backward operator; without one in the step, at the end of its backward pass.
      place(tc, last_backward[static_cast<std::size_t>(tc.op)], false, kNone, false, backward_pass);
    }
  }
}

void ParallelStepModel::place_zero_collectives() {
  // ZeRO 2 reduce-scatters each micro-batch's gradients in its backward pass (they accumulate sharded), block by
  // block as the pass finishes each; ZeRO 3 also gathers, before each block of a pass, the parameters its operators
  // read there (DeepSpeed's stage 3: a tied embedding again for the output layer; no weights for an embedding's
  // backward). With zero_overlap_comm (DeepSpeed's overlap_comm) a gather is issued as the block gathered before it
  // starts (prefetched one block ahead) and a reduce-scatter is awaited when the pass ends; otherwise each is
  // awaited where it is issued.
  gathered.assign(static_cast<std::size_t>(chunks), 0);
  if (L.zero_stage >= 2 && S > 1) {
    const unsigned gather_tiers = collective_tiers(sys, CollectiveKind::all_gather, S, L.tensor);
    const unsigned reduce_tiers = collective_tiers(sys, CollectiveKind::reduce_scatter, S, L.tensor);
    std::vector<std::size_t> read_in(g.tensors().size(), kPassEnd);  // the last pass·blocks slot that counted it
    for (std::size_t pi = 0; pi < pass_ops.size(); ++pi) {
      // The blocks of the pass in the order it reaches them: their first and last operators, the parameters read.
      std::vector<std::size_t> order, first(block_count, kPassEnd), last(block_count, 0);
      std::vector<double> reads(block_count, 0);
      for (std::size_t i = 0; i < pass_ops[pi].size(); ++i) {
        const Operator& op = g.op(pass_ops[pi][i]);
        const auto blk = static_cast<std::size_t>(in.block_of_op[static_cast<std::size_t>(op.id)]);
        if (first[blk] == kPassEnd) first[blk] = i, order.push_back(blk);
        last[blk] = i;
        for (const Operand& o : op.operands) {
          const Tensor& x = g.tensor(o.tensor);
          const std::size_t slot = pi * block_count + blk;
          if (o.is_output() || x.role != TensorRole::weight || x.producer != kNone || read_in[static_cast<std::size_t>(x.id)] == slot) continue;
          read_in[static_cast<std::size_t>(x.id)] = slot;
          reads[blk] += static_cast<double>(x.bytes());
        }
      }
      std::size_t previous = kPassEnd;  // the block gathered before (kPassEnd: none yet)
      std::int64_t held = 0;
      for (std::size_t blk : order) {
        if (L.zero_stage >= 3 && reads[blk] > 0) {
          const CommCost cost = group_collective(sys, CollectiveKind::all_gather, reads[blk], S, L.tensor);
          PassCollective x;
          x.seconds = cost.seconds, x.tiers = gather_tiers, x.group = 2;
          x.compute_share = collective_compute_share(sys, gather_tiers);
          x.awaited_by = first[blk], x.awaited_at_start = true;
          if (in.zero_overlap_comm) {
            if (previous != kPassEnd) x.issued_by = first[previous], x.issued_at_start = true;
          } else if (first[blk] > 0) {
            x.issued_by = first[blk] - 1;  // as the operator before it ends: the pass waits for it in full
          }
          passes[pi].collectives.push_back(x);
          zero_energy += cost.energy_j;
          const double with_prefetched = reads[blk] + (in.zero_overlap_comm && previous != kPassEnd ? reads[previous] : 0);
          held = std::max(held, static_cast<std::int64_t>(with_prefetched));
          previous = blk;
        }
        if (pi % 2 == 1 && block_grads[blk] > 0) {
          const CommCost cost = group_collective(sys, CollectiveKind::reduce_scatter, block_grads[blk], S, L.tensor);
          PassCollective x;
          x.seconds = cost.seconds, x.tiers = reduce_tiers, x.group = 2;
          x.compute_share = collective_compute_share(sys, reduce_tiers);
          x.issued_by = last[blk];
          x.awaited_by = in.zero_overlap_comm ? kPassEnd : last[blk];
          passes[pi].collectives.push_back(x);
          zero_energy += cost.energy_j;
        }
      }
      gathered[pi / 2] = std::max(gathered[pi / 2], held);
    }
  }
}

void ParallelStepModel::reduce_gradients() {
  d = static_cast<double>(D);
  shards = static_cast<double>(S), instances = static_cast<double>(I);
  stage_opt.assign(static_cast<std::size_t>(p), 0);
  stage_dp_end = stage_reduced = stage_hidden = stage_gather = stage_opt;
  stage_weights.assign(static_cast<std::size_t>(p), 0);
  stage_grads = stage_states = stage_casts = stage_fp32_grads = stage_weights;
  const bool deepspeed = in.stack == ParallelStack::deepspeed;
  std::vector<double> reduce_s(static_cast<std::size_t>(p), 0);  // each stage's reduction after its last backward
  for (std::int64_t s = 0; s < p; ++s) {
    const auto si = static_cast<std::size_t>(s);
    for (std::int64_t c = 0; c < v; ++c) {
      const auto j = static_cast<std::size_t>(c * p + s);
      stage_opt[si] += optimizer[j];
      stage_weights[si] += weights[j], stage_grads[si] += grads[j], stage_states[si] += states[j];
      stage_casts[si] += casts[j], stage_fp32_grads[si] += fp32_grads[j];
    }
    if (s == p - 1 && !tied.empty()) stage_opt[si] += tied_opt_s;  // the copy's update
    if (L.zero_stage >= 1) stage_opt[si] /= shards;
    // The gradients' all-reduce (with ZeRO 1 a reduce-scatter; ZeRO 2 and 3 did theirs per micro-batch) starts
    // when the stage's last backward pass ends; with overlap_grad_reduce, bucket by bucket as the last backward pass
    // of each chunk produces them (Megatron's DDP: buckets of max(40M, 1M·d) parameters in production order, one
    // collective at a time on the stage's data-parallel links). With ZeRO 1 and 2 the updated parameters'
    // all-gather follows (ZeRO 3 keeps them sharded). With optimizer instances the reduction is the shard group's
    // and each 1/S shard is then all-reduced across the instances (Megatron-Core's intra- and inter-instance groups).
    const auto grad_bytes = static_cast<double>(stage_grads[si]), weight_bytes = static_cast<double>(stage_weights[si]);
    // DeepSpeed's BF16_Optimizer (Megatron-DeepSpeed's bf16 ZeRO 1) all-reduces the whole gradients in 16 bits
    // (engine.buffered_allreduce_fallback) and each rank then updates its partition; ZeRO 1's stage_1_and_2 (fp16)
    // reduces each rank's partition to it, a reduce-scatter's volume.
    const CollectiveKind reduce = L.zero_stage == 0 || (deepspeed && bf16_optimizer) ? CollectiveKind::all_reduce
                                                                                     : CollectiveKind::reduce_scatter;
    auto across_instances = [&](double bytes) {
      return I > 1 ? group_collective(sys, CollectiveKind::all_reduce, bytes / shards, I, L.tensor * S) : CommCost{};
    };
    CommCost dp;
    if (L.zero_stage <= 1) dp = group_collective(sys, reduce, grad_bytes, S, L.tensor);
    const CommCost across = across_instances(grad_bytes);
    reduce_s[si] = dp.seconds + across.seconds;
    double end = run.last_backward_end_s[si] + reduce_s[si];
    if (in.overlap_grad_reduce && L.zero_stage <= 1) {
      std::vector<Ready> grads_ready;
      for (std::int64_t c = 0; c < v; ++c) {
        const auto j = static_cast<std::size_t>(c * p + s);
        const double start = run.chunk_last_backward_end_s[j] - pt.backward[j];
        for (const Ready& x : produced[j]) grads_ready.push_back({start + x.at_s, x.bytes, x.elements});
      }
      std::stable_sort(grads_ready.begin(), grads_ready.end(), [](const Ready& a, const Ready& b) { return a.at_s < b.at_s; });
      // The links the last backward passes' model-parallel collectives hold, where the reduction needs them too:
      // a bucket starts in a gap long enough for it (they are on those passes' critical path, it is not).
      const unsigned dp_tiers = collective_tiers(sys, reduce, S, L.tensor) |
                                (I > 1 ? collective_tiers(sys, CollectiveKind::all_reduce, I, L.tensor * S) : 0u);
      std::vector<std::pair<double, double>> taken;
      for (std::int64_t c = 0; c < v; ++c) {
        const auto j = static_cast<std::size_t>(c * p + s);
        const double start = run.chunk_last_backward_end_s[j] - pt.backward[j];
        for (const Held& h : held[j]) {
          if ((h.tiers & dp_tiers) != 0 && h.end_s > h.start_s) taken.emplace_back(start + h.start_s, start + h.end_s);
        }
      }
      // The pipeline's sends and receives on the stage's chip hold its links too (they are on the critical path).
      if ((collective_tiers(sys, CollectiveKind::send, 2, neighbours) & dp_tiers) != 0) {
        for (const auto& [from, to] : run.send_intervals[si]) taken.emplace_back(from, to);
      }
      std::sort(taken.begin(), taken.end());
      // A bucket running beside those backward passes takes the tiers' compute share of the chip while they
      // overlap: the stage's compute ends that much later (the passes are not re-run; the lost time is the same).
      const double share = collective_compute_share(sys, dp_tiers);
      const auto bucket_elements = std::max<std::int64_t>(40'000'000, 1'000'000 * D);
      double network = 0, bytes = 0, lost = 0, on_links = 0;
      std::int64_t elements = 0;
      for (std::size_t i = 0; i < grads_ready.size(); ++i) {
        bytes += grads_ready[i].bytes, elements += grads_ready[i].elements;
        if (elements < bucket_elements && i + 1 < grads_ready.size()) continue;
        const double length = group_collective(sys, reduce, bytes, S, L.tensor).seconds + across_instances(bytes).seconds;
        const double start = first_free(taken, std::max(network, grads_ready[i].at_s), length);
        network = start + length;
        on_links += length;
        for (std::int64_t c = 0; share > 0 && c < v; ++c) {
          const auto j = static_cast<std::size_t>(c * p + s);
          const double pass_end = run.chunk_last_backward_end_s[j];
          lost += share * std::max(0.0, std::min(network, pass_end) - std::max(start, pass_end - pt.backward[j]));
        }
        bytes = 0, elements = 0;
      }
      end = std::max(network, run.last_backward_end_s[si] + lost);
      // What ran beside the backward passes: the buckets' time less what the stage waits after them.
      stage_hidden[si] = std::max(0.0, on_links - (end - run.last_backward_end_s[si]));
    }
    stage_reduced[si] = end;
    if (L.zero_stage == 1 || L.zero_stage == 2) {
      const CommCost gather = group_collective(sys, CollectiveKind::all_gather, weight_bytes, S, L.tensor);
      stage_gather[si] = gather.seconds;
      dp += gather;
    }
    stage_dp_end[si] = end + stage_gather[si];
    // t·I shard groups per stage, t·S groups across the instances.
    dp_energy += (dp.energy_j * instances + across.energy_j * shards) * static_cast<double>(L.tensor);
  }
  // The tied parameters' gradients: all-reduced between the first and the last stage (a group of 2 chips
  // t·cp·d·(p − 1) apart, one group per pipeline: t·cp·d of them) once both stages have reduced their own over the
  // data-parallel group — Megatron's finalize_model_grads runs finish_grad_sync, then
  // _allreduce_word_embedding_grads, then the optimizer steps (the SC'21 code's train_step: the data-parallel
  // all-reduce, then the embedding all-reduce) — so it adds to both stages' reductions, before ZeRO 1-2's gathers of
  // the updated parameters. With ZeRO 2-3 each chip holds its 1/S shard of the gradient: that is what it reduces.
  if (!tied.empty() && tied.gradient_bytes > 0) {
    // DeepSpeed's BF16_Optimizer all-reduces the tied weights' fp32 gradients (_hp_grad).
    const double whole = deepspeed && bf16_optimizer ? 4.0 * static_cast<double>(tied.gradient_elements)
                                                     : static_cast<double>(tied.gradient_bytes);
    const double bytes = whole / (L.zero_stage >= 2 ? shards : 1);
    const CommCost ar = group_collective(sys, CollectiveKind::all_reduce, bytes, 2, neighbours * (p - 1));
    const auto first = std::size_t{0}, last = static_cast<std::size_t>(p - 1);
    if (deepspeed) {
      // DeepSpeed's engine reduces the tied gradients first (ReduceTiedGrads, then ReduceGrads, then the step):
      // the two stages meet when both have run their last backward pass, then each reduces its own.
      const double tied_end = std::max(run.last_backward_end_s[first], run.last_backward_end_s[last]) + ar.seconds;
      for (const std::size_t s : {first, last}) {
        stage_reduced[s] = tied_end + reduce_s[s];
        stage_dp_end[s] = stage_reduced[s] + stage_gather[s];
      }
    } else {
      const double end = std::max(stage_reduced[first], stage_reduced[last]) + ar.seconds;
      stage_dp_end[first] = end + stage_gather[first];
      stage_dp_end[last] = end + stage_gather[last];
    }
    r.tied_comm_s = ar.seconds;
    dp_energy += ar.energy_j * static_cast<double>(L.tensor) * d;
  }
}

}  // namespace monet::detail
