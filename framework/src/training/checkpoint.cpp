#include "monet/training/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "monet/ir/renumber.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/modules.hpp"
#include "monet/util/strings.hpp"
#include "recompute_names.hpp"

namespace monet {

std::string_view to_string(RecomputeSemantics s) { return s == RecomputeSemantics::pytorch ? "pytorch" : "minimal"; }

std::optional<RecomputeSemantics> parse_recompute_semantics(std::string_view text) {
  if (text == "pytorch") return RecomputeSemantics::pytorch;
  if (text == "minimal") return RecomputeSemantics::minimal;
  return std::nullopt;
}

std::string CheckpointPolicy::text() const {
  switch (kind) {
    case Kind::none: return "none";
    case Kind::segments: return "segments=" + std::to_string(segments);
    case Kind::modules: return "modules=" + join(modules, ",");
    case Kind::every_k: return every_k == 0 ? "every_k=sqrt" : "every_k=" + std::to_string(every_k);
    case Kind::blocks: return "blocks=" + join(blocks, ",");
    case Kind::optimal: return "optimal=" + std::to_string(budget) + (cost == "macs" ? "" : "," + cost);
  }
  return "none";
}

namespace {
std::int64_t positive_integer(const std::string& value, const std::string& key, const SourceLocation& where) {
  std::int64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || v < 1) {
    throw UserError(where, "checkpoint policy '" + key + "' needs a positive integer, not '" + value + "'");
  }
  return v;
}
}  // namespace

namespace {
std::string policy_toml(const CheckpointPolicy& p) {
  switch (p.kind) {
    case CheckpointPolicy::Kind::none: return "policy = \"none\"\n";
    case CheckpointPolicy::Kind::segments: return "segments = " + std::to_string(p.segments) + "\n";
    case CheckpointPolicy::Kind::every_k:
      return p.every_k == 0 ? std::string("every_k = \"sqrt\"\n") : "every_k = " + std::to_string(p.every_k) + "\n";
    case CheckpointPolicy::Kind::optimal:
      return "budget = " + std::to_string(p.budget) + "\ncost = \"" + p.cost + "\"\n";
    case CheckpointPolicy::Kind::modules:
    case CheckpointPolicy::Kind::blocks: {
      const bool modules = p.kind == CheckpointPolicy::Kind::modules;
      const auto& names = modules ? p.modules : p.blocks;
      std::string s = modules ? "modules = [" : "blocks = [";
      for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", \"" : "\"") + names[i] + "\"";
      return s + "]\n";
    }
  }
  return "";
}
}  // namespace

std::string checkpoint_toml(const CheckpointPolicy& p) {
  const std::string body = policy_toml(p);
  return p.active() ? body + "semantics = \"" + std::string(to_string(p.semantics)) + "\"\n" : body;
}

CheckpointPolicy parse_checkpoint_policy(const std::string& text, const SourceLocation& where) {
  CheckpointPolicy p;
  p.where = where;
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  if (key == "none" && eq == std::string::npos) return p;
  if (key == "sqrt" && eq == std::string::npos) {
    p.kind = CheckpointPolicy::Kind::every_k;
    return p;
  }
  if (key == "segments") {
    p.kind = CheckpointPolicy::Kind::segments;
    p.segments = positive_integer(value, key, where);
  } else if (key == "every_k") {
    p.kind = CheckpointPolicy::Kind::every_k;
    p.every_k = value == "sqrt" ? 0 : positive_integer(value, key, where);
  } else if (key == "optimal") {
    p.kind = CheckpointPolicy::Kind::optimal;
    const auto comma = value.find(',');
    p.budget = positive_integer(value.substr(0, comma), key, where);
    if (comma != std::string::npos) {
      p.cost = value.substr(comma + 1);
      if (p.cost != "macs" && p.cost != "latency" && p.cost != "energy") {
        throw UserError(where, "checkpoint policy 'optimal' minimises macs, latency or energy, not '" + p.cost + "'");
      }
    }
  } else if (key == "modules" || key == "blocks") {
    const bool modules = key == "modules";
    p.kind = modules ? CheckpointPolicy::Kind::modules : CheckpointPolicy::Kind::blocks;
    auto& names = modules ? p.modules : p.blocks;
    std::size_t start = 0;
    while (start <= value.size()) {
      const auto comma = value.find(',', start);
      std::string g = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!g.empty()) names.push_back(g);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (modules && names.empty()) throw UserError(where, "checkpoint policy 'modules' needs module names or globs");
  } else {
    throw UserError(where, "unknown checkpoint policy '" + text +
                               "'; expected none, segments=K, modules=GLOB[,GLOB...], every_k=K or every_k=sqrt");
  }
  return p;
}

