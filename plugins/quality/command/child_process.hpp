#pragma once
// One run of a program: its stdin given, its stdout and stderr collected, killed with its whole process group when
// it outlives a timeout. POSIX (posix_spawn + poll): Boost 1.74's Boost.Process (v1, the only one Debian 12 ships)
// needs the compiled Boost.Filesystem and its wait_for is not thread-safe (boostorg/process#168, #347), while
// evaluations run this from several threads at once.
#include <string>
#include <vector>

namespace monet::plugins {

struct ChildResult {
  bool started = false;
  std::string error;        // non-empty: why it could not be started (posix_spawn's strerror) or watched
  bool timed_out = false;   // killed (SIGKILL to its process group) at the deadline
  int exit_status = -1;     // when it exited
  int signal = 0;           // when a signal ended it
  std::string out;
  std::string err;
};

/// Runs argv (argv[0] searched in PATH when it has no '/') in a process group of its own, writes `input` to its
/// stdin and closes it, reads stdout and stderr until both close (no deadlock whatever it reads or writes first)
/// and waits for it, for at most `timeout_s` seconds in all.
ChildResult run_child(const std::vector<std::string>& argv, const std::string& input, double timeout_s);

}  // namespace monet::plugins
