#pragma once
// The state behind DesignEvaluator (design_evaluator.cpp): its memoised stages (an experiment variant per value-gene
// vector, prepared once), and the expansion of the genes a [space] writes as one table but the space holds as many
// (allocation genes per operator group, stack cuts and tile counts per block, checkpoint genes per block), with the
// changes each such gene makes. Private to the search kernel: one translation unit includes it.
#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "monet/report/metrics.hpp"
#include "monet/search/design_evaluator.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/modules.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace design_evaluator_detail {

constexpr std::size_t kStagesKept = 64;  // prepared variants kept in memory (least recently used go first)

/// What a variant of the experiment (one vector of value genes) gives every point that shares it.
struct Stage {
  std::shared_ptr<const PreparedExperiment> prepared;
  std::string error;                          // why the variant cannot be evaluated (prepared is null)
  std::optional<UserError> failure;           // the same as thrown, with its location (rethrown as it was)
  std::vector<std::vector<int>> alloc_cns;    // per allocation gene: the CNs it places
  std::vector<std::vector<int>> alloc_cores;  // per allocation gene and value: the core id (-1: no such core here)
};

/// An allocation gene: the CNs of one operator's inter-core group, and the cores they may run on.
struct AllocationGene {
  std::string op;
  int group = 0;
  std::vector<std::string> cores;
};

/// A value's TOML text on one line (TOML's formatter writes a list of strings over several lines): `["a", "b"]`.
std::string one_line(const std::string& text) {
  std::string out;
  bool blank_before = false;
  for (const char ch : text) {
    const bool blank = ch == '\n' || ch == ' ';
    if (!blank && blank_before && !out.empty() && out.back() != '[' && ch != ']') out += ' ';
    if (!blank) out += ch;
    blank_before = blank;
  }
  return out;
}

bool selects(const std::string& selector, const Operator& op) {
  return op.name == selector || op.type == selector || to_string(op.kind) == selector ||
         (is_glob(selector) && glob_match(selector, op.name));
}

}  // namespace design_evaluator_detail

using namespace design_evaluator_detail;  // NOLINT(google-build-using-namespace): the one includer

struct DesignEvaluator::Impl {
  ExperimentSource source;
  std::optional<SpaceSpec> spec;
  const Registry* registry = nullptr;
  DesignSpace space;
  std::vector<int> value_spec;        // per space gene: index into spec->genes for value genes, -1 otherwise
  std::vector<int> alloc_index;       // per space gene: index into alloc for allocation genes, -1 otherwise
  std::vector<AllocationGene> alloc;
  std::vector<std::size_t> value_genes;  // space gene indices of value genes, in order
  std::vector<std::size_t> value_specs;  // spec gene indices of value genes, in the same order
  // stack_cuts: the forward operators the stacks cover (graph order), and per cut gene the position it ends a
  // stack after; the cut genes' values follow the value genes' in a stage key (they change the CN graph)
  std::vector<std::string> cut_ops;
  std::vector<std::size_t> cut_after;
  std::vector<std::size_t> cut_genes;  // space gene indices, in order
  SourceLocation cut_where, tiles_where;
  // the stack_cuts gene's tile counts: one gene per block between candidate cuts (block b ends after
  // cut_after[b], the last at the end); their values follow the cut genes' in a stage key
  std::vector<std::int64_t> tile_values;
  std::vector<std::size_t> tile_genes;  // space gene indices, in order
  // checkpoint genes: the blocks of the chain, one gene each (space gene indices, in order) over keep /
  // recompute / offload (ckpt_actions: per block, the action of each value index); their values follow the cut
  // genes' in a stage key (they change the training graph and the offloaded tensors)
  enum class Action : std::uint8_t { keep, recompute, offload };
  std::vector<std::string> ckpt_blocks;
  std::vector<std::size_t> ckpt_genes;
  std::vector<std::vector<Action>> ckpt_actions;
  bool ckpt_offload = false;  // some block may be offloaded: the genes set training.checkpoint.offload too
  SourceLocation ckpt_where;
  std::vector<DesignPoint> seeds;  // besides the configured point: none, sqrt(n), the DP's front
  SourceLocation space_where;
  mutable PreparationCache cache;
  mutable std::mutex mutex;
  mutable std::map<std::vector<std::int32_t>, std::shared_future<std::shared_ptr<const Stage>>> stages;
  mutable std::deque<std::vector<std::int32_t>> recent;  // least recently used first
  mutable std::size_t variants = 0;
  std::shared_ptr<const Stage> base;
  std::optional<QualityPlugin> quality;
  // The quality plugin's values by point (genes): what a resumed search recalls from its journal, and what best/ and
  // front/ reuse, so that a plugin that trains the candidate is never asked twice for one point.
  mutable std::mutex quality_lock;
  mutable std::map<std::vector<std::int32_t>, std::vector<double>> quality_memo;

