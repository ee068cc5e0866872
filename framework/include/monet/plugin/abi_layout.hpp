#pragma once
// The layout table of the plugin ABI and the tag computed from it (monet/plugin/abi.hpp says how). It includes
// every plugin kind's header, so it is for the kernel and for the one source file monet_add_plugin adds to each
// plugin library (cmake/plugin_abi_tag.cpp), not for a plugin's own sources.
#include "monet/config/toml_reader.hpp"
#include "monet/plugin/abi.hpp"
#include "monet/plugin/backward_generator.hpp"
#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/estimator.hpp"
#include "monet/plugin/frontend.hpp"
#include "monet/plugin/fusion_strategy.hpp"
#include "monet/plugin/optimizer_model.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/plugin/quality_model.hpp"
#include "monet/plugin/search_algorithm.hpp"

namespace monet {

// Every type a plugin receives, returns or derives from. Keep in sync with tests/unit/test_abi_layout.cpp.
#define MONET_ABI_TYPES(X)                                                                                  \
  X(SourceLocation) X(Bounds) X(ParamSpec) X(ParamValues) X(PluginInfo) X(Plugin) X(Range) X(AffineExpr)     \
  X(LoopDim) X(Operand) X(Operator) X(Tensor) X(Graph) X(PortAllocation) X(Port) X(MemoryLevel) X(ArrayDim) \
  X(OperationalArray) X(Unrolling) X(MappingEntry) X(EstimatorChoice) X(Core) X(CoreInstance)               \
  X(OffChipMemory) X(Link) X(Accelerator) X(Residency) X(CostQuery) X(Cost) X(OperandTraffic)              \
  X(ComputationNode) X(Precision) X(CheckpointPolicy) X(TrainingSettings) X(Gene) X(DesignPoint)            \
  X(Evaluation) X(DesignSpace) X(MemoryEstimateQuery) X(MemoryEstimate) X(ArrayEstimateQuery)               \
  X(ArrayEstimate) X(WorkloadFrontend) X(BackwardGenerator) X(OptimizerModel) X(CostModel)                  \
  X(FusionStrategy) X(SearchContext) X(SearchAlgorithm) X(Estimator) X(UserError) X(ParallelLayout)      \
  X(TensorParallelComm) X(TensorParallelPlan) X(ParallelismModel) X(TomlDocument) \
  X(QualityMetric) X(QualityQuery) X(QualityModel)

#define MONET_ABI_ENTRY(T) AbiLayoutEntry{#T, sizeof(T), alignof(T)},
inline constexpr AbiLayoutEntry kAbiLayout[] = {MONET_ABI_TYPES(MONET_ABI_ENTRY)};
#undef MONET_ABI_ENTRY

/// The ABI tag of the headers being compiled.
inline constexpr std::uint64_t kPluginAbiTag = detail::abi_fingerprint(kPluginApiVersion, kAbiLayout);

}  // namespace monet
