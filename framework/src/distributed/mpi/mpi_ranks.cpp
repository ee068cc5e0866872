// The ranks of MPI_COMM_WORLD: rank 0 hands out chunks of a batch on demand (master-worker) and evaluates
// chunks itself on a thread of its own, the other ranks evaluate what they are sent. Only the thread that
// initialised MPI calls MPI (MPI_THREAD_FUNNELED); evaluations use each rank's TBB threads.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "../chunk.hpp"
#include "monet/distributed/ranks.hpp"
#include "monet/util/error.hpp"
#include "wire.hpp"

namespace monet {

namespace {

enum Tag : int { kWork = 1, kDone = 2, kResult = 3, kFailed = 4 };

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Waits for a message from `source` without spinning: Open MPI's blocking receive keeps a core busy, and the
/// cores belong to the ranks' evaluation threads (a rank waits between batches, rank 0 while others evaluate).
MPI_Status wait_message(int source) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) return status;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

std::string receive(const MPI_Status& status) {
  int n = 0;
  MPI_Get_count(&status, MPI_BYTE, &n);
  std::string bytes(static_cast<std::size_t>(n), '\0');
  MPI_Recv(bytes.data(), n, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

void send(const std::string& bytes, int to, Tag tag) {
  ensure(bytes.size() < static_cast<std::size_t>(std::numeric_limits<int>::max()), "a message between ranks exceeds 2 GB");
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

class MpiRanks final : public Ranks {
 public:
  MpiRanks() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Abort(MPI_COMM_WORLD, 1);  // every evaluation uses threads
    }
    loads_.resize(static_cast<std::size_t>(size_));
    reset_loads();
  }

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }

  [[nodiscard]] int first_failed(bool failed) override {
    int mine = failed ? rank_ : size_;
    int lowest = size_;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lowest == size_) return -1;
    finished_ = true;  // no rank serves: nothing to release
    return lowest;
  }

  [[nodiscard]] std::vector<Evaluation> evaluate(const std::vector<DesignPoint>& points, std::size_t first_index,
                                                 const Evaluate& evaluate) override {
    ensure(rank_ == 0, "only rank 0 distributes evaluations");
    const std::size_t n = points.size();
    std::vector<Evaluation> out(n);
    if (n == 0) return out;
    // Small chunks taken on demand: about 4 per rank and batch, so that a rank given expensive points (new cores
    // need mapping searches) does not hold the others up; the results do not depend on the chunking.
    const std::size_t chunk = std::max<std::size_t>(1, (n + 4 * static_cast<std::size_t>(size_) - 1) / (4 * static_cast<std::size_t>(size_)));
    const std::size_t chunks = (n + chunk - 1) / chunk;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex failure_mutex;
    std::optional<PointFailed> failure;
    const auto fail = [&](PointFailed f) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::move(f);
      stop = true;
    };
    const auto take = [&]() -> std::optional<std::size_t> {
      if (stop) return std::nullopt;
      const std::size_t c = next++;
      if (c >= chunks) return std::nullopt;
      return c;
    };

    int active = 0;
    const auto give = [&](int to) {
      const auto c = take();
      if (!c) return;
      const std::size_t begin = *c * chunk, end = std::min(n, begin + chunk);
      detail::WireWriter w;
      w.put<std::uint64_t>(begin);
      w.put<std::uint64_t>(first_index);
      w.put<std::uint64_t>(end - begin);
      for (std::size_t k = begin; k < end; ++k) w.put(points[k]);
      send(w.bytes(), to, kWork);
      ++active;
    };
    // Every other rank gets its first chunk before rank 0 starts on its own: a fast rank 0 could otherwise take a
    // whole batch before the others are given any (the results are the same; the test of a failing rank needs
    // every rank to evaluate some of every batch).
    for (int r = 1; r < size_; ++r) give(r);

