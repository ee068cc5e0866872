#include "monet/experiment/evaluator.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include "../util/parallel.hpp"

namespace monet {

Evaluator::Evaluator(GraphPtr graph, AcceleratorPtr accelerator, std::vector<CoreModel> core_models,
                     std::shared_ptr<const CNGraph> cns, std::vector<std::vector<int>> allowed_cores,
                     ScheduleOptions options, std::shared_ptr<CostCache> cache, std::vector<bool> offloaded)
    : options_(options),
      graph_(std::move(graph)),
      accelerator_(std::move(accelerator)),
      core_models_(std::move(core_models)),
      cns_(std::move(cns)),
      allowed_cores_(std::move(allowed_cores)),
      cache_(cache ? std::move(cache) : std::make_shared<CostCache>()),
      offloaded_(std::move(offloaded)) {
  std::map<const Core*, std::array<Variant, kVariants>> built;
  for (const CoreInstance& ci : accelerator_->cores) {
    auto it = built.find(ci.core.get());
    if (it == built.end()) {
      std::array<Variant, kVariants> v;
      for (int k = 0; k < kVariants; ++k) {
        StreamedOperands s;
        for (int b = 0; b < 3; ++b) s.slot[b] = ((k % 8) >> b) & 1;
        s.onchip_shift = k / 8;
        v[static_cast<std::size_t>(k)].core =
            k == 0 ? ci.core : std::make_shared<const Core>(with_offchip(*ci.core, accelerator_->offchip, s));
        v[static_cast<std::size_t>(k)].fingerprint = core_fingerprint(*v[static_cast<std::size_t>(k)].core);
      }
      it = built.emplace(ci.core.get(), v).first;
    }
    variants_.push_back(it->second);
  }
  if (options_.padded_tiles) {
    // Per operator and dimension, the largest tile; every tile is costed with that extent from its start.
    std::map<OperatorId, std::vector<std::int64_t>> largest;
    for (const ComputationNode& cn : cns_->nodes) {
      auto& l = largest[cn.op];
      l.resize(cn.ranges.size(), 0);
      for (std::size_t d = 0; d < cn.ranges.size(); ++d) l[d] = std::max(l[d], cn.ranges[d].size());
    }
    costed_ranges_.resize(cns_->nodes.size());
    for (const ComputationNode& cn : cns_->nodes) {
      std::vector<Range> r = cn.ranges;
      const auto& l = largest[cn.op];
      for (std::size_t d = 0; d < r.size(); ++d) r[d].end = r[d].begin + l[d];
      costed_ranges_[static_cast<std::size_t>(cn.id)] = std::move(r);
    }
  }
}

std::span<const Range> Evaluator::costed_ranges(const ComputationNode& cn) const {
  const auto i = static_cast<std::size_t>(cn.id);
  if (i < costed_ranges_.size() && !costed_ranges_[i].empty()) return costed_ranges_[i];
  return cn.ranges;
}

Cost Evaluator::cost(const ComputationNode& cn, int core, const StreamedOperands& streamed) const {
  const Operator& op = graph_->op(cn.op);
  const auto c = static_cast<std::size_t>(core);
  const int mask = streamed.mask();
  const int variant = mask == 0 ? 0 : mask + 8 * std::clamp(streamed.onchip_shift, 0, StreamedOperands::kMaxShift);
  const Variant& v = variants_[c][static_cast<std::size_t>(variant)];
  CostQuery q{*graph_, op, costed_ranges(cn), *v.core};
  q.offchip_sharers = mask != 0 ? std::max(1, cn.groups) : 1;  // siblings streaming through the same port
  const TileSignature key = cost_key(q, v.fingerprint, core_models_[c].fingerprint);
  return cache_->get(key, [&] { return core_models_[c].model->evaluate(q); });
}

void Evaluator::prewarm() const {
  std::call_once(warmed_, [this] {
    // The queries the scheduler starts with: each CN on each allowed core, with the operands that always stream
    // there (a fusion strategy's streamed CNs, slots whose top memory is off chip). One per distinct key.
    struct Query {
      const ComputationNode* cn;
      int core;
      StreamedOperands streamed;
    };
    std::vector<Query> queries;
    std::set<TileSignature> seen;
    for (const ComputationNode& cn : cns_->nodes) {
      const Operator& op = graph_->op(cn.op);
      if (op.is_view()) continue;
      const std::vector<int>& allowed = allowed_cores_[static_cast<std::size_t>(cn.op)];
      // A group the scheduler places by rule runs on that core only; any other CN may run on every allowed one.
      std::span<const int> cores(allowed);
      if (group_core(cn, allowed) >= 0) cores = cores.subspan(static_cast<std::size_t>(cn.group), 1);
      for (int c : cores) {
        const Core& core = *accelerator_->cores[static_cast<std::size_t>(c)].core;
        StreamedOperands s;
        for (const Operand& o : op.operands) {
          s.slot[static_cast<int>(o.slot)] = cn.streamed || core.lives_offchip(o.slot);
        }
        const int mask = s.mask();
        const Variant& v = variants_[static_cast<std::size_t>(c)][static_cast<std::size_t>(mask)];
        CostQuery q{*graph_, op, costed_ranges(cn), *v.core};
        q.offchip_sharers = mask != 0 ? std::max(1, cn.groups) : 1;
        const TileSignature key = cost_key(q, v.fingerprint, core_models_[static_cast<std::size_t>(c)].fingerprint);
        if (!cache_->contains(key) && seen.insert(key).second) queries.push_back(Query{&cn, c, s});
      }
    }
    detail::parallel_for(std::size_t{0}, queries.size(), [&](std::size_t i) {
      try {
        (void)cost(*queries[i].cn, queries[i].core, queries[i].streamed);
      } catch (const UserError&) {
        // cached as "does not fit"; the scheduler decides what to do
      }
    });
  });
}

ScheduleResult Evaluator::schedule_now(const std::vector<int>& allocation, const std::vector<int>& cn_core,
                                       bool memory_by_use) const {
  prewarm();
  const CostFunction fn = [this](const ComputationNode& cn, int core, const StreamedOperands& s) { return cost(cn, core, s); };
  std::vector<int> fixed = allocation;
  fixed.resize(graph_->operators().size(), -1);
  ScheduleInputs in{*graph_, *cns_, *accelerator_, allowed_cores_, fixed, fn};
  in.options = options_;
  if (!cn_core.empty()) in.cn_core = &cn_core;
  in.memory_by_use = memory_by_use;
  if (!offloaded_.empty()) in.offloaded = &offloaded_;
  return schedule(in);
}

std::shared_ptr<const ScheduleResult> Evaluator::memoized(const std::vector<int>& allocation,
                                                          const std::vector<int>& cn_core, bool memory_by_use) const {
  std::string key = memo_key_ + "|alloc:";
  for (std::size_t op = 0; op < graph_->operators().size(); ++op) {
    key += std::to_string(op < allocation.size() ? allocation[op] : -1) + ",";
  }
  key += "|cn:";
  for (int c : cn_core) key += std::to_string(c) + ",";
  key += memory_by_use ? "|by_use" : "";
  // The costs' warm-up (in schedule_now) only where a schedule is computed: most points reuse one.
  return memo_(key, [&] { return schedule_now(allocation, cn_core, memory_by_use); });
}

ScheduleResult Evaluator::evaluate(const std::vector<int>& allocation, const std::vector<int>& cn_core,
                                   bool memory_by_use) const {
  ScheduleResult r = system_step_ && memo_ ? *memoized(allocation, cn_core, memory_by_use)
                                           : schedule_now(allocation, cn_core, memory_by_use);
  if (system_step_) finish_system_step(*system_step_, *graph_, *cns_, *accelerator_, r, r.summary);
  return r;
}

ScheduleSummary Evaluator::summarize(const std::vector<int>& allocation, const std::vector<int>& cn_core) const {
  if (!system_step_ || !memo_) return evaluate(allocation, cn_core, false).summary;
  const std::shared_ptr<const ScheduleResult> shared = memoized(allocation, cn_core, false);
  ScheduleSummary s = shared->summary;
  finish_system_step(*system_step_, *graph_, *cns_, *accelerator_, *shared, s);
  return s;
}

}  // namespace monet
