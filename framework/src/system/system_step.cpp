// A step on a system of chips, prepared: the rank step's module chain (its blocks and repeated layers), the layout
// checked against the system, and the chain cut into pipeline chunks.
#include "monet/system/parallel_step.hpp"

#include <algorithm>
#include <cctype>

#include "monet/training/modules.hpp"

namespace monet {
namespace {

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

}  // namespace monet
