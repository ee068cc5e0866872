#pragma once
// The module structure of a network, recovered from its operators: PyTorch's ONNX export names nodes by module
// path ("/layer1/layer1.0/conv1/Conv", "/h.3/attn/MatMul"), and TOML workloads name a layer's module explicitly
// (`module = "block1.conv"`). Checkpointing regions follow this tree, as torch.utils.checkpoint follows modules.
#include <string>
#include <string_view>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet {

/// The qualified module names an operator is nested in, outermost first: "/layer1/layer1.0/conv1/Conv" gives
/// {"layer1", "layer1.0", "layer1.0.conv1"} (a component already prefixed by its parent's name, as PyTorch
/// writes Sequential children, is kept; others are joined with "."). An operator's `module` field wins over its
/// name; a name without "/" has no module. A micro-batch suffix ("@2") is ignored.
/// Modules called several times are one module here (their later calls' children are named after the first
/// call's: "/layer/q_1/MatMul" gives {"layer", "layer.q_1"}); module_tree() resolves the calls
/// (module_call_paths(), module_calls.hpp).
MONET_API std::vector<std::string> module_path(const Operator& op);

/// The scope components of a PyTorch node name as the exporter wrote them, outermost first:
/// "/layer1/layer1.0/conv1/Conv" gives {"layer1", "layer1.0", "conv1"}; empty for an operator with an explicit
/// `module` or a name without "/". A micro-batch suffix ("@2") is ignored.
MONET_API std::vector<std::string> scope_names(const Operator& op);

/// The qualified name of scope component `component` inside the module `parent` (qualified; "" for the root),
/// whose own scope name qualified as written is `parent_as_written`: PyTorch writes Sequential children already
/// qualified ("layer1.0" inside "layer1"), and such a prefix is replaced by `parent`; others are joined with ".".
MONET_API std::string qualify_module(const std::string& parent, const std::string& parent_as_written,
                                     const std::string& component);

/// "@2" for the second micro-batch's copy of an operator, "" for the first.
MONET_API std::string micro_batch_suffix(const Operator& op);

/// One step of a module's forward in execution order: a child module, or an operator called directly in the
/// module's forward (a functional call such as torch.flatten or a residual add).
struct ModuleItem {
  int module = -1;          // child module index, or -1
  OperatorId op = kNone;    // a direct operator, when module < 0
};

struct Module {
  std::string name;                   // qualified name ("layer1.0"); "" for the root
  int parent = -1;
  std::vector<ModuleItem> items;      // children and direct operators, in order of their first operator
  std::vector<OperatorId> operators;  // forward operators inside it (descendants included), in graph order
};

/// The module tree of the forward operators of one micro-batch of a graph (suffix "" = the first).
struct ModuleTree {
  std::vector<Module> modules;  // [0] is the root (the whole network)
  [[nodiscard]] const Module& root() const { return modules.front(); }
  /// The index of a module by qualified name; -1 when absent.
  [[nodiscard]] MONET_API int find(std::string_view name) const;
  /// The operators of an item.
  [[nodiscard]] MONET_API std::vector<OperatorId> operators_of(const ModuleItem& item) const;
  /// Text of an item for reports: the module's name, or the operator's.
  [[nodiscard]] MONET_API std::string label(const Graph& graph, const ModuleItem& item) const;
  /// The chain of blocks: the root's items with every pure container (a module without direct operators and
  /// with more than one item, e.g. a Sequential "layer1") replaced by its items, recursively.
  [[nodiscard]] MONET_API std::vector<ModuleItem> blocks() const;
};

MONET_API ModuleTree module_tree(const Graph& graph, std::string_view micro_batch = "");

/// A module-name pattern: `*` matches any run of characters except ".", `?` one character except ".";
/// so "layer*" matches layer1 but not layer1.0, and "h.*" matches h.3 but not h.3.attn.
MONET_API bool module_glob_match(std::string_view pattern, std::string_view name);

}  // namespace monet
