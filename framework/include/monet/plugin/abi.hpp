#pragma once
// The plugin ABI tag: a fingerprint of the layout (size and alignment) of every type that crosses the
// kernel/plugin boundary, of the C++ ABI and of the plugin API version. A plugin library records the tag of the
// headers it was compiled with (MONET_EXPORT_PLUGINS); the kernel refuses a library whose tag differs from its
// own, so a layout change that was not accompanied by a kPluginApiVersion bump cannot corrupt memory silently.
// The unit test AbiLayout.* pins the table below to the API version: changing a struct's size fails it until
// kPluginApiVersion is bumped and the new table recorded. (Added virtual functions change no size: bump by hand.)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "monet/plugin/interfaces.hpp"

namespace monet {

/// Bumped whenever an interface in monet/plugin or a type it passes changes incompatibly.
/// 3: the ABI tag in MonetPluginLibrary (checked at load); exported Bounds::contains and Link::connects.
/// 4: CheckpointPolicy and TrainingSettings grew (the optimal and blocks policies: budget, cost, blocks);
///    SearchContext hands out seed points (checkpoint genes) and distributes evaluation over MPI ranks.
inline constexpr std::uint32_t kPluginApiVersion = 4;

struct AbiLayoutEntry {
  std::string_view name;
  std::size_t size;
  std::size_t align;
};

// Every type a plugin receives, returns or derives from. Keep in sync with tests/unit/test_abi_layout.cpp.
#define MONET_ABI_TYPES(X)                                                                                  \
  X(SourceLocation) X(Bounds) X(ParamSpec) X(ParamValues) X(PluginInfo) X(Plugin) X(Range) X(AffineExpr)     \
  X(LoopDim) X(Operand) X(Operator) X(Tensor) X(Graph) X(PortAllocation) X(Port) X(MemoryLevel) X(ArrayDim) \
  X(OperationalArray) X(Unrolling) X(MappingEntry) X(EstimatorChoice) X(Core) X(CoreInstance)               \
  X(OffChipMemory) X(Link) X(Accelerator) X(Residency) X(CostQuery) X(Cost) X(OperandTraffic)              \
  X(ComputationNode) X(Precision) X(CheckpointPolicy) X(TrainingSettings) X(Gene) X(DesignPoint)            \
  X(Evaluation) X(DesignSpace) X(MemoryEstimateQuery) X(MemoryEstimate) X(ArrayEstimateQuery)               \
  X(ArrayEstimate) X(WorkloadFrontend) X(BackwardGenerator) X(OptimizerModel) X(CostModel)                  \
  X(FusionStrategy) X(SearchContext) X(SearchAlgorithm) X(Estimator) X(UserError)

#define MONET_ABI_ENTRY(T) AbiLayoutEntry{#T, sizeof(T), alignof(T)},
inline constexpr AbiLayoutEntry kAbiLayout[] = {MONET_ABI_TYPES(MONET_ABI_ENTRY)};
#undef MONET_ABI_ENTRY

namespace detail {
constexpr std::uint64_t fnv1a(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffU;
    h *= 0x100000001b3ULL;
  }
  return h;
}
/// The tag of a layout table under an API version (and the C++ ABI being compiled for).
constexpr std::uint64_t abi_fingerprint(std::uint32_t api_version, std::span<const AbiLayoutEntry> layout) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, api_version);
#if defined(__GXX_ABI_VERSION)
  h = fnv1a(h, __GXX_ABI_VERSION);
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI)
  h = fnv1a(h, _GLIBCXX_USE_CXX11_ABI);
#endif
  for (const AbiLayoutEntry& e : layout) {
    for (char c : e.name) h = fnv1a(h, static_cast<unsigned char>(c));
    h = fnv1a(h, e.size);
    h = fnv1a(h, e.align);
  }
  return h;
}
}  // namespace detail

/// The ABI tag of the headers being compiled.
inline constexpr std::uint64_t kPluginAbiTag = detail::abi_fingerprint(kPluginApiVersion, kAbiLayout);

}  // namespace monet
