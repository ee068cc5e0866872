#pragma once
// Activation checkpointing as a transformation of the training-step graph (docs/training.md#checkpointing).
// A checkpointed region keeps only its inputs after the forward pass; its forward operators run again as real
// operators (phase `recompute`) right before the first backward operator that needs one of their results, and the
// region's backward operators read the recomputed tensors. Everything downstream (tiling, costs, schedule,
// memory) treats them like any other operator.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/util/error.hpp"

namespace monet {

/// What a checkpointed region runs again in the backward pass ([training.checkpoint] semantics,
/// docs/training.md#what-a-region-runs-again).
enum class RecomputeSemantics {
  /// The whole region, every operator of it: what torch.utils.checkpoint does (both implementations of
  /// torch 1.13 and the reentrant one of 2.x rerun the function) and Megatron's CheckpointFunction.
  pytorch,
  /// Only the operators whose results backward reads, directly or through other recomputed operators (a region's
  /// trailing operators whose outputs only feed the next region are left out).
  minimal,
};
MONET_API std::string_view to_string(RecomputeSemantics semantics);
MONET_API std::optional<RecomputeSemantics> parse_recompute_semantics(std::string_view text);

/// [training.checkpoint]: which forward operators are recomputed instead of saved.
struct CheckpointPolicy {
  enum class Kind { none, segments, modules, every_k, optimal, blocks };
  Kind kind = Kind::none;
  std::int64_t segments = 0;         // segments: torch.utils.checkpoint.checkpoint_sequential(top level, k)
  std::vector<std::string> modules;  // modules: globs of module names, each match checkpointed as checkpoint(m, x)
  std::int64_t every_k = 0;          // every_k: blocks per segment; 0 = ceil(sqrt(blocks)) (Chen et al. 2016)
  std::vector<std::string> blocks;   // blocks: names of blocks of the chain (ModuleTree::blocks()), each its own region
  std::int64_t budget = 0;           // optimal: the largest training.peak_activation_bytes allowed
  std::string cost = "macs";         // optimal: what recomputation costs, "macs", "latency" or "energy"
  RecomputeSemantics semantics = RecomputeSemantics::pytorch;
  SourceLocation where;              // for messages about a policy that does not fit the workload

  [[nodiscard]] bool active() const { return kind != Kind::none && !(kind == Kind::blocks && blocks.empty()); }
  /// As written in TOML and on the command line: "none", "segments=4", "modules=layer*,fc", "every_k=3",
  /// "every_k=sqrt", "optimal=BUDGET", "optimal=BUDGET,COST" or
  /// "blocks=NAME[,NAME...]".
  [[nodiscard]] MONET_API std::string text() const;
};

/// The [training.checkpoint] table's body for resolved.toml ("segments = 4\nsemantics = \"pytorch\"\n"; the
/// semantics with an active policy only).
MONET_API std::string checkpoint_toml(const CheckpointPolicy& policy);

/// Parses the command-line form (see text()); a UserError at `where` for anything else.
MONET_API CheckpointPolicy parse_checkpoint_policy(const std::string& text, const SourceLocation& where);

/// A set of forward operators recomputed together (one checkpoint() call of PyTorch).
struct CheckpointRegion {
  std::string name;               // the module(s) it covers ("layer1", "segment 1: conv1 .. layer2")
  std::vector<OperatorId> operators;  // forward operators, in graph order
  RecomputeSemantics semantics = RecomputeSemantics::pytorch;  // what of it runs again (the policy's)
};

/// The regions a policy selects in a training (or forward) graph, for every micro-batch. A policy that does not
/// fit the graph (more segments than top-level modules, a glob matching no module) is a UserError at policy.where.
MONET_API std::vector<CheckpointRegion> checkpoint_regions(const Graph& graph, const CheckpointPolicy& policy);

/// Whether a forward operator is recomputed in the backward pass whatever the policy: attribute
/// `recompute_in_backward` = 1 (an operator whose backward keeps its input, not its output, as Megatron's
/// sequence-parallel all-gather does).
MONET_API bool recomputed_in_backward(const Operator& op);

/// The training graph with the regions recomputed, and each operator recomputed_in_backward that no region
/// covers as a region of its own. Region operators must be forward operators. A region with semantics `pytorch`
/// runs again whole right before its first backward operator (or the first one reading its results); with
/// `minimal` only the operators whose results backward needs (directly or through other recomputed operators) run
/// again, and a region none of whose results a backward operator reads not at all. A region with no backward
/// operator is not recomputed (no gradient reaches it). Recompute operators are named "<forward name>@recompute", their tensors likewise,
/// and derive from the forward operator they repeat.
MONET_API GraphPtr apply_checkpointing(const Graph& graph, const std::vector<CheckpointRegion>& regions);

/// Both steps; the graph itself when the policy is `none` and no operator is recomputed_in_backward.
MONET_API GraphPtr apply_checkpointing(const GraphPtr& graph, const CheckpointPolicy& policy);

}  // namespace monet
