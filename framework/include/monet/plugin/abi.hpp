#pragma once
// The plugin API version and how the plugin ABI tag is computed: a fingerprint of the layout (size and alignment)
// of every type that crosses the kernel/plugin boundary, of the C++ ABI and of the plugin API version. The table
// of types and the tag itself are in monet/plugin/abi_layout.hpp, which sees every plugin kind's types: a plugin
// library gets its tag from one extra source file that monet_add_plugin compiles with the plugin's own compiler
// and flags (cmake/plugin_abi_tag.cpp), so the plugin's own sources include only their kind's header.
// A plugin library records its tag (MONET_EXPORT_PLUGINS); the kernel refuses a library whose tag differs from its
// own, so a layout change that was not accompanied by a kPluginApiVersion bump cannot corrupt memory silently.
// The unit test AbiLayout.* pins the table to the API version: changing a struct's size fails it until
// kPluginApiVersion is bumped and the new table recorded. (Added virtual functions change no size: bump by hand.)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace monet {

/// Bumped whenever an interface in monet/plugin or a type it passes changes incompatibly.
/// 3: the ABI tag in MonetPluginLibrary (checked at load); exported Bounds::contains and Link::connects.
/// 4: CheckpointPolicy and TrainingSettings grew (the optimal and blocks policies: budget, cost, blocks);
///    SearchContext hands out seed points (checkpoint genes) and distributes evaluation over MPI ranks.
/// 5: the parallelism kind (ParallelismModel, ParallelLayout, TensorParallelComm, TensorParallelPlan).
/// 6: context parallelism (ParallelLayout::context, TensorParallelComm::group).
/// 7: asynchronous collectives (TensorParallelComm::issued_by, awaited_by and where in those operators).
/// 8: chip power (Accelerator::idle_power_w; EnergyBreakdown::idle_pj).
/// 9: data-parallel subgroups (ParallelGroup::data_in_node, data_across_nodes; TensorParallelPlan::data_ranks_per_node).
/// 10: Tensor::sparse_update (a row-sparse table's update rule, chosen by the workload instead of the optimizer).
/// 11: CheckpointPolicy::semantics (what a checkpointed region runs again: PyTorch's whole region, or the minimum).
/// 12: WorkloadFrontend::load_document (a TOML workload with the experiment's [workload.set] changes); TomlDocument
///     crosses the boundary.
/// 13: the quality kind (QualityModel, QualityMetric, QualityQuery); Objective::maximise (a metric where higher is
///     better, negated for the search); Evaluation::quality; OperationalArray::energy_scales_with_width;
///     Precision::groups (per-layer quantization).
inline constexpr std::uint32_t kPluginApiVersion = 13;

struct AbiLayoutEntry {
  std::string_view name;
  std::size_t size;
  std::size_t align;
};

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

}  // namespace monet
