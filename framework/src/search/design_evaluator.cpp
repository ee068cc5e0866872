#include "monet/search/design_evaluator.hpp"

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
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/modules.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

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

}  // namespace

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

DesignEvaluator::DesignEvaluator(ExperimentSource source, std::optional<SpaceSpec> spec, const Registry& registry,
                                 std::function<void(CostCache&)> preload_costs, bool check_quality)
    : impl_(std::make_unique<Impl>(std::move(source), std::move(spec), registry)) {
  Impl& m = *impl_;
  if (preload_costs) preload_costs(*m.cache.costs());  // before the base point: it costs too
  if (!m.spec) {
    m.spec = SpaceSpec{};
    m.spec->objectives = {{"latency_cycles", "cycles"}, {"energy_pj", "pJ"}};
  }
  m.space.objectives = m.spec->objectives;
  m.space_where = m.spec->where;
  for (const ConstraintSpec& c : m.spec->constraints) {
    m.space.constraints.push_back(c.key + (c.max ? " <= " + format_number(*c.max) : "") +
                                  (c.min ? " >= " + format_number(*c.min) : ""));
  }
  // Value genes first: the configured point's variant is the base that allocation genes are expanded on.
  std::vector<std::int32_t> configured;
  for (std::size_t i = 0; i < m.spec->genes.size(); ++i) {
    const GeneSpec& g = m.spec->genes[i];
    if (g.kind != GeneSpec::Kind::value) continue;
    configured.push_back(g.configured);
    m.value_specs.push_back(i);
  }
  auto base = std::const_pointer_cast<Stage>(m.make_stage(configured));
  if (!base->prepared) throw *base->failure;
  m.base = base;
  for (std::size_t i = 0; i < m.spec->genes.size(); ++i) {
    const GeneSpec& g = m.spec->genes[i];
    if (g.kind == GeneSpec::Kind::allocation) {
      m.expand_allocation(g, i, *m.base->prepared);
      continue;
    }
    if (g.kind == GeneSpec::Kind::stack_cuts) {
      m.expand_cuts(g, *m.base->prepared);
      continue;
    }
    if (g.kind == GeneSpec::Kind::checkpoint) {
      m.expand_checkpoint(g, *m.base->prepared);
      continue;
    }
    Gene gene;
    gene.key = g.path;
    gene.name = g.name;
    gene.group = g.group;
    for (const auto& v : g.values) gene.labels.push_back(one_line(toml_text(*v)));
    gene.ordinal = g.ordinal;
    gene.configured = g.configured;
    m.value_genes.push_back(m.space.genes.size());
    m.value_spec.push_back(static_cast<int>(i));
    m.alloc_index.push_back(-1);
    m.space.genes.push_back(std::move(gene));
  }
  if (!m.cut_genes.empty()) {
    for (const GeneSpec& g : m.spec->genes) {
      if (g.kind == GeneSpec::Kind::value && std::find(g.paths.begin(), g.paths.end(), "fusion.stacks") != g.paths.end()) {
        throw UserError(g.where, "fusion.stacks is set by the stack_cuts gene; it cannot be a gene of its own too");
      }
      if (!m.tile_genes.empty() && g.kind == GeneSpec::Kind::value &&
          std::find(g.paths.begin(), g.paths.end(), "fusion.stack_tiles") != g.paths.end()) {
        throw UserError(g.where, "fusion.stack_tiles is set by the stack_cuts gene's `tiles`; it cannot be a gene of its own too");
      }
    }
    // The configured point cuts everywhere: its stages are the segments between candidate cuts.
    for (std::size_t k = 0; k < m.cut_genes.size(); ++k) configured.push_back(0);
    for (std::size_t g : m.tile_genes) configured.push_back(m.space.genes[g].configured);
    base = std::const_pointer_cast<Stage>(m.make_stage(configured));
    if (!base->prepared) throw *base->failure;
    m.base = base;
  }
  if (!m.ckpt_genes.empty()) {
    // Stage keys: value genes, cut and tile genes (already in `configured`), then the checkpoint genes.
    for (std::size_t b = 0; b < m.ckpt_genes.size(); ++b) configured.push_back(m.space.genes[m.ckpt_genes[b]].configured);
    // The uncheckpointed graph (every block kept, or offloaded, which leaves the graph as it is) for the DP's
    // seeds; a block whose gene can only recompute leaves no such graph, and no DP seeds.
    std::vector<std::int32_t> keep_all = configured;
    bool plain_exists = true;
    const std::size_t ckpt_first = keep_all.size() - m.ckpt_genes.size();
    for (std::size_t b = 0; b < m.ckpt_genes.size(); ++b) {
      const auto& acts = m.ckpt_actions[b];
      auto at = std::find(acts.begin(), acts.end(), Impl::Action::keep);
      if (at == acts.end()) at = std::find(acts.begin(), acts.end(), Impl::Action::offload);
      plain_exists = plain_exists && at != acts.end();
      keep_all[ckpt_first + b] = at == acts.end() ? 0 : static_cast<std::int32_t>(at - acts.begin());
    }
    const std::shared_ptr<const Stage> plain = m.make_stage(keep_all);
    if (!plain->prepared) throw *plain->failure;
    m.checkpoint_seeds(plain_exists ? plain->prepared.get() : nullptr);
    base = std::const_pointer_cast<Stage>(m.make_stage(configured));
    if (!base->prepared) throw *base->failure;
    m.base = base;
  }
  // The base stage was made before the allocation genes existed.
  m.place(*base);
  m.keep(configured, base);
  // The configured point's quality now: a key its plugin cannot find is the experiment's mistake, before any work.
  m.quality = make_quality_plugin(base->prepared->experiment);
  if (m.quality && check_quality) (void)m.quality_values(m.space.configured(), *base->prepared);
  // An objective the experiment cannot give (an area without estimates) is an error now, not NaN later.
  const std::vector<Metric> metrics = summary_metrics(*base->prepared, ScheduleSummary{});
  for (const Objective& o : m.space.objectives) {
    for (const Metric& mt : metrics) {
      if (mt.key == o.key && std::isnan(mt.value)) {
        throw UserError(m.spec->where, "objective '" + o.key + "' is unknown for this accelerator: " +
                                           (o.key == "area_mm2" ? "a core has no area (name an estimator in its core file, "
                                                                  "or give area_mm2; docs/estimators.md)"
                                                                : "no value"));
      }
    }
  }
}

