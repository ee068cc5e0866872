// Layer fusion: stacks of consecutive operators run tile by tile, depth first, so that the intermediate
// tiles of a stack stay on chip (Stream's layer-fused scheduling). Operators outside the stacks run whole.
#include <algorithm>
#include <map>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/fusion_strategy.hpp"
#include "monet/schedule/tiling.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

class FusedStacks final : public FusionStrategy {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::fusion;
    i.name = "fused_stacks";
    i.version = "1.1.0";
    i.summary = "Stacks of consecutive operators executed tile by tile, depth first (layer fusion)";
    i.description =
        "`stacks` lists stacks as \"FIRST..LAST\" (operator names, inclusive, in graph order; a single name is a "
        "one-operator stack); with none and `auto_stacks` (both together are an error), consecutive operators are grouped while their weights "
        "fit in the on-chip memory of all cores together (an operator whose weights per inter-core group fit no "
        "single core stays out). Inside a stack every operator is cut by the `intra` "
        "rules (KEY=DIM:N with KEY an operator name, type, kind or 'default'; DIM a loop dimension or axisN, the "
        "loop dim indexing output axis N; N a count or 'all') and the stack runs slot by slot: slot s holds the "
        "s-th share of every operator's tiles, so a few output rows of each layer are produced before the next "
        "rows of the first layer. `inter` splits operators over cores (group g runs on the g-th allowed core "
        "when there are exactly that many; a split along a reduction dimension is an error). Operators outside "
        "any stack run whole (split by `inter` only); with "
        "`stream_singletons` their operands stream from/to off-chip memory (Stream's choice). In a training "
        "graph the backward operators of a stack's forward operators form a stack of their own "
        "(`backward_stacks`). `stack_tiles` gives each listed stack its own tile count: every operator of the "
        "stack (and of its backward stack) is cut into N parts along each dimension its `intra` rule names (0: the "
        "rule's own counts). Tiles never cut a reduction dimension.";
    i.params = {
        ParamSpec::string_list("stacks", std::vector<std::string>{})
            .with_doc("stacks as \"FIRST..LAST\" operator-name ranges"),
        ParamSpec::boolean("auto_stacks", false).with_doc("form stacks from on-chip capacity when `stacks` is empty"),
        ParamSpec::string_list("intra", std::vector<std::string>{"conv=OY:all", "pooling=OY:all", "elementwise=OY:all,D:all",
                                                                 "norm=OY:all,D:all", "softmax=OY:all,D:all", "gemm=D:all",
                                                                 "matmul=D:all"})
            .with_doc("how operators inside a stack are tiled (default: output rows OY of convolutions, pooling and "
                      "4-D elementwise, normalisation and softmax operators; tokens D of matrix products and of 3-D "
                      "[B, D, K] tensors; a split along a dimension an operator lacks is ignored)"),
        ParamSpec::string_list("inter", std::vector<std::string>{}).with_doc("inter-core splits, e.g. [\"conv=K:4\"]"),
        ParamSpec::boolean("stream_singletons", false)
            .with_doc("operands of operators outside the stacks stream from/to off-chip memory while they run"),
        ParamSpec::boolean("backward_stacks", true)
            .with_doc("training graphs: the backward operators of each stack form a stack too"),
        ParamSpec::integer_list("stack_tiles", std::vector<std::int64_t>{})
            .with_doc("per listed stack (same order as `stacks`, or empty): the parts each of its operators is cut "
                      "into along its intra rule's dimensions, 0 = the intra rule's counts"),
    };
    return i;
  }

  explicit FusedStacks(const ParamValues& p)
      : stack_specs_(p.get_strings("stacks")),
        auto_(p.get_bool("auto_stacks")),
        intra_(parse_tiling_rules(p, "intra")),
        inter_(parse_tiling_rules(p, "inter")),
        stream_singletons_(p.get_bool("stream_singletons")),
        backward_stacks_(p.get_bool("backward_stacks")),
        stack_tiles_(p.get_ints("stack_tiles")),
        where_(p.where("stacks")) {
    if (!stack_tiles_.empty() && stack_tiles_.size() != stack_specs_.size()) {
      p.fail("stack_tiles", "expected one tile count per stack of `stacks` (" + std::to_string(stack_specs_.size()) +
                                "), got " + std::to_string(stack_tiles_.size()));
    }
    for (std::int64_t t : stack_tiles_) {
      // A bound, not a cap: a stack of millions of slots would be millions of CNs per operator.
      if (t < 0 || t > kMaxStackTiles) {
        p.fail("stack_tiles", "expected tile counts from 0 (the intra rules' own) to " + std::to_string(kMaxStackTiles) +
                                  ", got " + std::to_string(t));
      }
    }
    if (auto_ && !stack_specs_.empty()) {
      p.fail("auto_stacks", "auto_stacks = true forms stacks only when `stacks` is empty, and `stacks` lists " +
                                std::to_string(stack_specs_.size()) +
                                " stack(s): set one of the two (auto_stacks = false keeps the listed stacks)");
    }
  }

  [[nodiscard]] std::vector<ComputationNode> partition(const Graph& graph, const Accelerator& acc,
                                                       const std::vector<std::vector<int>>& allowed) const override {
    const std::size_t n = graph.operators().size();
    std::vector<int> stack_of(n, -1);
    std::vector<std::vector<OperatorId>> stacks;
    std::vector<std::int64_t> tiles_of;  // per stack: stack_tiles' count, 0 = the intra rules'
    form_stacks(graph, acc, allowed, stack_of, stacks, tiles_of);

    // Units of execution in priority order: a stack (at its first operator) or a single operator.
    std::vector<bool> emitted(stacks.size(), false);
    std::vector<ComputationNode> out;
    int next_stack_id = 0;
    for (const Operator& op : graph.operators()) {
      const int s = stack_of[static_cast<std::size_t>(op.id)];
      if (s < 0) {
        auto tiles = tile_operator(graph, op, inter_splits(graph, op, inter_, allowed[static_cast<std::size_t>(op.id)].size()), {});
        for (ComputationNode& cn : tiles) {
          cn.stack = next_stack_id;
          cn.streamed = stream_singletons_ && !op.is_view();
          out.push_back(std::move(cn));
        }
        ++next_stack_id;
        continue;
      }
      if (emitted[static_cast<std::size_t>(s)]) continue;
      emitted[static_cast<std::size_t>(s)] = true;
      emit_stack(graph, allowed, stacks[static_cast<std::size_t>(s)], tiles_of[static_cast<std::size_t>(s)],
                 next_stack_id++, out);
    }
    return out;
  }

 private:
  /// Depth-first order of one stack: slot by slot, each operator's share of tiles (with all its groups).
  /// `parts` > 0 replaces the count of every split of the operators' intra rules.
  void emit_stack(const Graph& graph, const std::vector<std::vector<int>>& allowed, const std::vector<OperatorId>& ops,
                  std::int64_t parts, int stack_id, std::vector<ComputationNode>& out) const {
    std::vector<std::vector<ComputationNode>> tiles;
    std::size_t slots = 0;
    for (OperatorId id : ops) {
      const Operator& op = graph.op(id);
      const TilingRule* in = op.is_view() ? nullptr : tiling_rule_for(intra_, op);
      std::vector<TileSplit> splits = in ? in->splits : std::vector<TileSplit>{};
      if (parts > 0) {
        for (TileSplit& t : splits) t.parts = parts;
      }
      tiles.push_back(tile_operator(graph, op, inter_splits(graph, op, inter_, allowed[static_cast<std::size_t>(op.id)].size()), splits));
      if (op.is_view()) continue;  // a view moves nothing: its readers read through it, tile by tile
      const std::size_t intra = tiles.back().size() / static_cast<std::size_t>(std::max(1, tiles.back().front().groups));
      slots = slots == 0 ? intra : std::min(slots, intra);
    }
    slots = std::max<std::size_t>(slots, 1);
    for (std::size_t s = 0; s < slots; ++s) {
      for (std::size_t k = 0; k < tiles.size(); ++k) {
        auto& t = tiles[k];
        const auto groups = static_cast<std::size_t>(std::max(1, t.front().groups));
        const std::size_t intra = t.size() / groups;
        const bool view = graph.op(ops[k]).is_view();  // whole: listed with the last slot
        if (view && s + 1 != slots) continue;
        const std::size_t from = view ? 0 : intra * s / slots;
        const std::size_t to = view ? intra : intra * (s + 1) / slots;
        for (std::size_t k = from * groups; k < to * groups; ++k) {
          ComputationNode cn = t[k];
          cn.stack = stack_id;
          out.push_back(std::move(cn));
        }
      }
    }
  }

  void form_stacks(const Graph& graph, const Accelerator& acc, const std::vector<std::vector<int>>& allowed, std::vector<int>& stack_of,
                   std::vector<std::vector<OperatorId>>& stacks, std::vector<std::int64_t>& tiles_of) const {
    auto add = [&](std::vector<OperatorId> ops, std::int64_t tiles) {
      if (ops.empty()) return;
      const int id = static_cast<int>(stacks.size());
      for (OperatorId o : ops) stack_of[static_cast<std::size_t>(o)] = id;
      stacks.push_back(std::move(ops));
      tiles_of.push_back(tiles);
    };
    auto index_of = [&](const std::string& name) {
      const Operator* op = graph.find_operator(name);
      if (!op) {
        std::vector<std::string> names;
        for (const Operator& o : graph.operators()) names.push_back(o.name);
        throw UserError(where_, "fusion.stacks: the workload has no operator '" + name + "'" + did_you_mean(name, names));
      }
      return op->id;
    };
    std::vector<std::vector<OperatorId>> forward;
    std::vector<std::int64_t> forward_tiles;
    for (const std::string& spec : stack_specs_) {
      const auto dots = spec.find("..");
      const OperatorId first = index_of(trim(dots == std::string::npos ? spec : spec.substr(0, dots)));
      const OperatorId last = dots == std::string::npos ? first : index_of(trim(spec.substr(dots + 2)));
      if (last < first) throw UserError(where_, "fusion.stacks: '" + spec + "' ends before it starts (graph order)");
      std::vector<OperatorId> ops;
      for (OperatorId o = first; o <= last; ++o) {
        if (graph.op(o).phase != Phase::forward) continue;
        if (stack_of[static_cast<std::size_t>(o)] >= 0) {
          throw UserError(where_, "fusion.stacks: operator '" + graph.op(o).name + "' is in two stacks");
        }
        ops.push_back(o);
      }
      const std::int64_t tiles = stack_tiles_.empty() ? 0 : stack_tiles_[forward.size()];
      forward.push_back(ops);
      forward_tiles.push_back(tiles);
      add(ops, tiles);
    }
    if (stack_specs_.empty() && auto_) {
      // Consecutive forward operators while all their weights fit in the cores' memories for weights. An
      // operator whose share of weights (per inter-core group) fits no single core stays out of every stack:
      // tiled, each tile would stream all its weights again.
      std::int64_t capacity = 0;
      std::int64_t largest = 0;
      for (const CoreInstance& c : acc.cores) {
        // The on-chip memory that holds weights (a core whose weights live only off chip holds none).
        const int top = c.core->top_onchip_index(OperandSlot::I2);
        const std::int64_t bits = top < 0 ? 0 : c.core->memories[static_cast<std::size_t>(top)].size_bits;
        capacity += bits;
        largest = std::max(largest, bits);
      }
      std::vector<OperatorId> cur;
      std::int64_t weights = 0;
      auto close = [&] {
        if (cur.empty()) return;
        forward.push_back(cur);
        forward_tiles.push_back(0);
        add(cur, 0);
        cur.clear();
        weights = 0;
      };
      for (const Operator& op : graph.operators()) {
        if (op.phase != Phase::forward) continue;
        std::int64_t w = 0;
        for (const Operand& o : op.operands) {
          const Tensor& t = graph.tensor(o.tensor);
          if (!o.is_output() && t.is_parameter()) w += t.bits();
        }
        const auto groups = tile_operator(graph, op, inter_splits(graph, op, inter_, allowed[static_cast<std::size_t>(op.id)].size()), {}).size();
        if (w / static_cast<std::int64_t>(groups) > largest) {
          close();
          continue;
        }
        if (weights + w > capacity) close();
        cur.push_back(op.id);
        weights += w;
      }
      close();
    }
    if (backward_stacks_) {
      for (std::size_t k = 0; k < forward.size(); ++k) {
        const auto& f = forward[k];
        std::vector<OperatorId> back;
        for (const Operator& op : graph.operators()) {
          if ((op.phase != Phase::backward_dx && op.phase != Phase::backward_dw) || op.derived_from == kNone) continue;
          if (std::find(f.begin(), f.end(), op.derived_from) != f.end() && stack_of[static_cast<std::size_t>(op.id)] < 0) {
            back.push_back(op.id);
          }
        }
        if (back.size() > 1) add(back, forward_tiles[k]);
      }
    }
  }

  std::vector<std::string> stack_specs_;
  bool auto_;
  std::vector<TilingRule> intra_;
  std::vector<TilingRule> inter_;
  bool stream_singletons_;
  bool backward_stacks_;
  std::vector<std::int64_t> stack_tiles_;
  SourceLocation where_;
  static constexpr std::int64_t kMaxStackTiles = 1 << 16;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::FusedStacks)
