#pragma once
// A recomputation plan in which a forward operator may run again several times (Rotor's nested recomputation,
// docs/training.md#rotors-nested-recomputation). apply_checkpointing recomputes each region once, right before its
// first backward reader; a plan instead lists recomputations in the order they run, each right before a given
// operator, and every reader takes the copy the plan made last before it.
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"
#include "monet/training/checkpoint.hpp"
#include "monet/util/error.hpp"

namespace monet {

/// Forward operators run again, as copies (phase `recompute`), right before the operator `before` of the graph
/// (the operator count: at the end). Several recomputations before one operator run in plan order.
struct Recomputation {
  std::string name;                   // for messages
  std::vector<OperatorId> operators;  // forward operators, in graph order
  OperatorId before = kNone;
  RecomputeSemantics semantics = RecomputeSemantics::pytorch;  // pytorch: the run runs whole
};

/// The graph with the plan's copies inserted. Each copy, and each backward operator, reads a result of a recomputed
/// forward operator from the latest copy of that operator placed before it (the forward result when there is
/// none), so a tensor lives from its copy to its last reader and the graph order alone gives every lifetime.
/// Under `minimal` semantics copies none of whose results a backward operator or a needed copy reads are left out
/// (as apply_checkpointing does); under `pytorch` every run runs whole, as its plan says. The k-th copy of operator "x" is "x@recompute" (k = 1) or "x@recomputeK", its tensors likewise, and it
/// derives from "x".
MONET_API GraphPtr apply_recomputations(const Graph& graph, const std::vector<Recomputation>& plan);

}  // namespace monet
