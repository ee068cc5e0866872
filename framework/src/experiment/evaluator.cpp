#include "monet/experiment/evaluator.hpp"

#include <map>

namespace monet {

Evaluator::Evaluator(GraphPtr graph, AcceleratorPtr accelerator,
                     std::vector<std::shared_ptr<const CostModel>> core_models, CNGraph cns, DesignSpace space)
    : graph_(std::move(graph)),
      accelerator_(std::move(accelerator)),
      core_models_(std::move(core_models)),
      cns_(std::move(cns)),
      space_(std::move(space)) {
  // Cores of the same type costed by the same model share cache entries.
  std::map<std::pair<const Core*, const CostModel*>, int> types;
  for (std::size_t c = 0; c < accelerator_->cores.size(); ++c) {
    const auto key = std::make_pair(accelerator_->cores[c].core.get(), core_models_[c].get());
    auto it = types.emplace(key, static_cast<int>(types.size())).first;
    core_type_.push_back(it->second);
  }
}

Cost Evaluator::cost(const ComputationNode& cn, int core) const {
  const Operator& op = graph_->op(cn.op);
  const auto c = static_cast<std::size_t>(core);
  return cache_.get(tile_signature(*graph_, op, cn.ranges, core_type_[c]), [&] {
    const CostQuery q{*graph_, op, cn.ranges, *accelerator_->cores[c].core};
    return core_models_[c]->evaluate(q);
  });
}

ScheduleResult Evaluator::evaluate(const DesignPoint& point) const {
  const CostFunction fn = [this](const ComputationNode& cn, int core) { return cost(cn, core); };
  std::vector<int> fixed = point.allocation;
  fixed.resize(graph_->operators().size(), -1);
  const ScheduleInputs in{*graph_, cns_, *accelerator_, space_.allowed_cores, fixed, fn};
  return schedule(in);
}

}  // namespace monet
