#pragma once
// Tiling rules shared by the fusion strategies: how an operator is cut into computation nodes. A rule list
// such as ["Conv=OY:all", "conv=OY:8", "default=axis2:all"] says, per operator (by name, then type, then
// kind, then "default"), along which loop dimensions to cut and into how many pieces. Intra-core tiles run
// one after the other on a core; inter-core tiles are "groups" spread over the operator's allowed cores.
#include <string>
#include <vector>

#include "monet/config/params.hpp"
#include "monet/ir/graph.hpp"
#include "monet/schedule/computation_node.hpp"

namespace monet {

struct TileSplit {
  std::string dim;   // a loop dimension name, or "axisN": the loop dim indexing axis N of the output
  std::int64_t parts = 0;  // 0 = "all": one tile per index; kCores = "cores" (inter-core splits only)
  static constexpr std::int64_t kCores = -1;  // as many parts as the operator has allowed cores
};

struct TilingRule {
  std::string key;  // operator name, type, kind or "default"
  std::vector<TileSplit> splits;
  std::string text;     // as written, for messages
  std::string param;    // "fusion.inter", ...
  SourceLocation where;  // where the rule list was given
};

/// Parses the fusion strategy's rule-list parameter `name` ("KEY=DIM:N[,DIM:N...]", N an integer >= 1, "all", or
/// for inter-core rules "cores": one part per core the operator may run on, so that a rule holds for any core
/// count, e.g. an array of cores whose size is a gene).
/// Throws UserError naming fusion.<name>, located where the experiment (or --set) gave it.
MONET_API std::vector<TilingRule> parse_tiling_rules(const ParamValues& params, const std::string& name);

/// The rule for an operator: exact name, then type, then kind, then "default"; nullptr when none applies.
MONET_API const TilingRule* tiling_rule_for(const std::vector<TilingRule>& rules, const Operator& op);

/// The inter-core splits of an operator: its rule's (none without a rule). A split along a reduction dimension
/// of the operator is a UserError located at the rule list: each core would hold partial sums of the whole
/// output, and monet does not model their accumulation across cores.
/// "cores" becomes `allowed_cores`, the number of cores the operator may run on.
MONET_API std::vector<TileSplit> inter_splits(const Graph& graph, const Operator& op, const std::vector<TilingRule>& rules,
                                              std::size_t allowed_cores);

/// The loop dimension a split names for an operator (-1 when the operator has no such dimension).
MONET_API int split_dim(const Graph& graph, const Operator& op, const TileSplit& split);

/// Cuts an operator into tiles: inter-core groups (the first splits vary fastest, as in Stream) times intra-core
/// tiles. Splits along a dimension the operator lacks, or along a reduction dimension (partial sums would need
/// an accumulation order), are ignored (inter_splits() rejects the latter for inter-core rules); a part count that does not divide the dimension gives tiles of
/// unequal size (the last ones one smaller). Tiles are returned intra-tile-major: for intra tile t, its groups
/// 0..G-1, with `group` and `groups` set.
MONET_API std::vector<ComputationNode> tile_operator(const Graph& graph, const Operator& op,
                                                     const std::vector<TileSplit>& inter,
                                                     const std::vector<TileSplit>& intra);

}  // namespace monet
