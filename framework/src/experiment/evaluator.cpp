#include "monet/experiment/evaluator.hpp"

#include <cstdlib>
#include <algorithm>
#include <map>

namespace monet {

Evaluator::Evaluator(GraphPtr graph, AcceleratorPtr accelerator,
                     std::vector<std::shared_ptr<const CostModel>> core_models, CNGraph cns,
                     std::vector<std::vector<int>> allowed_cores,
                     ScheduleOptions options)
    : options_(options),
      graph_(std::move(graph)),
      accelerator_(std::move(accelerator)),
      core_models_(std::move(core_models)),
      cns_(std::move(cns)),
      allowed_cores_(std::move(allowed_cores)) {
  // Cores of the same type costed by the same model share cache entries.
  std::map<std::pair<const Core*, const CostModel*>, int> types;
  for (std::size_t c = 0; c < accelerator_->cores.size(); ++c) {
    const auto key = std::make_pair(accelerator_->cores[c].core.get(), core_models_[c].get());
    auto it = types.emplace(key, static_cast<int>(types.size())).first;
    core_type_.push_back(it->second);
    // A core may map operators differently by name ([mapping.<name>]): identical loop nests of two operators
    // then must not share a cached cost.
    const Core& core = *accelerator_->cores[c].core;
    std::vector<int> entries;
    for (const Operator& op : graph_->operators()) {
      const MappingEntry* m = core.mapping_for(op.name, op.type);
      entries.push_back(m ? static_cast<int>(m - core.mappings.data()) : -1);
    }
    mapping_entry_.push_back(std::move(entries));
  }
  std::map<const Core*, std::array<std::shared_ptr<const Core>, kVariants>> built;
  for (const CoreInstance& ci : accelerator_->cores) {
    auto it = built.find(ci.core.get());
    if (it == built.end()) {
      std::array<std::shared_ptr<const Core>, kVariants> v;
      v[0] = ci.core;
      for (int k = 1; k < kVariants; ++k) {
        StreamedOperands s;
        for (int b = 0; b < 3; ++b) s.slot[b] = ((k % 8) >> b) & 1;
        s.onchip_shift = k / 8;
        v[static_cast<std::size_t>(k)] = std::make_shared<const Core>(with_offchip(*ci.core, accelerator_->offchip, s));
      }
      it = built.emplace(ci.core.get(), v).first;
    }
    variants_.push_back(it->second);
  }
}

Cost Evaluator::cost(const ComputationNode& cn, int core, const StreamedOperands& streamed) const {
  const Operator& op = graph_->op(cn.op);
  const auto c = static_cast<std::size_t>(core);
  const int mask = streamed.mask();
  const int variant = mask == 0 ? 0 : mask + 8 * std::clamp(streamed.onchip_shift, 0, StreamedOperands::kMaxShift);
  const int sharers = mask != 0 ? std::max(1, cn.groups) : 1;  // siblings streaming through the same port
  TileSignature key = tile_signature(*graph_, op, cn.ranges, core_type_[c] * kVariants + variant);
  key.push_back(sharers);
  key.push_back(mapping_entry_[c][static_cast<std::size_t>(cn.op)]);
  return cache_.get(key, [&] {
    CostQuery q{*graph_, op, cn.ranges, *variants_[c][static_cast<std::size_t>(variant)]};
    q.offchip_sharers = sharers;
    return core_models_[c]->evaluate(q);
  });
}

ScheduleResult Evaluator::evaluate(const std::vector<int>& allocation) const {
  const CostFunction fn = [this](const ComputationNode& cn, int core, const StreamedOperands& s) { return cost(cn, core, s); };
  std::vector<int> fixed = allocation;
  fixed.resize(graph_->operators().size(), -1);
  ScheduleInputs in{*graph_, cns_, *accelerator_, allowed_cores_, fixed, fn};
  in.options = options_;
  return schedule(in);
}

}  // namespace monet
