#include "monet/system/parallel_step.hpp"

#include <algorithm>
#include <cctype>

#include "monet/system/collectives.hpp"
#include "monet/system/pass_schedule.hpp"
#include "monet/system/pipeline_schedule.hpp"
#include "monet/system/tied_parameters.hpp"
#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"

namespace monet {
namespace {
/// The low-precision copy of a weight that narrowed GEMMs read (Operator::matmul_type: FP8 linear layers), kept
/// beside the working weight for the whole step (Transformer Engine casts the weights once per step); 0 for others.
/// Hopper's second, transposed copy is not counted.
std::int64_t narrow_copy_bytes(const Graph& g, const Tensor& weight) {
  int bits = 0;
  for (OperatorId c : weight.consumers) {
    if (const auto type = g.op(c).matmul_type(); type && bits_of(*type) < bits_of(weight.dtype)) bits = bits_of(*type);
  }
  return bits == 0 ? 0 : weight.elements() * bits / 8;
}

// "layers.12" -> "layers.": the blocks of a transformer's stack differ only by their trailing index.
std::string repeat_prefix(const std::string& label) {
  const auto dot = label.rfind('.');
  if (dot == std::string::npos || dot + 1 == label.size()) return "";
  for (std::size_t i = dot + 1; i < label.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(label[i]))) return "";
  }
  return label.substr(0, dot + 1);
}

}  // namespace

PipelineBlocks pipeline_blocks(const Graph& g) {
  const ModuleTree tree = module_tree(g);
  const std::vector<ModuleItem> items = tree.blocks();
  PipelineBlocks b;
  b.count = items.size();
  b.of_op.assign(g.operators().size(), -1);
  // The longest run of consecutive blocks named PREFIX.<index>: the layers that pipeline stages split.
  std::size_t run_start = 0, run = 0;
  for (std::size_t i = 0; i < items.size();) {
    const std::string prefix = repeat_prefix(tree.label(g, items[i]));
    std::size_t j = i + 1;
    while (!prefix.empty() && j < items.size() && repeat_prefix(tree.label(g, items[j])) == prefix) ++j;
    if (!prefix.empty() && j - i > run) run_start = i, run = j - i;
    i = j;
  }
  b.first_layer = run_start;
  b.layers = run;
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (OperatorId op : tree.operators_of(items[i])) b.of_op[static_cast<std::size_t>(op)] = static_cast<int>(i);
  }
  const int last = static_cast<int>(items.size()) - 1;
  // A parameter belongs to the block of its first forward reader; an optimizer update to its parameter's block
  // (found through the gradient it reads, or the parameter it updates in place).
  auto block_of_parameter = [&](TensorId t) {
    while (t != kNone) {
      const Tensor& x = g.tensor(t);
      if (x.gradient_of != kNone) t = x.gradient_of;
      else if (x.in_place_of != kNone) t = x.in_place_of;
      else break;
    }
    if (t == kNone || !g.tensor(t).is_parameter()) return -1;
    for (OperatorId c : g.tensor(t).consumers) {
      if (g.op(c).phase == Phase::forward && b.of_op[static_cast<std::size_t>(c)] >= 0) return b.of_op[static_cast<std::size_t>(c)];
    }
    return -1;
  };
  for (const Operator& op : g.operators()) {
    int& blk = b.of_op[static_cast<std::size_t>(op.id)];
    if (blk >= 0) continue;
    if (op.derived_from != kNone) blk = b.of_op[static_cast<std::size_t>(op.derived_from)];
    for (std::size_t i = 0; blk < 0 && i < op.operands.size(); ++i) blk = block_of_parameter(op.operands[i].tensor);
    // Else the block of what it reads (a sum of gradients from two readers of an activation: the earlier block's).
    for (const Operand& o : op.operands) {
      if (op.derived_from != kNone) break;
      const OperatorId from = o.is_output() ? kNone : g.tensor(o.tensor).producer;
      if (from != kNone && b.of_op[static_cast<std::size_t>(from)] >= 0) {
        const int f = b.of_op[static_cast<std::size_t>(from)];
        blk = blk < 0 ? f : std::min(blk, f);
      }
    }
    if (blk < 0) blk = op.phase == Phase::forward ? 0 : last;  // e.g. the loss: after the last block
  }
  return b;
}

