#include "monet/training/offload.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "monet/training/memory.hpp"
#include "monet/training/modules.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::string OffloadPolicy::text() const { return join(modules, ","); }

namespace {
bool backward_reader(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw || p == Phase::recompute; }
}  // namespace

std::vector<TensorId> offloaded_tensors(const Graph& g, const OffloadPolicy& p) {
  std::set<TensorId> out;
  if (!p.active()) return {};
  std::set<std::string> suffixes;
  for (const Operator& op : g.operators()) {
    if (op.phase == Phase::forward) suffixes.insert(micro_batch_suffix(op));
  }
  std::vector<bool> matched(p.modules.size(), false);
  for (const std::string& suffix : suffixes) {
    const ModuleTree tree = module_tree(g, suffix);
    for (std::size_t m = 1; m < tree.modules.size(); ++m) {
      const Module& mod = tree.modules[m];
      bool hit = false;
      for (std::size_t i = 0; i < p.modules.size(); ++i) {
        if (module_glob_match(p.modules[i], mod.name)) matched[i] = hit = true;
      }
      if (!hit) continue;
      for (OperatorId o : mod.operators) {
        const Operator& op = g.op(o);
        bool saved = false;
        for (const Operand& w : op.operands) {
          if (!w.is_output()) continue;
          const Tensor& t = g.tensor(w.tensor);
          saved = saved || std::any_of(t.consumers.begin(), t.consumers.end(),
                                       [&](OperatorId c) { return backward_reader(g.op(c).phase); });
        }
        if (!saved) continue;
        // An operator's outputs move together (a computation node's output tile holds all of them: a batch
        // norm's statistics and its normalised output), so all of them are offloaded.
        for (const Operand& w : op.operands) {
          if (w.is_output()) out.insert(w.tensor);
        }
        {
          // Recomputed too: the checkpoint policy covers the same module (its recompute copy is named after it).
          if (g.find_operator(op.name + "@recompute") != nullptr) {
            throw UserError(p.where, "module '" + mod.name + "' is both offloaded and recomputed (operator '" + op.name +
                                         "' is in a checkpoint region); a module's activations are saved, recomputed "
                                         "or offloaded, one of the three");
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < p.modules.size(); ++i) {
    if (matched[i]) continue;
    std::vector<std::string> names;
    const ModuleTree tree = module_tree(g);
    for (std::size_t m = 1; m < tree.modules.size() && names.size() < 12; ++m) {
      if (tree.modules[m].parent == 0) names.push_back(tree.modules[m].name);
    }
    throw UserError(p.where, "offload module '" + p.modules[i] + "' matches no module of " + g.name() +
                                 (names.empty() ? std::string(" (its operator names carry no module paths)")
                                                : "; top-level modules: " + join(names, ", ")));
  }
  return {out.begin(), out.end()};
}

std::int64_t offloaded_peak_activation_bytes(const Graph& g, const std::vector<TensorId>& tensors) {
  BackwardActivations a = backward_activations(g);
  if (a.start == g.operators().size()) return 0;
  // An offloaded storage is off chip from the backward pass's start to its first backward reader.
  std::map<TensorId, std::size_t> back;
  for (TensorId t : tensors) {
    std::size_t first = g.operators().size();
    for (OperatorId c : g.tensor(t).consumers) {
      if (backward_reader(g.op(c).phase)) first = std::min(first, static_cast<std::size_t>(c));
    }
    const TensorId s = storage_of(g, t);
    back[s] = back.contains(s) ? std::min(back[s], first) : first;
  }
  for (ActivationInterval& i : a.intervals) {
    const auto it = back.find(i.storage);
    if (it != back.end()) i.from = std::max(i.from, it->second);
  }
  return peak_live_bytes(a, g.operators().size());
}

std::vector<bool> offload_mask(const Graph& g, const std::vector<TensorId>& tensors) {
  if (tensors.empty()) return {};
  std::vector<bool> mask(g.tensors().size(), false);
  for (TensorId t : tensors) mask[static_cast<std::size_t>(t)] = true;
  return mask;
}

}  // namespace monet
