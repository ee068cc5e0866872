// The plugin ABI is pinned to its version: the size and alignment of every type crossing the kernel/plugin
// boundary (MONET_ABI_TYPES, monet/plugin/abi_layout.hpp) are recorded here per plugin API version. Changing a
// public struct without bumping kPluginApiVersion fails this test; the fix is to bump the version and record the
// printed table.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "monet/plugin/abi_layout.hpp"

namespace monet {
namespace {

// Recorded on x86_64 with libstdc++ (GCC, C++20), the platform monet is built and tested on.
constexpr std::uint32_t kRecordedApiVersion = 13;
constexpr AbiLayoutEntry kRecordedLayout[] = {
    {"SourceLocation", 40, 8},
    {"Bounds", 40, 8},
    {"ParamSpec", 232, 8},
    {"ParamValues", 48, 8},
    {"PluginInfo", 184, 8},
    {"Plugin", 8, 8},
    {"Range", 16, 8},
    {"AffineExpr", 32, 8},
    {"LoopDim", 40, 8},
    {"Operand", 48, 8},
    {"Operator", 344, 8},
    {"Tensor", 152, 8},
    {"Graph", 216, 8},
    {"PortAllocation", 2, 1},
    {"Port", 80, 8},
    {"MemoryLevel", 232, 8},
    {"ArrayDim", 40, 8},
    {"OperationalArray", 176, 8},
    {"Unrolling", 40, 8},
    {"MappingEntry", 152, 8},
    {"EstimatorChoice", 168, 8},
    {"Core", 624, 8},
    {"CoreInstance", 96, 8},
    {"OffChipMemory", 112, 8},
    {"Link", 128, 8},
    {"Accelerator", 240, 8},
    {"Residency", 12, 4},
    {"CostQuery", 56, 8},
    {"Cost", 320, 8},
    {"OperandTraffic", 24, 8},
    {"ComputationNode", 48, 8},
    {"Precision", 72, 8},
    {"CheckpointPolicy", 160, 8},
    {"TrainingSettings", 280, 8},
    {"Gene", 104, 8},
    {"DesignPoint", 24, 8},
    {"Evaluation", 112, 8},
    {"DesignSpace", 72, 8},
    {"MemoryEstimateQuery", 40, 8},
    {"MemoryEstimate", 56, 8},
    {"ArrayEstimateQuery", 56, 8},
    {"ArrayEstimate", 48, 8},
    {"WorkloadFrontend", 8, 8},
    {"BackwardGenerator", 8, 8},
    {"OptimizerModel", 8, 8},
    {"CostModel", 8, 8},
    {"FusionStrategy", 8, 8},
    {"SearchContext", 8, 8},
    {"SearchAlgorithm", 8, 8},
    {"Estimator", 8, 8},
    {"UserError", 88, 8},
    {"ParallelLayout", 56, 8},
    {"TensorParallelComm", 32, 8},
    {"TensorParallelPlan", 40, 8},
    {"ParallelismModel", 8, 8},
    {"TomlDocument", 104, 8},
    {"QualityMetric", 104, 8},
    {"QualityQuery", 64, 8},
    {"QualityModel", 8, 8},
};

std::string current_table() {
  std::ostringstream out;
  for (const AbiLayoutEntry& e : kAbiLayout) out << "    {\"" << e.name << "\", " << e.size << ", " << e.align << "},\n";
  return out.str();
}

TEST(AbiLayout, PublicTypesKeepTheLayoutRecordedForThisApiVersion) {
#if !(defined(__x86_64__) && defined(__GLIBCXX__))
  GTEST_SKIP() << "layouts recorded for x86_64 libstdc++ only";
#endif
  ASSERT_EQ(kPluginApiVersion, kRecordedApiVersion)
      << "kPluginApiVersion was bumped: record the new layout table here\n" << current_table();
  const std::size_t n = std::size(kAbiLayout);
  ASSERT_EQ(n, std::size(kRecordedLayout)) << "types were added to or removed from MONET_ABI_TYPES: bump "
                                              "kPluginApiVersion and record\n" << current_table();
  for (std::size_t i = 0; i < n; ++i) {
    const AbiLayoutEntry& now = kAbiLayout[i];
    const AbiLayoutEntry& then = kRecordedLayout[i];
    EXPECT_EQ(now.name, then.name);
    EXPECT_TRUE(now.size == then.size && now.align == then.align)
        << now.name << " is now " << now.size << " bytes (align " << now.align << "), recorded " << then.size
        << " (align " << then.align << ") for plugin API " << kRecordedApiVersion
        << ": a plugin built before the change would corrupt memory. Bump kPluginApiVersion in "
           "monet/plugin/abi.hpp, say why there, and record the new table here:\n" << current_table();
  }
}

TEST(AbiLayout, TheLoadTimeTagIsTheRecordedLayoutsAndMovesWithAnySize) {
#if !(defined(__x86_64__) && defined(__GLIBCXX__))
  GTEST_SKIP() << "layouts recorded for x86_64 libstdc++ only";
#endif
  // Plugins carry kPluginAbiTag; it must be exactly the recorded table under this version ...
  EXPECT_EQ(detail::abi_fingerprint(kRecordedApiVersion, kRecordedLayout), kPluginAbiTag);
  // ... and a struct growing by 8 bytes, or the same table under another version, must give another tag.
  std::vector<AbiLayoutEntry> grown(std::begin(kRecordedLayout), std::end(kRecordedLayout));
  grown.back().size += 8;
  EXPECT_NE(detail::abi_fingerprint(kRecordedApiVersion, grown), kPluginAbiTag);
  EXPECT_NE(detail::abi_fingerprint(kRecordedApiVersion + 1, kRecordedLayout), kPluginAbiTag);
}

}  // namespace
}  // namespace monet
