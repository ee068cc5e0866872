#include "monet/training/modules.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "monet/training/module_calls.hpp"

namespace monet {

std::string micro_batch_suffix(const Operator& op) {
  const auto at = op.name.rfind('@');
  if (at == std::string::npos || at + 1 == op.name.size()) return "";
  for (std::size_t i = at + 1; i < op.name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(op.name[i]))) return "";
  }
  return op.name.substr(at);
}

namespace {
std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = s.find(sep, start);
    const std::string_view part = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!part.empty()) parts.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}
}  // namespace

std::vector<std::string> scope_names(const Operator& op) {
  if (!op.module.empty()) return {};
  std::string name = op.name;
  if (name.find('/') == std::string::npos && !op.source_nodes.empty()) name = op.source_nodes.front();
  const std::string suffix = micro_batch_suffix(op);
  if (!suffix.empty() && name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  if (name.find('/') == std::string::npos) return {};
  std::vector<std::string> parts = split(name, '/');
  if (!parts.empty()) parts.pop_back();  // the node's own name ("Conv", "Relu_1")
  return parts;
}

std::string qualify_module(const std::string& parent, const std::string& parent_as_written,
                           const std::string& component) {
  if (parent.empty()) return component;
  // PyTorch writes Sequential children qualified ("/layer1/layer1.0/conv1"): keep those as they are.
  if (component.starts_with(parent_as_written + ".")) return parent + component.substr(parent_as_written.size());
  return parent + "." + component;
}

std::vector<std::string> module_path(const Operator& op) {
  std::vector<std::string> path;
  if (!op.module.empty()) {
    // Explicit (TOML workloads): every "." is a level.
    std::string q;
    for (const std::string& c : split(op.module, '.')) {
      q += (q.empty() ? "" : ".") + c;
      path.push_back(q);
    }
    return path;
  }
  for (const std::string& c : scope_names(op)) {
    const std::string parent = path.empty() ? "" : path.back();
    path.push_back(qualify_module(parent, parent, c));
  }
  return path;
}

int ModuleTree::find(std::string_view name) const {
  for (std::size_t i = 0; i < modules.size(); ++i) {
    if (modules[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<OperatorId> ModuleTree::operators_of(const ModuleItem& item) const {
  if (item.module >= 0) return modules[static_cast<std::size_t>(item.module)].operators;
  return {item.op};
}

std::string ModuleTree::label(const Graph& graph, const ModuleItem& item) const {
  return item.module >= 0 ? modules[static_cast<std::size_t>(item.module)].name : graph.op(item.op).name;
}

std::vector<ModuleItem> ModuleTree::blocks() const {
  std::vector<ModuleItem> out;
  auto expand = [&](auto&& self, const ModuleItem& item) -> void {
    if (item.module >= 0) {
      const Module& m = modules[static_cast<std::size_t>(item.module)];
      const bool container = m.items.size() > 1 && std::all_of(m.items.begin(), m.items.end(),
                                                                [](const ModuleItem& i) { return i.module >= 0; });
      if (container) {
        for (const ModuleItem& i : m.items) self(self, i);
        return;
      }
    }
    out.push_back(item);
  };
  for (const ModuleItem& i : root().items) expand(expand, i);
  return out;
}

ModuleTree module_tree(const Graph& g, std::string_view micro_batch) {
  ModuleTree tree;
  tree.modules.push_back(Module{});
  std::vector<const Operator*> ops;
  for (const Operator& op : g.operators()) {
    if (op.phase == Phase::forward && micro_batch_suffix(op) == micro_batch) ops.push_back(&op);
  }
  // One module per call of a module called several times (shared weights): module_calls.hpp.
  const std::vector<std::vector<std::string>> paths = module_call_paths(ops);
  std::map<std::string, int> index;
  for (std::size_t o = 0; o < ops.size(); ++o) {
    const Operator& op = *ops[o];
    int parent = 0;
    tree.modules[0].operators.push_back(op.id);
    for (const std::string& name : paths[o]) {
      auto it = index.find(name);
      int m = 0;
      if (it == index.end()) {
        m = static_cast<int>(tree.modules.size());
        index[name] = m;
        tree.modules.push_back(Module{name, parent, {}, {}});
        tree.modules[static_cast<std::size_t>(parent)].items.push_back(ModuleItem{m, kNone});
      } else {
        m = it->second;
      }
      tree.modules[static_cast<std::size_t>(m)].operators.push_back(op.id);
      parent = m;
    }
    tree.modules[static_cast<std::size_t>(parent)].items.push_back(ModuleItem{-1, op.id});
  }
  return tree;
}

bool module_glob_match(std::string_view p, std::string_view s) {
  if (p.empty()) return s.empty();
  if (p.front() == '*') {
    for (std::size_t i = 0;; ++i) {
      if (module_glob_match(p.substr(1), s.substr(i))) return true;
      if (i == s.size() || s[i] == '.') return false;
    }
  }
  if (s.empty()) return false;
  if (p.front() == '?' ? s.front() == '.' : p.front() != s.front()) return false;
  return module_glob_match(p.substr(1), s.substr(1));
}

}  // namespace monet