  [[nodiscard]] std::vector<double> quality_values(const DesignPoint& p, const PreparedExperiment& prepared) const {
    {
      std::lock_guard lock(quality_lock);
      if (auto it = quality_memo.find(p.genes); it != quality_memo.end()) return it->second;
    }
    std::vector<double> v = assess_quality(*quality, prepared, gene_values(p));
    std::lock_guard lock(quality_lock);
    quality_memo.emplace(p.genes, v);
    return v;
  }
  [[nodiscard]] std::vector<Metric> quality_metrics_at(const DesignPoint& p, const PreparedExperiment& prepared) const {
    const std::vector<double> v = quality_values(p, prepared);
    std::vector<Metric> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(Metric{quality->metrics[i].key, quality->metrics[i].unit, v[i]});
    return out;
  }

  /// The point's value genes as (name, TOML text): what a quality plugin may key on.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> gene_values(const DesignPoint& p) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t g : value_genes) out.emplace_back(space.genes[g].name, space.genes[g].labels[static_cast<std::size_t>(p.genes[g])]);
    return out;
  }

  Impl(ExperimentSource s, std::optional<SpaceSpec> sp, const Registry& r) : source(std::move(s)), spec(std::move(sp)), registry(&r) {}

  [[nodiscard]] std::vector<std::int32_t> stage_key(const DesignPoint& p) const {
    std::vector<std::int32_t> key;
    key.reserve(value_genes.size());
    for (std::size_t g : value_genes) key.push_back(p.genes[g]);
    for (std::size_t g : cut_genes) key.push_back(p.genes[g]);
    for (std::size_t g : tile_genes) key.push_back(p.genes[g]);
    for (std::size_t g : ckpt_genes) key.push_back(p.genes[g]);
    return key;
  }

  [[nodiscard]] std::shared_ptr<const Stage> make_stage(const std::vector<std::int32_t>& key) const {
    auto stage = std::make_shared<Stage>();
    try {
      std::vector<Change> changes;
      for (std::size_t k = 0; k < value_specs.size(); ++k) {
        for (Change& c : gene_changes(spec->genes[value_specs[k]], key[k])) changes.push_back(std::move(c));
      }
      const std::size_t cuts_end = value_specs.size() + cut_after.size() + tile_genes.size();
      if (!cut_after.empty() && key.size() >= cuts_end) {
        for (Change& c : stacks_changes(key)) changes.push_back(std::move(c));
      }
      if (!ckpt_blocks.empty() && key.size() == cuts_end + ckpt_blocks.size()) {
        for (Change& c : checkpoint_changes(key)) changes.push_back(std::move(c));
      }
      stage->prepared = std::make_shared<const PreparedExperiment>(prepare(source.build(changes), *registry, &cache));
    } catch (const UserError& e) {
      stage->error = e.what();
      stage->failure = e;
      return stage;
    }
    place(*stage);
    return stage;
  }

  /// fusion.stacks from the cut genes' values (0 = a stack ends after the operator, 1 = the next one joins it),
  /// and with tile genes fusion.stack_tiles: per stack the smallest non-zero count of its blocks (0 if none).
  [[nodiscard]] std::vector<Change> stacks_changes(const std::vector<std::int32_t>& key) const {
    auto stacks = std::make_shared<toml::array>();
    auto tiles = std::make_shared<toml::array>();
    const std::size_t tiles_at = value_specs.size() + cut_after.size();
    std::size_t first = 0;
    std::int64_t count = 0;  // of the stack being closed
    const auto join = [&](std::size_t block) {
      if (tile_genes.empty()) return;
      const std::int64_t t = tile_values[static_cast<std::size_t>(key[tiles_at + block])];
      if (t > 0) count = count == 0 ? t : std::min(count, t);
    };
    const auto close = [&](std::size_t last) {
      stacks->push_back(first == last ? cut_ops[first] : cut_ops[first] + ".." + cut_ops[last]);
      tiles->push_back(count);
      first = last + 1;
      count = 0;
    };
    for (std::size_t k = 0; k < cut_after.size(); ++k) {
      join(k);
      if (key[value_specs.size() + k] == 0) close(cut_after[k]);
    }
    join(cut_after.size());
    close(cut_ops.size() - 1);
    std::vector<Change> out{Change{"fusion.stacks", std::shared_ptr<const toml::node>(std::move(stacks)), cut_where}};
    if (!tile_genes.empty()) out.push_back(Change{"fusion.stack_tiles", std::shared_ptr<const toml::node>(std::move(tiles)), tiles_where});
    return out;
  }

  /// training.checkpoint.blocks (the recomputed blocks, each its own region) and, when the genes may offload,
  /// training.checkpoint.offload (the offloaded blocks, by module name) from the checkpoint genes' values.
  [[nodiscard]] std::vector<Change> checkpoint_changes(const std::vector<std::int32_t>& key) const {
    auto blocks = std::make_shared<toml::array>();
    auto offloaded = std::make_shared<toml::array>();
    const std::size_t first = value_specs.size() + cut_after.size() + tile_genes.size();
    for (std::size_t b = 0; b < ckpt_blocks.size(); ++b) {
      const Action a = ckpt_actions[b][static_cast<std::size_t>(key[first + b])];
      if (a == Action::recompute) blocks->push_back(ckpt_blocks[b]);
      if (a == Action::offload) offloaded->push_back(ckpt_blocks[b]);
    }
    std::vector<Change> out{Change{"training.checkpoint.blocks", std::shared_ptr<const toml::node>(std::move(blocks)), ckpt_where}};
    if (ckpt_offload) {
      out.push_back(Change{"training.checkpoint.offload", std::shared_ptr<const toml::node>(std::move(offloaded)), ckpt_where});
    }
    return out;
  }

  /// The checkpoint genes: one per block of the chain of the (uncheckpointed) training graph.
  void expand_checkpoint(const GeneSpec& g, const PreparedExperiment& p) {
    if (p.experiment.training_mode != "training") {
      throw UserError(g.where, "checkpoint genes need a training step ([training] mode = \"training\")");
    }
    const CheckpointPolicy& configured = p.experiment.training.checkpoint;
    if (configured.kind != CheckpointPolicy::Kind::none && configured.kind != CheckpointPolicy::Kind::blocks) {
      throw UserError(g.where, "checkpoint genes set training.checkpoint; the experiment's own policy (" +
                                   configured.text() + ") would conflict: remove it");
    }
    const auto& values = g.checkpoint_values;
    ckpt_offload = std::find(values.begin(), values.end(), "offload") != values.end();
    if (ckpt_offload && p.experiment.offload.active()) {
      throw UserError(g.where, "the checkpoint gene's offload value sets training.checkpoint.offload; the experiment's own "
                               "offload (" + p.experiment.offload.text() + ") would conflict: remove it");
    }
    ckpt_where = g.where;
    const ModuleTree tree = module_tree(*p.graph);
    for (const ModuleItem& item : tree.blocks()) {
      const std::string label = tree.label(*p.graph, item);
      ckpt_blocks.push_back(label);
      Gene gene;
      gene.key = "ckpt:" + label;
      gene.name = g.name + ":" + label;
      gene.group = GeneGroup::checkpoint;
      // Offloading selects modules: a block that is an operator called directly (a residual add, a flatten) has
      // no module name to offload by, so its gene keeps or recomputes only.
      std::vector<Action> actions;
      for (const std::string& v : values) {
        const Action a = v == "keep" ? Action::keep : v == "recompute" ? Action::recompute : Action::offload;
        if (a == Action::offload && item.module < 0) continue;
        actions.push_back(a);
        gene.labels.push_back(v);
      }
      const bool recomputed = std::find(configured.blocks.begin(), configured.blocks.end(), label) != configured.blocks.end();
      const auto at = std::find(actions.begin(), actions.end(), recomputed ? Action::recompute : Action::keep);
      gene.configured = at == actions.end() ? 0 : static_cast<std::int32_t>(at - actions.begin());
      ckpt_actions.push_back(std::move(actions));
      ckpt_genes.push_back(space.genes.size());
      value_spec.push_back(-1);
      alloc_index.push_back(-1);
      space.genes.push_back(std::move(gene));
    }
    if (ckpt_blocks.empty()) throw UserError(g.where, "the workload has no blocks to checkpoint");
  }

  /// Seeds of a search with checkpoint genes (the configured point aside): no checkpointing, Chen et al.'s sqrt(n)
  /// segments with every block of them its own region, and every choice on the optimal policy's (peak, recompute
  /// MACs) front — the DP's optimum at every budget.
  void checkpoint_seeds(const PreparedExperiment* uncheckpointed) {
    DesignPoint base = space.configured();
    const std::size_t n = ckpt_blocks.size();
    // A choice of actions as a point; nullopt when a block's gene lacks its action (e.g. no `keep` value).
    auto point_of = [&](const std::vector<Action>& c) -> std::optional<DesignPoint> {
      DesignPoint p = base;
      for (std::size_t b = 0; b < n; ++b) {
        const auto& acts = ckpt_actions[b];
        const auto at = std::find(acts.begin(), acts.end(), c[b]);
        if (at == acts.end()) return std::nullopt;
        p.genes[ckpt_genes[b]] = static_cast<std::int32_t>(at - acts.begin());
      }
      return p;
    };
    auto push = [&](const std::vector<Action>& c) {
      if (auto p = point_of(c)) seeds.push_back(*p);
    };
    auto point = [&](const std::vector<bool>& c) {
      std::vector<Action> a(n, Action::keep);
      for (std::size_t b = 0; b < n; ++b) a[b] = c[b] ? Action::recompute : Action::keep;
      return a;
    };
    push(point(std::vector<bool>(n, false)));
    if (ckpt_offload) {  // every module block offloaded (operator blocks kept): the least on-chip memory without recomputing
      std::vector<Action> all(n, Action::offload);
      for (std::size_t b = 0; b < n; ++b) {
        if (std::find(ckpt_actions[b].begin(), ckpt_actions[b].end(), Action::offload) == ckpt_actions[b].end()) all[b] = Action::keep;
      }
      push(all);
    }
    const auto k = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    std::vector<bool> sqrt_n(n, false);
    for (std::size_t b = 0; b < n && b / k + 1 < (n + k - 1) / k; ++b) sqrt_n[b] = true;
    push(point(sqrt_n));
    if (!uncheckpointed) return;
    const CheckpointChain chain =
        checkpoint_chain(uncheckpointed->graph, {}, {}, uncheckpointed->experiment.training.checkpoint.semantics);
    if (chain.size() != n) return;  // micro-batches with different chains: no DP seeds
    for (const ChainChoice& c : chain_front(chain)) push(point(c.checkpointed));
  }

  /// The cut genes of a stack_cuts spec: one per selected forward operator inside `within`, except its last.
  void expand_cuts(const GeneSpec& g, const PreparedExperiment& p) {
    const std::size_t dots = g.within.find("..");
    const std::string first = g.within.substr(0, dots), last = g.within.substr(dots + 2);
    std::vector<const Operator*> forward;
    for (const Operator& op : p.graph->operators()) {
      if (op.phase == Phase::forward) forward.push_back(&op);
    }
    const auto at = [&](const std::string& name) {
      for (std::size_t i = 0; i < forward.size(); ++i) {
        if (forward[i]->name == name) return i;
      }
      throw UserError(g.within_where, "no forward operator named '" + name + "' (`monet inspect` lists them)");
    };
    const std::size_t a = at(first), b = at(last);
    if (b < a) throw UserError(g.within_where, "'" + last + "' comes before '" + first + "' in the graph");
    cut_where = g.within_where;
    for (std::size_t i = a; i <= b; ++i) cut_ops.push_back(forward[i]->name);
    for (std::size_t i = a; i < b; ++i) {
      if (!selects(g.operators, *forward[i])) continue;
      cut_after.push_back(i - a);
      Gene gene;
      gene.key = "cut:" + forward[i]->name;
      gene.name = g.name + ":" + forward[i]->name;
      gene.group = GeneGroup::fusion;
      gene.labels = {"cut", "fuse"};
      gene.configured = 0;
      cut_genes.push_back(space.genes.size());
      value_spec.push_back(-1);
      alloc_index.push_back(-1);
      space.genes.push_back(std::move(gene));
    }
    if (cut_after.empty()) {
      throw UserError(g.where, "stack_cuts = \"" + g.operators + "\" matches no operator before '" + last + "' in " + g.within);
    }
    if (g.tiles.empty()) return;
    // One tile-count gene per block: a stack's count is then free wherever the cuts put its ends.
    tile_values = g.tiles;
    tiles_where = g.tiles_where;
    const auto zero = std::find(g.tiles.begin(), g.tiles.end(), 0);
    for (std::size_t b = 0; b <= cut_after.size(); ++b) {
      const std::string& head = cut_ops[b == 0 ? 0 : cut_after[b - 1] + 1];
      Gene gene;
      gene.key = "tiles:" + head;
      gene.name = g.name + ":tiles:" + head;
      gene.group = GeneGroup::fusion;
      for (std::int64_t t : g.tiles) gene.labels.push_back(t == 0 ? "intra" : std::to_string(t));
      gene.ordinal = true;
      gene.configured = zero == g.tiles.end() ? 0 : static_cast<std::int32_t>(zero - g.tiles.begin());
      tile_genes.push_back(space.genes.size());
      value_spec.push_back(-1);
      alloc_index.push_back(-1);
      space.genes.push_back(std::move(gene));
    }
  }

  /// Where the allocation genes act in a stage: the CNs of each gene's operator group, the core of each value.
  void place(Stage& stage) const {
    const PreparedExperiment& p = *stage.prepared;
    const Accelerator& acc = *p.experiment.accelerator;
    stage.alloc_cns.clear();
    stage.alloc_cores.clear();
    for (const AllocationGene& a : alloc) {
      std::vector<int> cns;
      if (const Operator* op = p.graph->find_operator(a.op)) {
        for (const ComputationNode& cn : p.evaluator->cns().nodes) {
          if (cn.op == op->id && cn.group == a.group) cns.push_back(cn.id);
        }
      }
      stage.alloc_cns.push_back(std::move(cns));
      std::vector<int> cores;
      for (const std::string& c : a.cores) cores.push_back(acc.core_index(c));
      stage.alloc_cores.push_back(std::move(cores));
    }
  }

  /// Keeps a stage made outside stage() (the base) in the cache.
  void keep(const std::vector<std::int32_t>& key, std::shared_ptr<const Stage> s) const {
    std::promise<std::shared_ptr<const Stage>> promise;
    promise.set_value(std::move(s));
    std::lock_guard lock(mutex);
    stages.emplace(key, promise.get_future().share());
    recent.push_back(key);
    ++variants;
  }

  [[nodiscard]] std::shared_ptr<const Stage> stage(const std::vector<std::int32_t>& key) const {
    std::promise<std::shared_ptr<const Stage>> promise;
    std::shared_future<std::shared_ptr<const Stage>> future;
    bool mine = false;
    {
      std::lock_guard lock(mutex);
      auto it = stages.find(key);
      if (it == stages.end()) {
        future = promise.get_future().share();
        stages.emplace(key, future);
        mine = true;
        ++variants;
        while (stages.size() > kStagesKept && !recent.empty()) {
          stages.erase(recent.front());
          recent.pop_front();
        }
      } else {
        future = it->second;
        for (auto r = recent.begin(); r != recent.end(); ++r) {
          if (*r == key) {
            recent.erase(r);
            break;
          }
        }
      }
      recent.push_back(key);
    }
    if (mine) promise.set_value(make_stage(key));
    return future.get();
  }

  /// The allocation genes of the spec, one per (operator, inter-core group) the selector matches.
  void expand_allocation(const GeneSpec& g, std::size_t spec_index, const PreparedExperiment& p) {
    const Accelerator& acc = *p.experiment.accelerator;
    std::size_t matched = 0;
    for (const Operator& op : p.graph->operators()) {
      if (op.is_view() || !selects(g.operators, op)) continue;
      const auto& allowed = p.evaluator->allowed_cores()[static_cast<std::size_t>(op.id)];
      std::vector<std::string> cores;
      if (g.cores.empty()) {
        for (int c : allowed) cores.push_back(acc.cores[static_cast<std::size_t>(c)].name);
      } else {
        for (const std::string& pattern : g.cores) {
          for (const CoreInstance& ci : acc.cores) {
            if (ci.name != pattern && !(is_glob(pattern) && glob_match(pattern, ci.name))) continue;
            if (std::find(allowed.begin(), allowed.end(), ci.id) == allowed.end()) {
              throw UserError(g.cores_where, "core '" + ci.name + "' may not run operator '" + op.name +
                                                 "' (its [allocation] or op_kinds exclude it)");
            }
            cores.push_back(ci.name);
          }
        }
        if (cores.empty()) throw UserError(g.cores_where, "no core of accelerator '" + acc.name + "' matches; cores: " + join(acc.core_names()));
      }
      int groups = 1;
      for (const ComputationNode& cn : p.evaluator->cns().nodes) {
        if (cn.op == op.id) groups = std::max(groups, cn.groups);
      }
      ++matched;
      for (int group = 0; group < groups; ++group) {
        Gene gene;
        const std::string suffix = groups > 1 ? "#g" + std::to_string(group) : "";
        gene.key = "alloc:" + op.name + suffix;
        gene.name = g.name + ":" + op.name + suffix;
        gene.group = GeneGroup::allocation;
        gene.labels = cores;
        // The experiment's own choice when it is one core: the group's core for a split over all allowed cores.
        if (allowed.size() == static_cast<std::size_t>(groups)) {
          const auto& name = acc.cores[static_cast<std::size_t>(allowed[static_cast<std::size_t>(group)])].name;
          auto it = std::find(cores.begin(), cores.end(), name);
          if (it != cores.end()) gene.configured = static_cast<std::int32_t>(it - cores.begin());
        }
        alloc_index.push_back(static_cast<int>(alloc.size()));
        value_spec.push_back(-1);
        alloc.push_back(AllocationGene{op.name, group, cores});
        space.genes.push_back(std::move(gene));
        (void)spec_index;
      }
    }
    if (matched == 0) {
      throw UserError(g.where, "allocation = \"" + g.operators + "\" matches no operator of the workload (a name, an "
                                                                 "ONNX type, a kind or a glob over names)");
    }
  }
};

}  // namespace monet