namespace {

/// One tensor-parallel rank's pipeline send of a boundary of `bytes` between consecutive chunks, as Megatron-LM does
/// it (`scatter_gather_tensors_in_pipeline`, on by default, p2p_communication.py): with t > 1 and no sequence
/// parallelism (whose boundary is already split over the group) each rank sends 1/t of the tensor, and the
/// receiving ranks all-gather it over their tensor group (fast links inside a node) before the next pass. Energy:
/// the rank's share, its own send and 1/t of the all-gather.
CommCost pipeline_send(const System& sys, const ParallelLayout& L, double bytes, std::int64_t neighbours) {
  if (L.tensor <= 1 || L.sequence_parallel) return group_collective(sys, CollectiveKind::send, bytes, 2, neighbours);
  const auto t = static_cast<double>(L.tensor);
  CommCost c = group_collective(sys, CollectiveKind::send, bytes / t, 2, neighbours);
  const CommCost gather = group_collective(sys, CollectiveKind::all_gather, bytes, L.tensor, 1);
  c.seconds += gather.seconds;
  c.bytes_per_chip += gather.bytes_per_chip;
  c.energy_j += gather.energy_j / t;
  return c;
}

}  // namespace

std::int64_t data_ranks_per_node(const System& sys, const ParallelLayout& L) {
  const std::int64_t D = L.data * L.context;
  return L.tensor >= sys.chips_per_node ? 1 : std::min(D, sys.chips_per_node / L.tensor);
}

SystemStep make_system_step(System system, ParallelLayout layout, std::int64_t global_batch, TensorParallelPlan plan,
                            SourceLocation where, const Graph& g, const PipelineBlocks& blocks, const Accelerator& chip,
                            PipelineSplit split) {
  SystemStep st{std::move(system), layout, global_batch > 0 ? global_batch : plan.micro_batch * layout.data,
                std::move(plan), std::move(where), {}, {}};
  auto fail = [&](const std::string& m) { throw UserError(st.where, m); };
  const ParallelLayout& L = st.layout;
  const std::int64_t chips = L.tensor * L.context * L.pipeline * L.data;
  if (chips > st.system.chips()) {
    fail("tensor x context x pipeline x data = " + std::to_string(chips) + " chips, but the system '" + st.system.name +
         "' has " + std::to_string(st.system.chips()));
  }
  if (const std::int64_t per_node = data_ranks_per_node(st.system, L);
      st.plan.data_ranks_per_node > 0 && (st.plan.data_ranks_per_node != per_node || (L.data * L.context) % per_node != 0)) {
    fail("the workload's rank was built for " + std::to_string(st.plan.data_ranks_per_node) + " data-parallel ranks per "
         "node, but the system '" + st.system.name + "' places " + std::to_string(per_node) + " of the " +
         std::to_string(L.data * L.context) + " on a node (" + std::to_string(st.system.chips_per_node) +
         " chips per node, tensor = " + std::to_string(L.tensor) + "): make them agree");
  }
  if (chip.frequency_hz <= 0) fail("the chip '" + chip.name + "' has no frequency_hz: a step on a system needs seconds");
  const std::int64_t b = st.plan.micro_batch;
  if (st.global_batch % (b * L.data) != 0) {
    fail("global_batch = " + std::to_string(st.global_batch) + " is not a multiple of micro-batch x data = " +
         std::to_string(b) + " x " + std::to_string(L.data));
  }
  const std::int64_t p = L.pipeline, chunks = p * L.virtual_pipeline, m = st.global_batch / (b * L.data);
  if (L.virtual_pipeline > 1 && m % p != 0) {
    fail("the interleaved schedule needs the micro-batches (global_batch / (micro-batch x data) = " +
         std::to_string(m) + ") to be a multiple of pipeline = " + std::to_string(p));
  }
  if (blocks.of_op.size() != g.operators().size()) throw InternalError("make_system_step: the blocks of another graph");
  const auto layers = static_cast<std::int64_t>(blocks.layers);
  // Layer slots: the layers, and the embedding and the loss where the split counts them as layers.
  const std::int64_t before = split.embedding ? 1 : 0, slots = layers + before + (split.loss ? 1 : 0);
  if ((chunks > 1 && layers == 0) || (layers > 0 && slots % chunks != 0)) {
    const std::string counted = split.embedding && split.loss ? " plus the embedding and the loss, counted as layers"
                                : split.embedding           ? " plus the embedding, counted as a layer"
                                : split.loss                ? " plus the loss, counted as a layer"
                                                            : "";
    fail("pipeline x virtual_pipeline = " + std::to_string(chunks) + " chunks must divide the " +
         std::to_string(layers) + " repeated layers of the workload's module chain" + counted);
  }
  // The chunk of every block: the layers evenly, what comes before them with the first, after them with the last.
  std::vector<std::int64_t> chunk_of_block(blocks.count, 0);
  for (std::size_t i = 0; i < blocks.count; ++i) {
    if (i < blocks.first_layer) chunk_of_block[i] = 0;
    else if (i >= blocks.first_layer + blocks.layers) chunk_of_block[i] = chunks - 1;
    else chunk_of_block[i] = (static_cast<std::int64_t>(i - blocks.first_layer) + before) / (slots / chunks);
  }
  st.chunk_of_op.reserve(g.operators().size());
  for (int blk : blocks.of_op) st.chunk_of_op.push_back(chunk_of_block[static_cast<std::size_t>(blk)]);
  st.block_of_op = blocks.of_op;
  return st;
}

