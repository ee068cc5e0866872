
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "../util/parallel.hpp"
#include "chunk.hpp"
#include "monet/distributed/ranks.hpp"

namespace monet {

PointFailed::PointFailed(int r, std::size_t i, DesignPoint p, const std::string& what)
    : std::runtime_error("rank " + std::to_string(r) + " failed on point " + std::to_string(i) + ": " + what),
      rank(r),
      index(i),
      point(std::move(p)),
      reason(what) {}

Ranks::~Ranks() = default;

int launcher_ranks() {
  // Open MPI's mpirun, and PMI launchers (Slurm's srun, MPICH's hydra).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  if (std::getenv("PMIX_RANK") != nullptr) return 1;  // launched by PMIx; the size is known after MPI_Init
  return 0;
}

void test_fail_point_hook(std::size_t index) {
  struct Hook {
    std::optional<std::size_t> point;
    std::optional<int> rank;
  };
  static const Hook hook = [] {
    Hook h;
    if (const char* v = std::getenv("MONET_TEST_FAIL_POINT"); v != nullptr && *v != '\0') h.point = std::strtoull(v, nullptr, 10);
    if (const char* v = std::getenv("MONET_TEST_FAIL_RANK"); v != nullptr && *v != '\0') h.rank = std::atoi(v);
    return h;
  }();
  if (!hook.point) return;
  // With a rank, that rank fails on the first point from `point` on it evaluates: which points a rank gets is
  // decided at run time, that it gets some of every batch is not.
  const bool fails = hook.rank ? current_rank() == *hook.rank && index >= *hook.point : index == *hook.point;
  if (fails) throw std::runtime_error("MONET_TEST_FAIL_POINT: a failure injected for the test");
}

namespace detail {

ChunkFailure evaluate_chunk(const std::vector<DesignPoint>& points, std::size_t begin, std::size_t end,
                            std::size_t first_index, const Ranks::Evaluate& evaluate, std::vector<Evaluation>& out) {
  ChunkFailure failure;
  std::mutex mutex;
  detail::parallel_for(begin, end, [&](std::size_t k) {
    try {
      test_fail_point_hook(first_index + k);
      out[k] = evaluate(points[k]);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      if (!failure.failed || k < failure.position) failure = ChunkFailure{true, k, e.what()};
    }
  });
  return failure;
}

}  // namespace detail

namespace {

/// One process: every point on this process's TBB threads.
class LocalRanks final : public Ranks {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points, std::size_t first_index,
                                                 const Evaluate& evaluate) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Evaluation> out(points.size());
    const detail::ChunkFailure f = detail::evaluate_chunk(points, 0, points.size(), first_index, evaluate, out);
    load_.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (f.failed) throw PointFailed(0, first_index + f.position, points[f.position], f.what);
    load_.points += points.size();
    return out;
  }
  void serve(const Evaluate&) override {}
  void finish() override {}
  [[nodiscard]] int first_failed(bool failed) override { return failed ? 0 : -1; }
  [[nodiscard]] std::vector<RankLoad> loads() const override { return {load_}; }
  void reset_loads() override { load_ = RankLoad{}; }

 private:
  RankLoad load_;
};

}  // namespace

Ranks& local_ranks() {
  static LocalRanks ranks;
  return ranks;
}

}  // namespace monet
