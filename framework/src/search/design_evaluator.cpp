#include "monet/search/design_evaluator.hpp"

#include "design_evaluator_impl.hpp"

namespace monet {


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
