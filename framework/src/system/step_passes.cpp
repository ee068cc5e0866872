// The passes and the pipeline of a step on a system: the rank's operators timed from the chip's schedule and
// grouped into each chunk's forward and backward pass, the parameters per chunk, the passes run, then the pipeline.
#include <algorithm>

#include "monet/training/memory.hpp"
#include "parallel_step_model.hpp"

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

namespace detail {

// The passes: 2·c for chunk c's forward pass, 2·c + 1 for its backward pass (recomputation included); each one's
// operators in the order the chip's schedule started them (an operator it did not schedule keeps its place).
std::size_t ParallelStepModel::pass_of(const Operator& op) const {
  const bool backward = op.phase == Phase::backward_dx || op.phase == Phase::backward_dw || op.phase == Phase::recompute;
  return static_cast<std::size_t>(2 * chunk_of_op(op.id) + (backward ? 1 : 0));
}

void ParallelStepModel::time_operators() {
  // Time and energy of every operator on the chip, scaled so that they add up to the step's latency and energy
  // (a multi-core chip overlaps operators; transfers wait between them), and when the chip's schedule started it.
  hz = in.chip.frequency_hz;
  busy.assign(g.operators().size(), 0), energy = busy;
  first_start.assign(g.operators().size(), -1);
  double busy_sum = 0, energy_sum = 0;
  for (const ScheduledNode& n : in.schedule.nodes) {
    const auto op = static_cast<std::size_t>(in.cns.nodes[static_cast<std::size_t>(n.cn)].op);
    busy[op] += static_cast<double>(n.end - n.start);
    energy[op] += n.cost.energy_pj;
    busy_sum += static_cast<double>(n.end - n.start);
    energy_sum += n.cost.energy_pj;
    if (first_start[op] < 0 || n.start < first_start[op]) first_start[op] = n.start;
  }
  time_scale = busy_sum > 0 ? static_cast<double>(in.schedule.summary.latency_cycles) / busy_sum / hz : 0;
  // The work's energy only: the chip's idle power is charged over the system's step below, not one pass's schedule.
  energy_scale = energy_sum > 0 ? in.schedule.summary.energy.dynamic() * 1e-12 / energy_sum : 0;
}

void ParallelStepModel::gather_passes() {
  pt.stages = p;
  pt.chunks = v;
  pt.micro_batches = m;
  pt.forward.assign(static_cast<std::size_t>(chunks), 0);
  pt.backward = pt.forward;
  pt.saved_bytes = pt.forward;
  comm.assign(static_cast<std::size_t>(chunks), 0);
  recompute = optimizer = context_comm = comm_hidden = context_hidden = zero_comm = zero_hidden = sharded_comm =
      sharded_hidden = comm;
  pass_ops.assign(static_cast<std::size_t>(2 * chunks), {});
  std::int64_t previous_start = 0;
  recompute_copies.assign(g.operators().size(), {});
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
  index_in_pass.assign(g.operators().size(), 0);
  last_backward.assign(g.operators().size(), kNone);
  passes.assign(pass_ops.size(), {});
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
}

void ParallelStepModel::count_parameters() {
  // Parameters, gradients and optimizer states per chunk (ZeRO shards them over the data-parallel group), and the
  // gradients per block (ZeRO 2-3 reduce them block by block).
  weights.assign(static_cast<std::size_t>(chunks), 0);
  grads = states = casts = fp32_grads = weights;
  const bool deepspeed = in.stack == ParallelStack::deepspeed;
  block_count = in.block_of_op.empty() ? 0 : static_cast<std::size_t>(*std::max_element(in.block_of_op.begin(), in.block_of_op.end())) + 1;
  block_grads.assign(block_count, 0);
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
        if (deepspeed && t.gradient_of != kNone && bits_of(t.dtype) < 32) {
          fp32_grads[c] += t.elements() * 4;
          bf16_optimizer = bf16_optimizer || t.dtype == ElementType::bf16;
        }
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
    if (fp32_grads[0] > 0) fp32_grads[last] += tied.gradient_elements * 4;
    if (!block_grads.empty()) {
      const int blk = in.block_of_op[static_cast<std::size_t>(tied.last_chunk_readers.front())];
      block_grads[static_cast<std::size_t>(blk)] += static_cast<double>(tied.gradient_bytes);
    }
    opt_energy += tied_opt_energy;
  }
}

void ParallelStepModel::run_passes() {
  produced.assign(static_cast<std::size_t>(chunks), {});
  held.assign(static_cast<std::size_t>(chunks), {});
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
}

void ParallelStepModel::run_pipeline() {
  // Saved activations per chunk, and the bytes crossing each chunk boundary (what a stage sends its neighbour).
  for (const SavedStorage& s : saved_tensors(g)) {
    const std::size_t c = s.producer == kNone ? 0 : static_cast<std::size_t>(chunk_of_op(s.producer));
    pt.saved_bytes[c] += static_cast<double>(s.bytes);
  }
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
    pt.stack = in.stack;
    pt.record_sends = in.overlap_grad_reduce;  // the overlapped buckets wait for them
  }
  r.pipeline_send_s = pt.send_s;
  run = simulate_pipeline(pt);
}

}  // namespace detail
}  // namespace monet