    // Rank 0's own share, on a thread of its own: this thread keeps handing out chunks meanwhile.
    RankLoad& own = loads_[0];
    std::thread local([&] {
      while (const auto c = take()) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t begin = *c * chunk, end = std::min(n, begin + chunk);
        const detail::ChunkFailure f = detail::evaluate_chunk(points, begin, end, first_index, evaluate, out);
        own.busy_s += seconds_since(t0);
        if (f.failed) {
          fail(PointFailed(0, first_index + f.position, points[f.position], f.what));
          break;
        }
        own.points += end - begin;
      }
    });
    struct Join {  // the thread is joined whatever happens here
      std::thread& t;
      std::atomic<bool>& stop;
      ~Join() {
        stop = true;
        if (t.joinable()) t.join();
      }
    } join{local, stop};

    while (active > 0) {
      const MPI_Status status = wait_message(MPI_ANY_SOURCE);
      const std::string bytes = receive(status);
      --active;
      const int from = status.MPI_SOURCE;
      RankLoad& load = loads_[static_cast<std::size_t>(from)];
      detail::WireReader in(bytes);
      const auto begin = in.get<std::uint64_t>();
      if (status.MPI_TAG == kResult) {
        const auto count = in.get<std::uint64_t>();
        load.busy_s += in.get<double>();
        load.points += count;
        for (std::size_t k = 0; k < count; ++k) out[begin + k] = in.get_evaluation();
        give(from);
      } else {
        ensure(status.MPI_TAG == kFailed, "unexpected message from rank " + std::to_string(from));
        load.busy_s += in.get<double>();
        fail(PointFailed(from, first_index + begin, points[begin], in.get_string()));
      }
    }
    local.join();
    if (failure) throw *failure;
    return out;
  }

  void serve(const Evaluate& evaluate) override {
    if (rank_ == 0) return;
    for (;;) {
      const MPI_Status status = wait_message(0);
      const std::string bytes = receive(status);
      if (status.MPI_TAG == kDone) return;
      detail::WireReader in(bytes);
      const auto begin = in.get<std::uint64_t>();
      const auto first_index = in.get<std::uint64_t>();
      std::vector<DesignPoint> points(in.get<std::uint64_t>());
      for (DesignPoint& p : points) p = in.get_point();
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Evaluation> out(points.size());
      const detail::ChunkFailure f = detail::evaluate_chunk(points, 0, points.size(), first_index + begin, evaluate, out);
      const double busy = seconds_since(t0);
      detail::WireWriter w;
      if (f.failed) {
        w.put<std::uint64_t>(begin + f.position);
        w.put(busy);
        w.put(f.what);
        send(w.bytes(), 0, kFailed);
        continue;
      }
      w.put<std::uint64_t>(begin);
      w.put<std::uint64_t>(points.size());
      w.put(busy);
      for (const Evaluation& e : out) w.put(e);
      send(w.bytes(), 0, kResult);
    }
  }

  void finish() override {
    if (rank_ != 0 || finished_) return;
    finished_ = true;
    for (int r = 1; r < size_; ++r) send(std::string(), r, kDone);
  }

  [[nodiscard]] std::vector<RankLoad> loads() const override { return loads_; }
  void reset_loads() override {
    for (std::size_t r = 0; r < loads_.size(); ++r) loads_[r] = RankLoad{static_cast<int>(r), 0, 0};
  }

  /// Ends MPI: rank 0 releases the serving ranks first; a serving rank that fails outside serve() (rank 0 would
  /// wait for it forever) ends every rank.
  void end(bool failed, int exit_code) {
    if (failed && rank_ != 0) MPI_Abort(MPI_COMM_WORLD, exit_code);
    finish();
    MPI_Finalize();
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool finished_ = false;
  std::vector<RankLoad> loads_;
};

std::unique_ptr<MpiRanks>& world() {
  static std::unique_ptr<MpiRanks> ranks;
  return ranks;
}

}  // namespace

Ranks& world_ranks() {
  if (launcher_ranks() == 0) return local_ranks();  // not started by mpirun/srun: no MPI at all
  if (!world()) world() = std::make_unique<MpiRanks>();
  return *world();
}

int current_rank() { return world() ? world()->rank() : 0; }

void end_ranks(bool failed, int exit_code) {
  if (!world()) return;
  world()->end(failed, exit_code);
  world().reset();
}

}  // namespace monet
