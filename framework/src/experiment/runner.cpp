#include "monet/experiment/runner.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <map>
#include <mutex>

#include "monet/arch/estimation.hpp"
#include "monet/experiment/cost_cache.hpp"
#include "monet/training/checkpoint_optimal.hpp"
#include "monet/training/checkpoint_rotor.hpp"
#include "monet/training/offload.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"
#include "../util/parallel.hpp"

namespace monet {

namespace {

/// Allowed cores per operator from the [allocation] rules, restricted to cores that run the operator's kind.
std::vector<std::vector<int>> allowed_cores(const Experiment& e, const Graph& g) {
  const Accelerator& acc = *e.accelerator;
  for (const AllocationRule& r : e.allocation.by_operator) {
    if (!g.find_operator(r.key)) {
      std::vector<std::string> names;
      for (const Operator& op : g.operators()) names.push_back(op.name);
      throw UserError(r.where, "allocation.operator: the workload has no operator '" + r.key + "'" +
                                   did_you_mean(r.key, names));
    }
  }
  auto ids = [&](const AllocationRule& r) {
    std::vector<int> out;
    for (const std::string& n : r.cores) out.push_back(acc.core_index(n));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  std::vector<std::vector<int>> allowed;
  for (const Operator& op : g.operators()) {
    const AllocationRule* rule = nullptr;
    for (const AllocationRule& r : e.allocation.by_operator) {
      if (r.key == op.name) rule = &r;
    }
    if (!rule) {
      for (const AllocationRule& r : e.allocation.by_type) {
        if (r.key == op.type) rule = &r;
      }
    }
    if (!rule) {
      for (const AllocationRule& r : e.allocation.by_kind) {
        if (r.key == to_string(op.kind)) rule = &r;
      }
    }
    std::vector<int> cores;
    if (op.is_view()) {
      allowed.push_back({});  // views run nowhere: they alias their input
      continue;
    }
    if (rule) {
      for (int c : ids(*rule)) {
        const CoreInstance& ci = acc.cores[static_cast<std::size_t>(c)];
        if (!ci.core->runs(op.kind)) {
          throw UserError(rule->where, "core '" + ci.name + "' cannot run " + to_string(op.kind) + " operators such as '" +
                                           op.name + "' (core file " + ci.core->file + " lists op_kinds)");
        }
        cores.push_back(c);
      }
    } else {
      const std::vector<int> base = e.allocation.default_rule ? ids(*e.allocation.default_rule) : [&] {
        std::vector<int> all;
        for (const CoreInstance& ci : acc.cores) all.push_back(ci.id);
        return all;
      }();
      for (int c : base) {
        if (acc.cores[static_cast<std::size_t>(c)].core->runs(op.kind)) cores.push_back(c);
      }
      if (cores.empty()) {
        const SourceLocation where = e.allocation.default_rule ? e.allocation.default_rule->where
                                                               : SourceLocation{e.architecture_file.string()};
        throw UserError(where, "operator '" + op.name + "' (" + to_string(op.kind) +
                                   ") can run on none of the allowed cores: no core lists '" + to_string(op.kind) +
                                   "' in its op_kinds");
      }
    }
    allowed.push_back(std::move(cores));
  }
  return allowed;
}

/// The objectives every run reports until the experiment names its own.
DesignSpace default_space() {
  DesignSpace s;
  s.objectives = {{"latency_cycles", "cycles"}, {"energy_pj", "pJ"}};
  return s;
}

/// Per CN, the core [allocation.group] fixes (-1: none); empty when the experiment fixes none.
std::vector<int> group_cores(const Experiment& e, const Graph& g, const CNGraph& cns) {
  if (e.allocation.by_group.empty()) return {};
  std::vector<int> out(cns.nodes.size(), -1);
  for (const AllocationRule& r : e.allocation.by_group) {
    const auto hash = r.key.rfind("#g");
    const bool one = hash != std::string::npos && hash + 2 < r.key.size() &&
                     std::all_of(r.key.begin() + static_cast<std::ptrdiff_t>(hash) + 2, r.key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const std::string name = one ? r.key.substr(0, hash) : r.key;
    const Operator* op = g.find_operator(name);
    if (!op) throw UserError(r.where, "allocation.group: the workload has no operator '" + name + "'");
    const int group = one ? std::stoi(r.key.substr(hash + 2)) : -1;
    const int core = e.accelerator->core_index(r.cores.front());
    bool any = false;
    for (const ComputationNode& cn : cns.nodes) {
      if (cn.op != op->id || (group >= 0 && cn.group != group)) continue;
      out[static_cast<std::size_t>(cn.id)] = core;
      any = true;
    }
    if (!any) throw UserError(r.where, "allocation.group: operator '" + name + "' has no inter-core group " + std::to_string(group));
  }
  return out;
}

class KernelSearchContext final : public SearchContext {
 public:
  KernelSearchContext(const PreparedExperiment& prepared, const ProgressCallback& progress)
      : prepared_(prepared), space_(default_space()), progress_(progress) {}

  [[nodiscard]] const DesignSpace& space() const override { return space_; }
  [[nodiscard]] std::uint64_t seed() const override { return prepared_.experiment.seed; }
  void plan(std::size_t total) override { planned_ = total; }

  [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points) override {
    for (const DesignPoint& p : points) {
      ensure(p.genes.size() == space_.genes.size(), "search plugin proposed a point of the wrong size");
    }
    std::vector<Evaluation> out(points.size());
    detail::parallel_for(std::size_t{0}, points.size(), [&](std::size_t i) {
      const ScheduleSummary s =
          prepared_.evaluator->evaluate(prepared_.configured_allocation, prepared_.configured_cn_core).summary;
      Evaluation& e = out[i];
      e.point = points[i];
      e.objectives = {static_cast<double>(s.latency_cycles), s.energy_pj()};
      if (s.over_capacity) {
        e.violation = 1;
        e.reason = "a core holds more than its capacity";
      }
    });
    count_ += points.size();
    if (progress_) progress_(count_, std::max(planned_, count_));
    return out;
  }

  [[nodiscard]] std::size_t count() const { return count_; }

 private:
  const PreparedExperiment& prepared_;
  DesignSpace space_;
  const ProgressCallback& progress_;
  std::size_t planned_ = 0;
  std::size_t count_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------- PreparationCache

struct PreparationCache::Impl {
  std::mutex mutex;
  std::map<std::string, std::shared_future<GraphPtr>> graphs;
  std::map<std::string, std::shared_future<CheckpointedStep>> steps;
  std::map<std::string, std::shared_future<std::shared_ptr<const void>>> derived;
  std::map<std::string, std::shared_future<std::shared_ptr<const CNGraph>>> cns;
  std::map<std::string, std::shared_future<std::shared_ptr<const ScheduleResult>>> schedules;
  std::size_t built = 0;
};

PreparationCache::PreparationCache() : impl_(std::make_unique<Impl>()), costs_(std::make_shared<CostCache>()) {}
PreparationCache::~PreparationCache() = default;

namespace {
/// The entry for `key`, computed once by the first caller; the others wait for it (errors are shared too).
template <class T, class F>
T once(std::mutex& mutex, std::map<std::string, std::shared_future<T>>& map, const std::string& key, F&& compute,
       std::size_t* built = nullptr) {
  std::promise<T> promise;
  std::shared_future<T> future;
  bool mine = false;
  {
    std::lock_guard lock(mutex);
    auto it = map.find(key);
    if (it == map.end()) {
      future = promise.get_future().share();
      map.emplace(key, future);
      mine = true;
      if (built) ++*built;
    } else {
      future = it->second;
    }
  }
  if (mine) {
    try {
      promise.set_value(compute());
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

std::string params_text(const PluginChoice& c) {
  std::string s = c.name() + "{";
  for (const auto& [name, entry] : c.params.entries()) s += name + "=" + to_string(entry.value) + ";";
  return s + "}";
}
}  // namespace

namespace {
/// [training.checkpoint] on the whole training step. The optimal policy costs a block's recomputation with the
/// accelerator when asked to (each recompute operator on the core whose cost model finds it cheapest, as a whole
/// operator) and measures memory after mixed precision, as the step will be run.
CheckpointedStep checkpoint_step(const Experiment& e, const Registry& registry, const GraphPtr& g) {
  const CheckpointPolicy& policy = e.training.checkpoint;
  if (policy.kind != CheckpointPolicy::Kind::optimal) return {apply_checkpointing(g, policy), nullptr};
  GraphFinish finish;
  if (e.precision) finish = [&](const GraphPtr& x) { return apply_precision(*x, *e.precision); };
  RecomputeCost cost;
  if (policy.cost != "macs") {
    require_estimates(*e.accelerator);
    std::vector<std::pair<std::shared_ptr<const CostModel>, const Core*>> cores;
    for (const CoreInstance& c : e.accelerator->cores) {
      const PluginChoice& choice = e.cost_models.at(e.core_cost_model[static_cast<std::size_t>(c.id)]);
      cores.emplace_back(registry.create<CostModel>(*choice.plugin, choice.params), c.core.get());
    }
    const bool latency = policy.cost == "latency";
    cost = [cores, latency](const Graph& graph, const Operator& op) {
      const std::vector<Range> tile = op.full_ranges();
      double best = -1;
      for (const auto& [model, core] : cores) {
        try {
          const Cost c = model->evaluate(CostQuery{graph, op, tile, *core});
          const double v = latency ? static_cast<double>(c.cycles) : c.energy_pj;
          if (best < 0 || v < best) best = v;
        } catch (const UserError&) {
          // this core cannot run the operator
        }
      }
      return std::max(best, 0.0);
    };
  }
  auto optimal = std::make_shared<OptimalCheckpoint>();
  GraphPtr step;
  if (e.checkpoint_solver.name == "rotor") {  // nested recomputation: a step of its own, its top-level runs as regions
    optimal->regions = rotor_regions(g, policy, cost, finish, &optimal->solve, &step);
  } else {
    optimal->regions = optimal_regions(g, policy, cost, finish, e.checkpoint_solver, &optimal->solve);
    step = apply_checkpointing(*g, optimal->regions);
  }
  for (CheckpointRegion& r : optimal->regions) {  // the same regions, by the operator ids of the new graph
    for (OperatorId& op : r.operators) op = step->find_operator(g->op(op).name)->id;
  }
  return {std::move(step), std::move(optimal)};
}
}  // namespace

GraphPtr PreparationCache::graph(const std::string& key, const std::function<GraphPtr()>& compute) {
  return once(impl_->mutex, impl_->graphs, key, compute, &impl_->built);
}

CheckpointedStep PreparationCache::step(const std::string& key, const std::function<CheckpointedStep()>& compute) {
  return once(impl_->mutex, impl_->steps, key, compute);
}

std::shared_ptr<const void> PreparationCache::derived_erased(
    const std::string& key, const std::function<std::shared_ptr<const void>()>& compute) {
  return once(impl_->mutex, impl_->derived, key, compute);
}

std::shared_ptr<const CNGraph> PreparationCache::cns(const std::string& key, const std::function<CNGraph()>& compute) {
  return once(impl_->mutex, impl_->cns, key, [&] { return std::make_shared<const CNGraph>(compute()); });
}

std::shared_ptr<const ScheduleResult> PreparationCache::schedule(const std::string& key,
                                                                 const std::function<ScheduleResult()>& compute) {
  return once(impl_->mutex, impl_->schedules, key, [&] { return std::make_shared<const ScheduleResult>(compute()); });
}

std::size_t PreparationCache::graphs_built() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->built;
}

GraphPtr read_workload_graph(const Experiment& e) {
  auto frontend = Registry::create<WorkloadFrontend>(*e.frontend.plugin, e.frontend.params);
  spdlog::info("reading workload {}", e.workload_file.string());
  return e.workload_document ? frontend->load_document(*e.workload_document) : frontend->load(e.workload_file);
}

PreparedExperiment prepare(Experiment e, const Registry& registry, PreparationCache* cache) {
  PreparedExperiment p;
  PreparationCache own;
  if (!cache) cache = &own;
  std::string forward_key = e.workload_file.string() + "|" + params_text(e.frontend);
  for (const auto& [path, value] : e.workload_set) forward_key += "|set:" + path + "=" + value;  // genes of the file
  p.forward = cache->graph(forward_key, [&] { return read_workload_graph(e); });
  std::string graph_key = forward_key + "|" + e.training_mode;
  if (e.training_mode == "training") {
    graph_key += "|" + e.training.loss + "|" + std::to_string(e.training.micro_batches) + "|" + params_text(*e.backward) +
                 "|" + params_text(*e.optimizer) + "|checkpoint:" + e.training.checkpoint.text() + "," +
                 std::string(to_string(e.training.checkpoint.semantics)) +
                 (e.training.checkpoint.kind == CheckpointPolicy::Kind::optimal ? "," + e.checkpoint_solver.text() : "");
  }
  if (e.precision) graph_key += "|" + precision_toml(*e.precision);
  if (e.training_mode == "training" && e.training.checkpoint.kind == CheckpointPolicy::Kind::optimal &&
      e.training.checkpoint.cost != "macs") {
    // The optimal policy's choice depends on what recomputation costs on these cores.
    for (const CoreInstance& c : e.accelerator->cores) {
      const PluginChoice& m = e.cost_models.at(e.core_cost_model[static_cast<std::size_t>(c.id)]);
      graph_key += "|" + std::to_string(core_fingerprint(*c.core)) + ":" +
                   std::to_string(model_fingerprint(m.info(), m.params));
    }
  }
  CheckpointedStep step{p.forward, nullptr};
  if (e.training_mode == "training") {
    // Cached on its own: the optimal policy's choice (and how it was solved) comes with the graph.
    step = cache->step(graph_key, [&] {
      auto backward = registry.create<BackwardGenerator>(*e.backward->plugin, e.backward->params);
      GraphPtr g = backward->generate(*p.forward, e.training);
      auto optimizer = registry.create<OptimizerModel>(*e.optimizer->plugin, e.optimizer->params);
      g = optimizer->apply(*g, e.training);
      CheckpointedStep s = checkpoint_step(e, registry, g);  // on the whole step: any backward generator's graph
      spdlog::info("training step: {} operators", s.graph->operators().size());
      return s;
    });
    p.optimal_checkpoint = step.optimal;
  }
  p.graph = cache->graph(graph_key, [&] {
    GraphPtr g = step.graph;
    if (e.precision) g = apply_precision(*g, *e.precision);
    return g;
  });
  p.memory = cache->derived<TrainingMemory>(graph_key, [&] { return training_memory(*p.graph); });

  std::map<std::string, std::shared_ptr<const CostModel>> models;
  for (const auto& [name, choice] : e.cost_models) {
    models[name] = registry.create<CostModel>(*choice.plugin, choice.params);
  }
  std::vector<CoreModel> per_core;
  require_estimates(*e.accelerator);
  for (const CoreInstance& c : e.accelerator->cores) {
    const std::string& name = e.core_cost_model[static_cast<std::size_t>(c.id)];
    const auto& model = models.at(name);
    model->check_core(*c.core);
    const PluginChoice& choice = e.cost_models.at(name);
    per_core.push_back(CoreModel{model, model_fingerprint(choice.info(), choice.params)});
  }

  std::vector<std::vector<int>> allowed = allowed_cores(e, *p.graph);
  p.configured_allocation.assign(p.graph->operators().size(), -1);

  // Fusion strategies read the cores (their number and names for inter-core splits, their capacities for
  // automatic stacks): those are part of the key, not the rest of the hardware.
  std::string cn_key = graph_key + "|" + params_text(e.fusion) + "|allowed:";
  for (const auto& cores : allowed) {
    for (int c : cores) cn_key += std::to_string(c) + ",";
    cn_key += ";";
  }
  for (const CoreInstance& c : e.accelerator->cores) {
    cn_key += "|" + c.name + ":" + std::to_string(c.core->resident_capacity_bits());
    for (OperandSlot s : {OperandSlot::I1, OperandSlot::I2, OperandSlot::O}) {
      const int top = c.core->top_onchip_index(s);
      cn_key += "," + std::to_string(top < 0 ? 0 : c.core->memories[static_cast<std::size_t>(top)].size_bits);
    }
  }
  const auto cns = cache->cns(cn_key, [&] {
    auto fusion = registry.create<FusionStrategy>(*e.fusion.plugin, e.fusion.params);
    std::vector<ComputationNode> nodes;
    try {
      nodes = fusion->partition(*p.graph, *e.accelerator, allowed);
    } catch (const UserError& err) {
      if (err.where().known()) throw;
      throw UserError(e.fusion.where, err.message());  // the kernel's tile limit: the [fusion] rules asked for it
    }
    // Before their dependencies are derived (the costly part): see docs/reliability.md#limits.
    constexpr std::size_t kMaxComputationNodes = 1'000'000;
    if (nodes.size() > kMaxComputationNodes) {
      throw UserError(e.fusion.where, "fusion '" + e.fusion.name() + "' cuts the workload into " +
                                          with_thousands(static_cast<long long>(nodes.size())) +
                                          " computation nodes, more than the " +
                                          with_thousands(static_cast<long long>(kMaxComputationNodes)) +
                                          " monet schedules: use fewer, larger tiles");
    }
    return connect_tiles(*p.graph, std::move(nodes));
  });
  // Once per run; a search prepares thousands of variants, so there it is a debug line.
  spdlog::log(cache == &own ? spdlog::level::info : spdlog::level::debug, "{} operators, {} computation nodes, {} edges",
              p.graph->operators().size(), cns->nodes.size(), cns->edges.size());
  p.configured_cn_core = group_cores(e, *p.graph, *cns);
  // Offloading moves data, not operators: the scheduler pages the chosen saved activations out and back.
  std::vector<bool> offloaded;
  if (e.training_mode == "training" && e.offload.active()) offloaded = offload_mask(*p.graph, offloaded_tensors(*p.graph, e.offload));
  std::string model_fingerprints;  // for the schedule memo's key below
  for (const CoreModel& m : per_core) model_fingerprints += "|model:" + std::to_string(m.fingerprint);
  auto evaluator = std::make_shared<Evaluator>(p.graph, e.accelerator, std::move(per_core), cns, std::move(allowed),
                                               e.schedule, cache == &own ? nullptr : cache->costs(), std::move(offloaded));
  if (e.system) {
    auto model = registry.create<ParallelismModel>(*e.parallelism_model->plugin, e.parallelism_model->params);
    const Parallelism& par = e.parallelism;
    ParallelLayout layout{par.tensor,          par.pipeline,   par.data,   par.virtual_pipeline,
                          par.sequence_parallel, par.zero_stage, par.context};
    TensorParallelPlan plan;
    try {
      plan = model->plan(*p.graph, layout);
    } catch (const UserError& err) {
      if (err.where().known()) throw;
      throw UserError(e.parallelism_model->where, err.message());
    }
    const auto blocks = cache->derived<PipelineBlocks>(graph_key, [&] { return pipeline_blocks(*p.graph); });
    SystemStep step = make_system_step(*e.system, layout, par.global_batch, std::move(plan), par.where, *p.graph,
                                       *blocks, *e.accelerator,
                                       PipelineSplit{par.account_for_embedding, par.account_for_loss});
    step.overlap_grad_reduce = par.overlap_grad_reduce;
    step.zero_overlap_comm = par.zero_overlap_comm;
    step.overlap_p2p_comm = par.overlap_p2p_comm;
    step.stack = par.stack == "deepspeed" ? ParallelStack::deepspeed : ParallelStack::megatron;
    step.optimizer_instances = par.optimizer_instances;
    evaluator->set_system_step(std::make_shared<const SystemStep>(std::move(step)));
    if (cache != &own) {
      // What the chip's schedule depends on besides the allocation: the CNs (graph, fusion, cores), the whole
      // hardware (the file and its changes), the cost models with their parameters, the scheduler's options.
      std::string key = cn_key + "|arch:" + e.architecture_file.string();
      for (const auto& [path, value] : e.architecture_set) key += "|" + path + "=" + value;
      for (const std::string& path : e.architecture_unset) key += "|-" + path;
      key += model_fingerprints;
      const ScheduleOptions& o = e.schedule;
      key += std::string("|options:") + (o.peak_offchip_bandwidth ? "1" : "0") + (o.layer_barrier ? "1" : "0") +
             (o.whole_tile_transfers ? "1" : "0") + (o.sources_from_offchip ? "1" : "0") + (o.padded_tiles ? "1" : "0");
      key += "|offload:" + e.offload.text();
      evaluator->set_schedule_memo(
          [cache](const std::string& k, const std::function<ScheduleResult()>& f) { return cache->schedule(k, f); },
          std::move(key));
    }
  }
  p.evaluator = std::move(evaluator);
  p.search = registry.create<SearchAlgorithm>(*e.search.plugin, e.search.params);
  p.experiment = std::move(e);
  return p;
}

RunResult run(const PreparedExperiment& prepared, const ProgressCallback& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSearchContext context(prepared, progress);
  RunResult r;
  r.evaluations = prepared.search->run(context);
  ensure(!r.evaluations.empty(), "search plugin '" + prepared.experiment.search.name() + "' returned no evaluation");
  r.evaluation_count = context.count();
  r.best_point = r.evaluations.front().point;
  r.best = prepared.evaluator->evaluate(prepared.configured_allocation, prepared.configured_cn_core);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace monet