DesignEvaluator::~DesignEvaluator() = default;

const DesignSpace& DesignEvaluator::space() const { return impl_->space; }
std::vector<DesignPoint> DesignEvaluator::seeds() const {
  std::vector<DesignPoint> out{impl_->space.configured()};
  for (const DesignPoint& p : impl_->seeds) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}
const PreparedExperiment& DesignEvaluator::base() const { return *impl_->base->prepared; }
const std::optional<QualityPlugin>& DesignEvaluator::quality() const { return impl_->quality; }
void DesignEvaluator::recall_quality(const std::vector<Evaluation>& evaluations) const {
  std::lock_guard lock(impl_->quality_lock);
  for (const Evaluation& e : evaluations) {
    if (impl_->quality && e.quality.size() == impl_->quality->metrics.size()) impl_->quality_memo.emplace(e.point.genes, e.quality);
  }
}
CostCache& DesignEvaluator::costs() const { return *impl_->cache.costs(); }

DesignEvaluator::Stats DesignEvaluator::stats() const {
  std::lock_guard lock(impl_->mutex);
  return Stats{impl_->variants, impl_->cache.graphs_built(), impl_->cache.costs()->hits(), impl_->cache.costs()->misses()};
}

namespace {

/// The per-CN cores the point's allocation genes fix; throws UserError when a gene's core is absent here.
std::vector<int> cn_cores(const DesignSpace& space, const std::vector<int>& alloc_index, const Stage& stage,
                          const DesignPoint& point) {
  std::vector<int> out = stage.prepared->configured_cn_core;  // [allocation.group] of the experiment
  for (std::size_t g = 0; g < point.genes.size(); ++g) {
    const int a = alloc_index[g];
    if (a < 0) continue;
    if (out.empty()) out.assign(stage.prepared->evaluator->cns().nodes.size(), -1);
    const auto& cns = stage.alloc_cns[static_cast<std::size_t>(a)];
    const int core = stage.alloc_cores[static_cast<std::size_t>(a)][static_cast<std::size_t>(point.genes[g])];
    if (cns.empty() || core < 0) {
      throw UserError("gene '" + space.genes[g].name + "' = " + space.genes[g].labels[static_cast<std::size_t>(point.genes[g])] +
                      " does not exist at this point (no such operator group or core)");
    }
    for (int cn : cns) out[static_cast<std::size_t>(cn)] = core;
  }
  return out;
}

}  // namespace

