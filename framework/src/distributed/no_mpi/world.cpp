// world_ranks() of a monet built without MPI: one process, and a refusal to run as N copies under mpirun.
#include "monet/distributed/ranks.hpp"
#include "monet/util/error.hpp"

namespace monet {

Ranks& world_ranks() {
  const int n = launcher_ranks();
  if (n > 1) {
    throw UserError("started by an MPI launcher with " + std::to_string(n) +
                    " ranks, but this monet was built without MPI: the ranks would be " + std::to_string(n) +
                    " copies of one run writing one folder. Install libopenmpi-dev and rebuild "
                    "(cmake -DMONET_MPI=ON), or run monet without mpirun/srun (docs/distributed.md)");
  }
  return local_ranks();
}

void end_ranks(bool, int) {}

}  // namespace monet

namespace monet {
int current_rank() { return 0; }
}  // namespace monet