namespace {

std::string span_name(const Graph& g, const ModuleTree& t, const std::vector<ModuleItem>& items, std::size_t first,
                      std::size_t last) {
  const std::string a = t.label(g, items[first]);
  return first == last ? a : a + " .. " + t.label(g, items[last]);
}

/// Consecutive items [0, n) cut into `count` checkpointed spans of `size` items (the rest is not checkpointed).
void add_spans(const Graph& g, const ModuleTree& t, const std::vector<ModuleItem>& items, std::size_t size,
               std::size_t count, const std::string& what, const std::string& suffix, std::vector<CheckpointRegion>& out) {
  for (std::size_t s = 0; s < count; ++s) {
    CheckpointRegion r;
    const std::size_t first = s * size;
    const std::size_t last = first + size - 1;
    r.name = what + " " + std::to_string(s + 1) + ": " + span_name(g, t, items, first, last) + suffix;
    for (std::size_t i = first; i <= last; ++i) {
      for (OperatorId o : t.operators_of(items[i])) r.operators.push_back(o);
    }
    std::sort(r.operators.begin(), r.operators.end());
    out.push_back(std::move(r));
  }
}

}  // namespace

namespace {
/// The regions of a policy other than the optimal one (which optimal_regions solves).
std::vector<CheckpointRegion> policy_regions(const Graph& g, const CheckpointPolicy& p) {
  std::vector<CheckpointRegion> out;
  std::set<std::string> suffixes;
  for (const Operator& op : g.operators()) {
    if (op.phase == Phase::forward) suffixes.insert(micro_batch_suffix(op));
  }
  for (const std::string& suffix : suffixes) {
    const ModuleTree tree = module_tree(g, suffix);
    const std::string tag = suffix.empty() ? "" : " (micro-batch " + suffix.substr(1) + ")";
    switch (p.kind) {
      case CheckpointPolicy::Kind::none: break;
      case CheckpointPolicy::Kind::optimal: break;  // all micro-batches at once, above
      case CheckpointPolicy::Kind::blocks: {
        // Each named block of the chain as a region of its own (the checkpoint genes of a search set these).
        const std::vector<ModuleItem> blocks = tree.blocks();
        for (const std::string& name : p.blocks) {
          std::size_t b = 0;
          while (b < blocks.size() && tree.label(g, blocks[b]) != name) ++b;
          if (b == blocks.size()) {
            if (!suffix.empty()) continue;
            std::vector<std::string> names;
            for (const ModuleItem& i : blocks) names.push_back(tree.label(g, i));
            throw UserError(p.where, "checkpoint block '" + name + "' is not a block of " + g.name() + "; its blocks: " +
                                         join(names, ", "));
          }
          CheckpointRegion r{name + tag, tree.operators_of(blocks[b])};
          std::sort(r.operators.begin(), r.operators.end());
          out.push_back(std::move(r));
        }
        break;
      }
      case CheckpointPolicy::Kind::segments: {
        // checkpoint_sequential(functions, segments, x): segment_size = n // segments; every segment but the last
        // is checkpointed, the last runs normally and takes the remainder.
        const auto& items = tree.root().items;
        const auto n = static_cast<std::int64_t>(items.size());
        if (p.segments > n) {
          throw UserError(p.where, "segments = " + std::to_string(p.segments) + " but " + g.name() + " has only " +
                                       std::to_string(n) + " top-level modules and operators");
        }
        add_spans(g, tree, items, static_cast<std::size_t>(n / p.segments), static_cast<std::size_t>(p.segments - 1),
                  "segment", tag, out);
        break;
      }
      case CheckpointPolicy::Kind::every_k: {
        const std::vector<ModuleItem> blocks = tree.blocks();
        const auto n = static_cast<std::int64_t>(blocks.size());
        std::int64_t k = p.every_k;
        if (k == 0) k = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
        if (k < 1 || n == 0) break;
        const std::int64_t segments = (n + k - 1) / k;  // the last (possibly short) one is not checkpointed
        add_spans(g, tree, blocks, static_cast<std::size_t>(k), static_cast<std::size_t>(segments - 1), "segment", tag,
                  out);
        break;
      }
      case CheckpointPolicy::Kind::modules: {
        std::vector<bool> matched(p.modules.size(), false);
        std::vector<bool> chosen(tree.modules.size(), false);
        for (std::size_t m = 1; m < tree.modules.size(); ++m) {
          const Module& mod = tree.modules[m];
          bool inside = false;  // an enclosing module is checkpointed already: it recomputes this one too
          for (int a = mod.parent; a > 0; a = tree.modules[static_cast<std::size_t>(a)].parent) {
            inside = inside || chosen[static_cast<std::size_t>(a)];
          }
          bool hit = false;
          for (std::size_t i = 0; i < p.modules.size(); ++i) {
            if (module_glob_match(p.modules[i], mod.name)) {
              matched[i] = true;
              hit = true;
            }
          }
          if (hit && !inside) {
            chosen[m] = true;
            out.push_back(CheckpointRegion{mod.name + tag, mod.operators});
          }
        }
        for (std::size_t i = 0; i < p.modules.size(); ++i) {
          if (!matched[i] && suffix.empty()) {
            std::vector<std::string> names;
            for (std::size_t m = 1; m < tree.modules.size() && names.size() < 12; ++m) {
              if (tree.modules[m].parent == 0) names.push_back(tree.modules[m].name);
            }
            throw UserError(p.where, "checkpoint module '" + p.modules[i] + "' matches no module of " + g.name() +
                                         (names.empty() ? std::string(" (its operator names carry no module paths)")
                                                        : "; top-level modules: " + join(names, ", ")));
          }
        }
        break;
      }
    }
  }
  return out;
}

bool is_backward(Phase p) { return p == Phase::backward_dx || p == Phase::backward_dw; }
}  // namespace

