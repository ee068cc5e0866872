#pragma once
// The calls of modules called several times (shared weights), read back from PyTorch's ONNX node names.
//
// The exporter (torch/csrc/jit/passes/onnx/naming.cpp) names each call of a module by the attribute names from the
// root, "layer/attn/q", made unique over calls in graph order by a suffix on the *last* component: the second call
// of that path is "layer/attn/q_1", the third "layer/attn/q_2". The parent's own call number never appears in a
// child's name: the child of the second call of `layer` is "/layer/q_1/MatMul", not "/layer_1/q/MatMul", while
// the layer's own operators in that call are "/layer_1/Add". So a module tree read from names alone puts every
// later call's children in the first call. This file undoes that: the calls of a path are matched to the calls of
// its parent in order, each parent call holding the same number of them (docs/training.md, "Modules called
// several times"; tests/data/module_calls holds the exports that show the rule).
#include <string>
#include <vector>

#include "monet/ir/operator.hpp"

namespace monet {

/// For each operator (in graph order, one micro-batch's forward operators), the qualified names of the module
/// calls it is nested in, outermost first, as module_path() gives them but with the calls resolved: in MONET's
/// small GPT-2, "/layer/q_1/MatMul" gives {"layer_1", "layer_1.q"} (the q of the layer's second call), where
/// module_path() gives {"layer", "layer.q_1"}. The k-th call (from 0) of a module inside the j-th call of its
/// parent is named "<parent call>.<name>_k" ("" for k = 0), so top-level calls keep the exporter's names
/// (layer, layer_1, ...). Operators with an explicit `module` (TOML workloads) keep module_path().
MONET_API std::vector<std::vector<std::string>> module_call_paths(const std::vector<const Operator*>& ops);

}  // namespace monet