ParallelStep parallel_step(const ParallelStepInputs& in) {
  const Graph& g = in.step;
  const ParallelLayout& L = in.layout;
  const System& sys = in.system;
  ParallelStep r;
  r.chips = L.tensor * L.context * L.pipeline * L.data;
  // Ranks in Megatron's order (tensor fastest, then context, data, pipeline): a tensor-parallel group is t
  // consecutive chips, a context-parallel group cp chips t apart, the gradient-reduction group (data x context
  // ranks, which hold the same parameters) D = d·cp chips t apart, pipeline neighbours t·cp·d apart.
  const std::int64_t D = L.data * L.context, neighbours = L.tensor * L.context * L.data;
  // ZeRO shards over S consecutive ranks of those D (t apart): Megatron-Core's distributed-optimizer instance. The
  // I = D / S instances hold the same shards and all-reduce them (I ranks t·S apart) once each has reduce-scattered.
  const std::int64_t I = in.optimizer_instances, S = D / I;
  const std::int64_t data_per_node = data_ranks_per_node(sys, L);
  r.micro_batch = in.plan.micro_batch;
  r.global_batch = in.global_batch;
  r.micro_batches = in.global_batch / (r.micro_batch * L.data);
  const std::int64_t p = L.pipeline, v = L.virtual_pipeline, chunks = p * v, m = r.micro_batches;
  auto chunk_of_op = [&](OperatorId op) { return in.chunk_of_op[static_cast<std::size_t>(op)]; };
  // Parameters read in the first and the last chunk: the last stage keeps a copy (tied_parameters.hpp).
  const TiedCopies tied = find_tied_copies(g, in.chunk_of_op, chunks, p);
  std::vector<bool> tied_update(g.operators().size(), false), tied_piece(g.tensors().size(), false);
  for (OperatorId op : tied.optimizer_ops) tied_update[static_cast<std::size_t>(op)] = true;
  for (TensorId x : tied.last_chunk_gradients) tied_piece[static_cast<std::size_t>(x)] = true;

  // Time and energy of every operator on the chip, scaled so that they add up to the step's latency and energy
  // (a multi-core chip overlaps operators; transfers wait between them), and when the chip's schedule started it.
  const double hz = in.chip.frequency_hz;
  std::vector<double> busy(g.operators().size(), 0), energy(busy);
  std::vector<std::int64_t> first_start(g.operators().size(), -1);
  double busy_sum = 0, energy_sum = 0;
  for (const ScheduledNode& n : in.schedule.nodes) {
    const auto op = static_cast<std::size_t>(in.cns.nodes[static_cast<std::size_t>(n.cn)].op);
    busy[op] += static_cast<double>(n.end - n.start);
    energy[op] += n.cost.energy_pj;
    busy_sum += static_cast<double>(n.end - n.start);
    energy_sum += n.cost.energy_pj;
    if (first_start[op] < 0 || n.start < first_start[op]) first_start[op] = n.start;
  }
  const double time_scale = busy_sum > 0 ? static_cast<double>(in.schedule.summary.latency_cycles) / busy_sum / hz : 0;
  // The work's energy only: the chip's idle power is charged over the system's step below, not one pass's schedule.
  const double energy_scale = energy_sum > 0 ? in.schedule.summary.energy.dynamic() * 1e-12 / energy_sum : 0;

  PipelineTimes pt;
  pt.stages = p;
  pt.chunks = v;
  pt.micro_batches = m;
  pt.forward.assign(static_cast<std::size_t>(chunks), 0);
  pt.backward = pt.forward;
  pt.saved_bytes = pt.forward;
  std::vector<double> comm(static_cast<std::size_t>(chunks), 0), recompute(comm), optimizer(comm), context_comm(comm),
      comm_hidden(comm), context_hidden(comm), zero_comm(comm), zero_hidden(comm), sharded_comm(comm),
      sharded_hidden(comm);
  // The passes: 2·c for chunk c's forward pass, 2·c + 1 for its backward pass (recomputation included); each one's
  // operators in the order the chip's schedule started them (an operator it did not schedule keeps its place).
  auto pass_of = [&](const Operator& op) {
    const bool backward = op.phase == Phase::backward_dx || op.phase == Phase::backward_dw || op.phase == Phase::recompute;
    return static_cast<std::size_t>(2 * chunk_of_op(op.id) + (backward ? 1 : 0));
  };
  std::vector<std::vector<OperatorId>> pass_ops(static_cast<std::size_t>(2 * chunks));
  double fb_energy = 0, opt_energy = 0, tp_energy = 0, cp_energy = 0, sharded_energy = 0;
  double tied_opt_s = 0, tied_opt_energy = 0;  // the tied parameters' updates, which the last stage runs again
  std::int64_t step_macs = 0, recompute_macs = 0, previous_start = 0;
  std::vector<std::vector<OperatorId>> recompute_copies(g.operators().size());  // an operator may run again twice
  for (const Operator& op : g.operators()) {
    const auto c = static_cast<std::size_t>(chunk_of_op(op.id));
    std::int64_t& start = first_start[static_cast<std::size_t>(op.id)];
    if (start < 0) start = previous_start;
    previous_start = start;
    const double t = busy[static_cast<std::size_t>(op.id)] * time_scale;
    const double e = energy[static_cast<std::size_t>(op.id)] * energy_scale;
    step_macs += op.macs();
    recompute_macs += op.recomputed_macs();
    if (op.phase == Phase::optimizer) {
      optimizer[c] += t;
      opt_energy += e;
      if (tied_update[static_cast<std::size_t>(op.id)]) tied_opt_s += t, tied_opt_energy += e;
      continue;
    }
    fb_energy += e;
    if (op.phase == Phase::recompute) {
      recompute[c] += t;
      if (op.derived_from != kNone) recompute_copies[static_cast<std::size_t>(op.derived_from)].push_back(op.id);
    }
    pass_ops[pass_of(op)].push_back(op.id);
  }
  std::vector<std::size_t> index_in_pass(g.operators().size(), 0);
  std::vector<OperatorId> last_backward(g.operators().size(), kNone);  // per forward operator, in stream order
  std::vector<PassSchedule> passes(pass_ops.size());
  for (std::size_t pi = 0; pi < pass_ops.size(); ++pi) {
    std::vector<OperatorId>& ops = pass_ops[pi];
    std::stable_sort(ops.begin(), ops.end(), [&](OperatorId a, OperatorId b) {
      return first_start[static_cast<std::size_t>(a)] < first_start[static_cast<std::size_t>(b)];
    });
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Operator& op = g.op(ops[i]);
      index_in_pass[static_cast<std::size_t>(op.id)] = i;
      passes[pi].operator_seconds.push_back(busy[static_cast<std::size_t>(op.id)] * time_scale);
      if (op.phase != Phase::recompute && op.derived_from != kNone && (pi % 2) == 1) {
        last_backward[static_cast<std::size_t>(op.derived_from)] = op.id;
      }
    }
  }
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
  // Parameters, gradients and optimizer states per chunk (ZeRO shards them over the data-parallel group), and the
  // gradients per block (ZeRO 2-3 reduce them block by block).
  std::vector<std::int64_t> weights(static_cast<std::size_t>(chunks), 0), grads(weights), states(weights), casts(weights);
  const std::size_t block_count = in.block_of_op.empty() ? 0 : static_cast<std::size_t>(*std::max_element(in.block_of_op.begin(), in.block_of_op.end())) + 1;
  std::vector<double> block_grads(block_count, 0);
  for (const Tensor& t : g.tensors()) {
    // The operator that makes or first reads it: its chunk (an optimizer state's is its update's parameter's).
    const OperatorId at = t.producer != kNone ? t.producer : (t.consumers.empty() ? kNone : t.consumers.front());
    if (at == kNone) continue;
    const auto c = static_cast<std::size_t>(chunk_of_op(at));
    const auto blk = static_cast<std::size_t>(in.block_of_op[static_cast<std::size_t>(at)]);
    switch (t.role) {
      case TensorRole::weight:
        if (t.producer == kNone) {  // not the updated copies
          weights[c] += t.bytes();
          casts[c] += narrow_copy_bytes(g, t);
        }
        break;
      case TensorRole::weight_gradient:
        if (t.gradient_of != kNone) grads[c] += t.bytes(), block_grads[blk] += static_cast<double>(t.bytes());
        break;
      case TensorRole::optimizer_state:
      case TensorRole::master_weight: if (t.in_place_of == kNone) states[c] += t.bytes(); break;
      default: break;
    }
  }
  // The last chunk's copy of the tied parameters: the same parameters, gradients and optimizer states as the first
  // chunk's (ZeRO shards them alike, below); its gradient is reduced with the last stage's others, in the block of
  // the operator that reads it there (ZeRO 2's reduce-scatters go by block).
  if (!tied.empty()) {
    const auto last = static_cast<std::size_t>(chunks - 1);
    weights[last] += tied.weight_bytes, grads[last] += tied.gradient_bytes, states[last] += tied.state_bytes;
    if (!block_grads.empty()) {
      const int blk = in.block_of_op[static_cast<std::size_t>(tied.last_chunk_readers.front())];
      block_grads[static_cast<std::size_t>(blk)] += static_cast<double>(tied.gradient_bytes);
    }
    opt_energy += tied_opt_energy;
  }
  // ZeRO 2 reduce-scatters each micro-batch's gradients in its backward pass (they accumulate sharded), block by
  // block as the pass finishes each; ZeRO 3 also gathers, before each block of a pass, the parameters its operators
  // read there (DeepSpeed's stage 3: a tied embedding again for the output layer; no weights for an embedding's
  // backward). With zero_overlap_comm (DeepSpeed's overlap_comm) a gather is issued as the block gathered before it
  // starts (prefetched one block ahead) and a reduce-scatter is awaited when the pass ends; otherwise each is
  // awaited where it is issued.
  double zero_energy = 0;
  std::vector<std::int64_t> gathered(static_cast<std::size_t>(chunks), 0);  // ZeRO 3: whole parameters held at once
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
  // Per chunk: the weight gradients in the order its backward pass produces them, with when (seconds into the
  // pass) and their size: the buckets of an overlapped data-parallel reduction.
  struct Ready {
    double at_s;
    double bytes;
    std::int64_t elements;
  };
  std::vector<std::vector<Ready>> produced(static_cast<std::size_t>(chunks));
  // Per chunk: when its backward pass's collectives hold which links (seconds into the pass): the buckets of an
  // overlapped reduction that share those links wait for them.
  struct Held {
    double start_s, end_s;
    unsigned tiers;
  };
  std::vector<std::vector<Held>> held(static_cast<std::size_t>(chunks));
  for (std::size_t pi = 0; pi < passes.size(); ++pi) {
    const PassRun run = run_pass(passes[pi]);
    const std::size_t c = pi / 2;
    (pi % 2 == 0 ? pt.forward : pt.backward)[c] = run.seconds;
    comm[c] += run.exposed_s[0];
    context_comm[c] += run.exposed_s[1];
    zero_comm[c] += run.exposed_s[2];
    comm_hidden[c] += std::max(0.0, run.link_s[0] - run.exposed_s[0]);
    context_hidden[c] += std::max(0.0, run.link_s[1] - run.exposed_s[1]);
    zero_hidden[c] += std::max(0.0, run.link_s[2] - run.exposed_s[2]);
    sharded_comm[c] += run.exposed_s[3];
    sharded_hidden[c] += std::max(0.0, run.link_s[3] - run.exposed_s[3]);
    if (pi % 2 == 0 || !in.overlap_grad_reduce) continue;  // only the overlapped reduction's buckets need them
    for (std::size_t k = 0; k < passes[pi].collectives.size(); ++k) {
      held[c].push_back({run.collective_start_s[k], run.collective_end_s[k], passes[pi].collectives[k].tiers});
    }
    for (std::size_t i = 0; i < pass_ops[pi].size(); ++i) {
      for (const Operand& o : g.op(pass_ops[pi][i]).operands) {
        const Tensor& x = g.tensor(o.tensor);
        if (o.is_output() && x.role == TensorRole::weight_gradient && x.gradient_of != kNone) {
          produced[c].push_back({run.operator_end_s[i], static_cast<double>(x.bytes()), x.elements()});
        } else if (o.is_output() && tied_piece[static_cast<std::size_t>(x.id)]) {
          // The copy's gradient, ready when the last chunk's reader has its share (the output layer's dW).
          const auto pieces = static_cast<double>(tied.last_chunk_gradients.size());
          produced[c].push_back({run.operator_end_s[i], static_cast<double>(tied.gradient_bytes) / pieces,
                                 static_cast<std::int64_t>(static_cast<double>(tied.gradient_elements) / pieces)});
        }
      }
    }
  }
  // Saved activations per chunk, and the bytes crossing each chunk boundary (what a stage sends its neighbour).
  for (const SavedStorage& s : saved_tensors(g)) {
    const std::size_t c = s.producer == kNone ? 0 : static_cast<std::size_t>(chunk_of_op(s.producer));
    pt.saved_bytes[c] += static_cast<double>(s.bytes);
  }
  CommCost send;  // one micro-batch's send between consecutive chunks (time and energy)
  if (chunks > 1) {
    std::vector<double> crossing(static_cast<std::size_t>(chunks), 0);
    for (const Tensor& t : g.tensors()) {
      if (t.producer == kNone || g.op(t.producer).phase != Phase::forward || t.is_parameter()) continue;
      const std::int64_t from = chunk_of_op(t.producer);
      std::int64_t to = from;
      for (OperatorId c : t.consumers) {
        if (g.op(c).phase == Phase::forward) to = std::max(to, chunk_of_op(c));
      }
      for (std::int64_t k = from + 1; k <= to; ++k) crossing[static_cast<std::size_t>(k)] += static_cast<double>(t.bytes());
    }
    send = pipeline_send(sys, L, *std::max_element(crossing.begin(), crossing.end()), neighbours);
    pt.send_s = send.seconds;
    pt.blocking_sends = !in.overlap_p2p_comm;
    pt.record_sends = in.overlap_grad_reduce;  // the overlapped buckets wait for them
  }
  r.pipeline_send_s = pt.send_s;
  const PipelineRun run = simulate_pipeline(pt);

  const auto d = static_cast<double>(D);  // the replicas of each parameter
  const auto shards = static_cast<double>(S), instances = static_cast<double>(I);  // ZeRO's shards, their copies
  std::vector<double> stage_opt(static_cast<std::size_t>(p), 0), stage_dp_end(stage_opt), stage_reduced(stage_opt),
      stage_hidden(stage_opt), stage_gather(stage_opt);
  double dp_energy = 0;
  std::vector<std::int64_t> stage_weights(static_cast<std::size_t>(p), 0), stage_grads(stage_weights),
      stage_states(stage_weights), stage_casts(stage_weights);
  for (std::int64_t s = 0; s < p; ++s) {
    const auto si = static_cast<std::size_t>(s);
    for (std::int64_t c = 0; c < v; ++c) {
      const auto j = static_cast<std::size_t>(c * p + s);
      stage_opt[si] += optimizer[j];
      stage_weights[si] += weights[j], stage_grads[si] += grads[j], stage_states[si] += states[j];
      stage_casts[si] += casts[j];
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
    const CollectiveKind reduce = L.zero_stage == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
    auto across_instances = [&](double bytes) {
      return I > 1 ? group_collective(sys, CollectiveKind::all_reduce, bytes / shards, I, L.tensor * S) : CommCost{};
    };
    CommCost dp;
    if (L.zero_stage <= 1) dp = group_collective(sys, reduce, grad_bytes, S, L.tensor);
    const CommCost across = across_instances(grad_bytes);
    double end = run.last_backward_end_s[si] + dp.seconds + across.seconds;
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
    const double bytes = static_cast<double>(tied.gradient_bytes) / (L.zero_stage >= 2 ? shards : 1);
    const CommCost ar = group_collective(sys, CollectiveKind::all_reduce, bytes, 2, neighbours * (p - 1));
    const auto first = std::size_t{0}, last = static_cast<std::size_t>(p - 1);
    const double end = std::max(stage_reduced[first], stage_reduced[last]) + ar.seconds;
    stage_dp_end[first] = end + stage_gather[first];
    stage_dp_end[last] = end + stage_gather[last];
    r.tied_comm_s = ar.seconds;
    dp_energy += ar.energy_j * static_cast<double>(L.tensor) * d;
  }
  // The step: the pipeline, then the stages' gradient reductions, then the optimizer (the gradient norm's
  // all-reduce over every stage synchronises them: the slowest stage's reduction and optimizer end the step).
  std::size_t busiest = 0;
  for (std::size_t s = 0; s < static_cast<std::size_t>(p); ++s) {
    if (run.busy_s[s] > run.busy_s[busiest]) busiest = s;
  }
  const auto last_reduced = std::max_element(stage_dp_end.begin(), stage_dp_end.end());
  const double reduced = *last_reduced;
  // The overlapped reduction's hidden time, of the stage whose reduction ends the step.
  r.data_comm_hidden_s = stage_hidden[static_cast<std::size_t>(last_reduced - stage_dp_end.begin())];
  r.data_comm_s = std::max(0.0, reduced - run.makespan_s);  // exposed; plus ZeRO's in-pass collectives, below
  r.optimizer_s = *std::max_element(stage_opt.begin(), stage_opt.end());
  r.step_time_s = run.makespan_s + r.data_comm_s + r.optimizer_s;
  r.pipeline_comm_s = run.send_blocked_s[busiest];
  r.bubble_s = run.makespan_s - run.busy_s[busiest] - r.pipeline_comm_s;
  double in_pass_dp = 0;
  for (std::int64_t c = 0; c < v; ++c) {
    const auto j = static_cast<std::size_t>(c * p + static_cast<std::int64_t>(busiest));
    r.tensor_comm_s += comm[j] * static_cast<double>(m);
    r.context_comm_s += context_comm[j] * static_cast<double>(m);
    r.sharded_comm_s += sharded_comm[j] * static_cast<double>(m);
    r.sharded_comm_hidden_s += sharded_hidden[j] * static_cast<double>(m);
    r.tensor_comm_hidden_s += comm_hidden[j] * static_cast<double>(m);
    r.context_comm_hidden_s += context_hidden[j] * static_cast<double>(m);
    r.recompute_s += recompute[j] * static_cast<double>(m);
    in_pass_dp += zero_comm[j] * static_cast<double>(m);
    r.data_comm_hidden_s += zero_hidden[j] * static_cast<double>(m);
  }
  r.data_comm_s += in_pass_dp;
  r.compute_s = run.busy_s[busiest] - r.tensor_comm_s - r.context_comm_s - r.sharded_comm_s - in_pass_dp;

  // Throughput over every chip.
  const double replicas = static_cast<double>(L.tensor) * d * static_cast<double>(m);
  r.hardware_flops = 2.0 * static_cast<double>(step_macs) * replicas;
  r.model_flops = 2.0 * static_cast<double>(step_macs - recompute_macs) * replicas;
  double pes = 0;
  for (const CoreInstance& c : in.chip.cores) pes += static_cast<double>(c.core->array.pe_count());
  r.peak_tflops_per_chip = 2 * pes * hz / 1e12;
  const double chip_seconds = r.step_time_s * static_cast<double>(r.chips);
  r.model_tflops_per_chip = r.model_flops / chip_seconds / 1e12;
  r.hardware_tflops_per_chip = r.hardware_flops / chip_seconds / 1e12;
  r.mfu = r.model_tflops_per_chip / r.peak_tflops_per_chip;
  r.hfu = r.hardware_tflops_per_chip / r.peak_tflops_per_chip;

  // Energy: every tensor-parallel rank of every replica (d·cp of them: data and context ranks) runs the whole depth
  // once per micro-batch (split over stages); the optimizer once per replica, or once per tensor-parallel rank with
  // ZeRO (once per instance). Per stage there are D tensor-parallel groups, t·d context-parallel groups and t
  // data-parallel groups (reductions, and the collectives of parameters sharded over them; t·I ZeRO shard groups).
  const auto t = static_cast<double>(L.tensor), cp = static_cast<double>(L.context);
  r.compute_energy_j = t * (d * static_cast<double>(m) * fb_energy + (L.zero_stage >= 1 ? instances : d) * opt_energy);
  r.communication_energy_j = (tp_energy * d + cp_energy * t * d / cp + (zero_energy * instances + sharded_energy) * t) * static_cast<double>(m) +
                             dp_energy + send.energy_j * 2 * static_cast<double>((chunks - 1) * m) * t * d;
  // Every chip draws its idle power for the whole step: while it computes, waits in the bubble or for a collective.
  r.idle_energy_j = in.chip.idle_power_w * r.step_time_s * static_cast<double>(r.chips);
  r.energy_j = r.compute_energy_j + r.communication_energy_j + r.idle_energy_j;

  // Memory of the most loaded chip.
  r.memory_capacity_bytes = in.chip.offchip.size_bits / 8;
  r.stage_memory.resize(static_cast<std::size_t>(p));
  for (std::int64_t s = 0; s < p; ++s) {
    const auto si = static_cast<std::size_t>(s);
    auto shard = [&](std::int64_t bytes, int from_stage) {
      return L.zero_stage >= from_stage ? static_cast<std::int64_t>(static_cast<double>(bytes) / shards) : bytes;
    };
    // The weights' low-precision copies are memory only: cast on each rank, never communicated.
    const auto w = shard(stage_weights[si], 3) + shard(stage_casts[si], 3), gr = shard(stage_grads[si], 2),
               st = shard(stage_states[si], 1);
    const auto act = static_cast<std::int64_t>(run.peak_saved_bytes[si]);
    std::int64_t whole = 0;  // ZeRO 3: the gathered parameters of the running (and prefetched) block
    for (std::int64_t c = 0; c < v; ++c) whole = std::max(whole, gathered[static_cast<std::size_t>(c * p + s)]);
    r.stage_memory[si] = {w, gr, st, act, whole};
    if (s == p - 1 && !tied.empty()) {
      r.tied_copy = {shard(tied.weight_bytes, 3), shard(tied.gradient_bytes, 2), shard(tied.state_bytes, 1), 0, 0};
    }
    if (w + gr + st + act + whole > r.memory_bytes) {
      r.memory_bytes = w + gr + st + act + whole;
      r.weight_bytes = w, r.gradient_bytes = gr, r.optimizer_bytes = st, r.activation_bytes = act;
      r.gathered_weight_bytes = whole;
      r.memory_stage = static_cast<int>(s);
    }
  }
  return r;
}

