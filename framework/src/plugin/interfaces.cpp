#include "monet/plugin/interfaces.hpp"

#include "monet/config/toml_reader.hpp"

namespace monet {

// Key functions: the typeinfo and vtables of the interfaces live in the kernel, shared by every plugin.
WorkloadFrontend::~WorkloadFrontend() = default;
GraphPtr WorkloadFrontend::load_document(const TomlDocument& doc) const {
  throw UserError(SourceLocation{doc.file()}, "this workload frontend reads no TOML document: [workload.set] cannot "
                                              "change its keys; leave [workload] plugin out to have the file's own "
                                              "frontend read it");
}
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
QualityModel::~QualityModel() = default;

}  // namespace monet