std::vector<CheckpointRegion> checkpoint_regions(const Graph& g, const CheckpointPolicy& p) {
  if (!p.active()) return {};
  // Recompute MACs as the cost; the experiment runner passes the accelerator's costs to optimal_regions itself.
  if (p.kind == CheckpointPolicy::Kind::optimal) return optimal_regions(GraphPtr(GraphPtr{}, &g), p);
  std::vector<CheckpointRegion> out = policy_regions(g, p);
  for (CheckpointRegion& r : out) r.semantics = p.semantics;
  return out;
}

GraphPtr apply_checkpointing(const Graph& g, const std::vector<CheckpointRegion>& chosen) {
  const std::size_t n_ops = g.operators().size();
  std::vector<int> region_of(n_ops, -1);
  // Operators that keep their input rather than their output (recompute_in_backward: e.g. Megatron's sequence-
  // parallel all-gather, which its backward pass gathers again) are recomputed whatever the policy, each as a
  // region of its own unless a chosen region covers it.
  std::vector<CheckpointRegion> regions = chosen;
  std::set<OperatorId> covered;
  for (const CheckpointRegion& r : chosen) covered.insert(r.operators.begin(), r.operators.end());
  for (const Operator& op : g.operators()) {
    if (op.phase == Phase::forward && recomputed_in_backward(op) && !covered.contains(op.id)) {
      regions.push_back(CheckpointRegion{op.name, {op.id}});
    }
  }
  for (std::size_t r = 0; r < regions.size(); ++r) {
    for (OperatorId o : regions[r].operators) {
      if (g.op(o).phase != Phase::forward) {
        throw UserError(g.op(o).origin, "operator '" + g.op(o).name + "' of checkpoint region '" + regions[r].name +
                                            "' is not a forward operator");
      }
      if (region_of[static_cast<std::size_t>(o)] >= 0) {
        throw UserError(g.op(o).origin, "operator '" + g.op(o).name + "' is in two checkpoint regions ('" +
                                            regions[static_cast<std::size_t>(region_of[static_cast<std::size_t>(o)])].name +
                                            "' and '" + regions[r].name + "')");
      }
      region_of[static_cast<std::size_t>(o)] = static_cast<int>(r);
    }
  }

  GraphBuilder b(g.name());
  for (const Tensor& t : g.tensors()) b.add_tensor(t);
  // Recomputed copies of the tensors the regions produce: tensor -> copy.
  std::map<TensorId, TensorId> copy;
  for (const Operator& op : g.operators()) {
    if (region_of[static_cast<std::size_t>(op.id)] < 0) continue;
    for (const Operand& o : op.operands) {
      if (!o.is_output() || copy.contains(o.tensor)) continue;
      Tensor t = g.tensor(o.tensor);
      t.name += detail::kRecomputeTag;
      t.in_place_of = kNone;
      copy[o.tensor] = b.add_tensor(std::move(t));
    }
  }
  auto produced_in = [&](TensorId t, int r) {
    const OperatorId p = g.tensor(t).producer;
    return p != kNone && region_of[static_cast<std::size_t>(p)] == r;
  };

  // Backward operators of a region read its recomputed tensors; the region's recomputation goes right before the
  // first of them (in graph order). Operators outside the region keep the forward tensors they saved, except
  // those a recompute_in_backward operator produces (the backward passes of its readers read them recomputed).
  std::vector<Operator> rewritten(g.operators().begin(), g.operators().end());
  std::vector<std::size_t> first_use(regions.size(), n_ops);  // where each region's recomputation goes
  auto region_producing = [&](TensorId t) {
    const OperatorId p = g.tensor(t).producer;
    return p == kNone ? -1 : region_of[static_cast<std::size_t>(p)];
  };
  for (Operator& op : rewritten) {
    if (!is_backward(op.phase)) continue;
    const int own = op.derived_from == kNone ? -1 : region_of[static_cast<std::size_t>(op.derived_from)];
    auto reread = [&](TensorId& t) {
      const int r = region_producing(t);
      if (r < 0 || (r != own && static_cast<std::size_t>(r) < chosen.size())) return;
      t = copy.at(t);
      first_use[static_cast<std::size_t>(r)] = std::min(first_use[static_cast<std::size_t>(r)], static_cast<std::size_t>(op.id));
    };
    for (Operand& o : op.operands) {
      if (!o.is_output()) reread(o.tensor);
    }
    for (TensorId& k : op.keeps_alive) reread(k);
    // PyTorch reruns a checkpointed function once a gradient reaches it, whether or not its backward reads any
    // of its results (a lone convolution's backward reads only its input): before the region's first backward.
    if (own >= 0 && static_cast<std::size_t>(own) < chosen.size() &&
        regions[static_cast<std::size_t>(own)].semantics == RecomputeSemantics::pytorch) {
      first_use[static_cast<std::size_t>(own)] = std::min(first_use[static_cast<std::size_t>(own)], static_cast<std::size_t>(op.id));
    }
  }

  // What runs again: a `pytorch` region that a gradient reaches, whole (PyTorch reruns the checkpointed
  // function); of a `minimal` one only what backward needs: an operator none of whose results a backward operator
  // or a needed recomputation reads is left out (a region's trailing operators whose outputs only feed the next
  // region).
  std::set<TensorId> needed;
  for (const Operator& op : rewritten) {
    if (!is_backward(op.phase)) continue;
    for (const Operand& o : op.operands) {
      if (!o.is_output()) needed.insert(o.tensor);
    }
    needed.insert(op.keeps_alive.begin(), op.keeps_alive.end());
  }
  std::vector<bool> live(n_ops, false);
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const auto& ops = regions[r].operators;
    const bool whole = regions[r].semantics == RecomputeSemantics::pytorch && first_use[r] < n_ops;
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Operator& f = g.op(*it);
      bool used = whole;
      for (const Operand& o : f.operands) used = used || (o.is_output() && needed.contains(copy.at(o.tensor)));
      if (!used) continue;
      live[static_cast<std::size_t>(*it)] = true;
      for (const Operand& o : f.operands) {
        if (!o.is_output() && produced_in(o.tensor, static_cast<int>(r))) needed.insert(copy.at(o.tensor));
      }
      for (TensorId k : f.keeps_alive) {
        if (produced_in(k, static_cast<int>(r))) needed.insert(copy.at(k));
      }
    }
  }

  std::vector<std::vector<int>> before(n_ops + 1);  // regions to recompute before operator i
  for (std::size_t r = 0; r < regions.size(); ++r) {
    if (first_use[r] < n_ops) before[first_use[r]].push_back(static_cast<int>(r));
  }
  std::vector<OperatorId> new_id(n_ops, kNone);
  std::vector<std::pair<OperatorId, OperatorId>> recomputed;  // new recompute op -> forward op (old id)
  for (std::size_t i = 0; i < n_ops; ++i) {
    for (int r : before[i]) {
      for (OperatorId f : regions[static_cast<std::size_t>(r)].operators) {
        if (!live[static_cast<std::size_t>(f)]) continue;
        Operator c = g.op(f);
        c.name += detail::kRecomputeTag;
        c.phase = Phase::recompute;
        for (Operand& o : c.operands) {
          if (o.is_output() || produced_in(o.tensor, r)) o.tensor = copy.at(o.tensor);
        }
        for (TensorId& k : c.keeps_alive) {
          if (produced_in(k, r)) k = copy.at(k);
        }
        c.after.clear();  // ordering constraints of the forward pass are met by its region inputs
        recomputed.emplace_back(b.add_operator(std::move(c)), f);
      }
    }
    new_id[i] = b.add_operator(std::move(rewritten[i]));
  }
  follow_moved_operators(b, new_id);
  for (const auto& [rc, f] : recomputed) b.op(rc).derived_from = new_id[static_cast<std::size_t>(f)];
  return std::move(b).build();
}

bool recomputed_in_backward(const Operator& op) {
  const auto it = op.attributes.find("recompute_in_backward");
  return it != op.attributes.end() && !it->second.empty() && it->second.front() != 0;
}

GraphPtr apply_checkpointing(const GraphPtr& graph, const CheckpointPolicy& policy) {
  if (!policy.active() && std::none_of(graph->operators().begin(), graph->operators().end(), [](const Operator& op) {
        return op.phase == Phase::forward && recomputed_in_backward(op);
      })) {
    return graph;
  }
  return apply_checkpointing(*graph, checkpoint_regions(*graph, policy));
}

}  // namespace monet
