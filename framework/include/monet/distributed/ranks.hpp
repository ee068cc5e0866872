#pragma once
// The processes a search's evaluations run on (docs/distributed.md). One process by default; under `mpirun` (or
// `srun`) with a monet built with MPI, every rank of MPI_COMM_WORLD: rank 0 runs the search plugin and writes the
// output, the other ranks serve it. SearchContext::evaluate hands its new points to Ranks::evaluate, which
// spreads them over the ranks in small chunks taken on demand (evaluation costs differ by orders of magnitude
// between hardware points) and returns them in point order: the results do not depend on the rank count.
// Everything MPI is in framework/src/distributed/mpi/; a build without MPI has the same interface, one rank.
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "monet/search/space.hpp"
#include "monet/util/export.hpp"

namespace monet {

/// What one rank did during a search: points evaluated and the time its evaluations took (wall time of its
/// chunks; for rank 0, which also evaluates, the time its evaluating thread was busy).
struct RankLoad {
  int rank = 0;
  std::size_t points = 0;
  double busy_s = 0;
};

/// Evaluating a point threw (not an infeasible point, which is a result): which rank, which point.
class MONET_API PointFailed : public std::runtime_error {
 public:
  PointFailed(int rank, std::size_t index, DesignPoint point, const std::string& what);
  int rank;
  std::size_t index;  // the point's position among the distinct points of the search (evaluations.csv's index)
  DesignPoint point;
  std::string reason;
};

class MONET_API Ranks {
 public:
  using Evaluate = std::function<Evaluation(const DesignPoint&)>;
  virtual ~Ranks();
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// On rank 0: evaluates `points` over every rank with `evaluate` (which each rank must define identically),
  /// in point order. `first_index` is the position of points[0] among the search's distinct points (for
  /// messages and the test hook). Throws PointFailed when a point's evaluation threw on any rank, after every
  /// rank has finished its running chunk.
  [[nodiscard]] virtual std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points, std::size_t first_index,
                                                         const Evaluate& evaluate) = 0;
  /// On the other ranks: evaluates what rank 0 sends until rank 0 finishes.
  virtual void serve(const Evaluate& evaluate) = 0;
  /// On rank 0: releases the serving ranks (idempotent; also done by end_ranks).
  virtual void finish() = 0;
  /// Collective (every rank calls it at the same step): the lowest rank whose `failed` is true, or -1. Ranks
  /// that all reject the same input then end with one message and no MPI_Abort.
  [[nodiscard]] virtual int first_failed(bool failed) = 0;
  /// Per rank, since the last reset.
  [[nodiscard]] virtual std::vector<RankLoad> loads() const = 0;
  virtual void reset_loads() = 0;
};

/// The ranks of this process, set up on first use: MPI's world when monet was started by an MPI launcher and
/// built with MPI, else a single rank. Throws UserError when started by a launcher with several ranks and built
/// without MPI (N copies would write one folder).
MONET_API Ranks& world_ranks();

/// A single process (no MPI): evaluates with TBB threads. What run_search uses when given no Ranks.
MONET_API Ranks& local_ranks();

/// Ends the ranks before the process exits. `failed`: this process ends with an error; a serving rank then
/// aborts every rank with `exit_code` (rank 0 would otherwise wait for it forever; mpirun exits with that code,
/// so bad input stays exit code 2), rank 0 releases the serving ranks.
MONET_API void end_ranks(bool failed, int exit_code = 1);

/// This process's rank once world_ranks() set MPI up, else 0 (for messages).
MONET_API int current_rank();

/// Whether the process was started by an MPI launcher, and with how many ranks (0: not launched by one).
MONET_API int launcher_ranks();

/// Test hook (tests/e2e/test_distributed.cpp only): the environment variable MONET_TEST_FAIL_POINT=I makes the
/// evaluation of the search's distinct point I throw, on whichever rank evaluates it; with MONET_TEST_FAIL_RANK=R
/// too, rank R throws on the first point numbered I or more that it evaluates (and no other rank does).
MONET_API void test_fail_point_hook(std::size_t index);

}  // namespace monet