std::pair<std::shared_ptr<const PreparedExperiment>, std::vector<int>> DesignEvaluator::placed(
    const DesignPoint& point) const {
  const Impl& m = *impl_;
  ensure(point.genes.size() == m.space.genes.size(), "design point of the wrong size");
  for (std::size_t g = 0; g < point.genes.size(); ++g) {
    ensure(point.genes[g] >= 0 && point.genes[g] < m.space.genes[g].size(), "gene value out of range");
  }
  const std::shared_ptr<const Stage> stage = m.stage(m.stage_key(point));
  if (!stage->prepared) throw *stage->failure;
  return {stage->prepared, cn_cores(m.space, m.alloc_index, *stage, point)};
}

DesignEvaluator::Detail DesignEvaluator::detail(const DesignPoint& point, bool memory_by_use) const {
  const Impl& m = *impl_;
  const auto [prepared, cn_core] = placed(point);
  Detail d{prepared, prepared->evaluator->evaluate(prepared->configured_allocation, cn_core, memory_by_use), {}};
  if (m.quality) d.quality = m.quality_metrics_at(point, *prepared);
  if (!m.alloc.empty()) {
    // The point's allocation genes as [allocation.group] entries: its resolved.toml reproduces it.
    auto copy = std::make_shared<PreparedExperiment>(*prepared);
    auto& groups = copy->experiment.allocation.by_group;
    for (std::size_t g = 0; g < point.genes.size(); ++g) {
      const int a = m.alloc_index[g];
      if (a < 0) continue;
      const std::string key = m.space.genes[g].key.substr(std::string("alloc:").size());
      const std::string core = m.space.genes[g].labels[static_cast<std::size_t>(point.genes[g])];
      std::erase_if(groups, [&](const AllocationRule& r) { return r.key == key; });
      groups.push_back(AllocationRule{key, {core}, m.spec->genes.empty() ? SourceLocation{} : m.space_where});
    }
    copy->configured_cn_core = cn_core;
    d.prepared = std::move(copy);
  }
  return d;
}

Evaluation DesignEvaluator::evaluate(const DesignPoint& point) const {
  const Impl& m = *impl_;
  Evaluation e;
  e.point = point;
  const std::size_t n = m.space.objectives.size();
  // The summary only: the metrics need no more, and a system step's rank schedule is then read, not copied. (The
  // allocation genes' copy of the experiment that detail() makes is for resolved.toml: the same graph and chip.)
  std::shared_ptr<const PreparedExperiment> prepared;
  ScheduleSummary s;
  try {
    std::vector<int> cn_core;
    std::tie(prepared, cn_core) = placed(point);
    s = prepared->evaluator->summarize(prepared->configured_allocation, cn_core);
  } catch (const UserError& err) {
    e.objectives.assign(n, std::numeric_limits<double>::quiet_NaN());
    e.violation = std::numeric_limits<double>::infinity();
    e.reason = err.what();
    return e;
  }
  std::vector<Metric> metrics = summary_metrics(*prepared, s);
  std::string unassessed;  // why the quality plugin has no value for the point
  if (m.quality) {
    try {
      for (Metric& q : m.quality_metrics_at(point, *prepared)) {
        e.quality.push_back(q.value);
        metrics.push_back(std::move(q));
      }
    } catch (const UserError& err) {
      unassessed = err.what();
      for (const QualityMetric& q : m.quality->metrics) metrics.push_back(Metric{q.key, q.unit, std::nan("")});
    }
  }
  auto value = [&](const std::string& key) {
    for (const Metric& mt : metrics) {
      if (mt.key == key) return mt.value;
    }
    throw InternalError("no metric '" + key + "'");
  };
  for (const Objective& o : m.space.objectives) e.objectives.push_back(o.maximise ? -value(o.key) : value(o.key));
  e.violation = s.capacity_violation;
  e.reason = s.capacity_reason;
  if (!unassessed.empty()) {
    e.violation = std::numeric_limits<double>::infinity();
    e.reason = unassessed;
    return e;
  }
  for (const ConstraintSpec& c : m.spec->constraints) {
    const double v = value(c.key);
    auto excess = [&](double bound, double over, const char* relation) {
      if (over <= 0) return;
      e.violation += over / std::max(std::abs(bound), 1e-300);
      if (!e.reason.empty()) e.reason += "; ";
      e.reason += c.key + " = " + format_number(v) + relation + format_number(bound);
    };
    if (c.max) excess(*c.max, v - *c.max, " > ");
    if (c.min) excess(*c.min, *c.min - v, " < ");
  }
  return e;
}

}  // namespace monet
