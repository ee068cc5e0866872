#pragma once
// The cost cache on disk (`monet run --cost-cache DIR`): a later run, or a concurrent one, starts with the costs
// earlier runs computed. One file per format and monet version (a new monet never reads an older monet's costs:
// its keys or models may differ); written to a temporary file and renamed (readers never see half a file);
// merged under an advisory lock (concurrent runs keep each other's entries); a corrupted file is skipped with a
// warning, never trusted in part.
#include <cstddef>
#include <filesystem>
#include <string>

#include "monet/experiment/cost_cache.hpp"

namespace monet {

/// Bump when the meaning of a cost key or of a stored Cost field changes without a monet version change.
inline constexpr int kCostCacheFormat = 1;

/// The file of this monet's entries in `dir`.
MONET_API std::filesystem::path cost_cache_file(const std::filesystem::path& dir);

struct CostCacheLoad {
  std::size_t entries = 0;  // entries added to the cache
  std::string warning;      // non-empty when a file was there but could not be used
};

/// Adds the entries stored in `dir` to `cache` (nothing when there is no file yet).
MONET_API CostCacheLoad load_cost_cache(CostCache& cache, const std::filesystem::path& dir);

/// Stores every entry of `cache` in `dir` (created if missing), merged with what other runs stored meanwhile.
/// Returns the number of entries in the file. Throws UserError when `dir` cannot be written.
MONET_API std::size_t save_cost_cache(const CostCache& cache, const std::filesystem::path& dir);

}  // namespace monet