void finish_system_step(const SystemStep& step, const Graph& graph, const CNGraph& cns, const Accelerator& chip,
                        const ScheduleResult& schedule, ScheduleSummary& summary) {
  ParallelStepInputs in{graph, cns, schedule, chip, step.system, step.layout, step.global_batch, step.plan,
                        step.chunk_of_op, step.block_of_op, step.overlap_grad_reduce, step.zero_overlap_comm,
                        step.overlap_p2p_comm, step.optimizer_instances};
  auto r = std::make_shared<ParallelStep>(parallel_step(in));
  ScheduleSummary& s = summary;
  // The rank graph holds every layer; no chip holds them all, so its off-chip peak is no capacity test.
  if (s.peak_offchip_bits > chip.offchip.size_bits) {
    s.capacity_violation -= static_cast<double>(s.peak_offchip_bits - chip.offchip.size_bits) /
                            static_cast<double>(std::max<std::int64_t>(chip.offchip.size_bits, 1));
    s.capacity_violation = std::max(0.0, s.capacity_violation);
    const std::string tag = "off-chip memory '" + chip.offchip.name + "'";
    std::string kept;
    std::size_t from = 0;
    while (from <= s.capacity_reason.size()) {
      std::size_t to = s.capacity_reason.find("; ", from);
      if (to == std::string::npos) to = s.capacity_reason.size();
      const std::string part = s.capacity_reason.substr(from, to - from);
      if (!part.empty() && part.rfind(tag, 0) != 0) kept += (kept.empty() ? "" : "; ") + part;
      from = to + 2;
    }
    s.capacity_reason = kept;
    s.offchip_over_capacity = false;
  }
  if (r->memory_bytes > r->memory_capacity_bytes) {
    s.capacity_violation += static_cast<double>(r->memory_bytes - r->memory_capacity_bytes) /
                            static_cast<double>(std::max<std::int64_t>(r->memory_capacity_bytes, 1));
    if (!s.capacity_reason.empty()) s.capacity_reason += "; ";
    s.capacity_reason += "a chip of pipeline stage " + std::to_string(r->memory_stage) + " holds " +
                         std::to_string(r->memory_bytes) + " B (weights " + std::to_string(r->weight_bytes) +
                         ", gradients " + std::to_string(r->gradient_bytes) + ", optimizer states " +
                         std::to_string(r->optimizer_bytes) + ", activations " + std::to_string(r->activation_bytes) +
                         ") but its off-chip memory '" + chip.offchip.name + "' has " +
                         std::to_string(r->memory_capacity_bytes) + " B";
    s.offchip_over_capacity = true;
  }
  s.parallel = std::move(r);
}

}  // namespace monet
