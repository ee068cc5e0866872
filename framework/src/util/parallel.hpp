#pragma once
// The kernel's parallel loop: tbb::parallel_for, except in a ThreadSanitizer build. Debian's oneTBB library is not
// built with TSan, so the synchronisation of its scheduler (task hand-off, stealing, completion) is invisible to
// TSan and every task body would be reported as racing with the thread that started it. Under TSan the same loop
// runs on plain std::threads (as many as TBB would use), so that TSan sees real concurrency with edges it
// understands and reports only races in monet's own code (scripts/ci/threads_and_no_mpi.sh).
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define MONET_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MONET_TSAN 1
#endif
#endif

namespace monet::detail {

/// Calls body(i) for every i in [begin, end), in parallel, in any order; rethrows the first exception a body threw
/// (as tbb::parallel_for does) once every running body has ended.
template <class Body>
void parallel_for(std::size_t begin, std::size_t end, const Body& body) {
#ifndef MONET_TSAN
  tbb::parallel_for(begin, end, body);
#else
  std::atomic<std::size_t> next{begin};
  std::exception_ptr error;
  std::mutex mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < end; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = end;
      }
    }
  };
  const std::size_t threads = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads && t < end - begin; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
#endif
}

}  // namespace monet::detail
