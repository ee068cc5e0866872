#include "monet/plugin/interfaces.hpp"

namespace monet {

// Key functions: the typeinfo and vtables of the interfaces live in the kernel, shared by every plugin.
WorkloadFrontend::~WorkloadFrontend() = default;
BackwardGenerator::~BackwardGenerator() = default;
OptimizerModel::~OptimizerModel() = default;
CostModel::~CostModel() = default;
void CostModel::check_core(const Core& /*core*/) const {}
OperandTraffic CostModel::footprint_bits(const CostQuery& q) const { return operand_bits(q.graph, q.op, q.tile); }
FusionStrategy::~FusionStrategy() = default;
SearchStopped::SearchStopped() : std::runtime_error("search stopped by the user") {}
SearchStopped::~SearchStopped() = default;
SearchContext::~SearchContext() = default;
SearchAlgorithm::~SearchAlgorithm() = default;
Estimator::~Estimator() = default;
ParallelismModel::~ParallelismModel() = default;

}  // namespace monet
