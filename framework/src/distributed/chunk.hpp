#pragma once
// Evaluating a run of points on this process's TBB threads, with the first failure kept (the lowest position,
// whatever the thread count): what a rank does with the chunk it was given.
#include <string>
#include <vector>

#include "monet/distributed/ranks.hpp"

namespace monet::detail {

struct ChunkFailure {
  bool failed = false;
  std::size_t position = 0;  // in `points`
  std::string what;
};

/// Evaluates points[begin, end) into out[begin, end); points[k] is the search's distinct point first_index + k.
ChunkFailure evaluate_chunk(const std::vector<DesignPoint>& points, std::size_t begin, std::size_t end,
                            std::size_t first_index, const Ranks::Evaluate& evaluate, std::vector<Evaluation>& out);

}  // namespace monet::detail
