#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

extern char** environ;

namespace monet::plugins {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

/// Both ends close-on-exec: a child another thread spawns meanwhile must not inherit them (it would hold our
/// child's stdin open, or its stdout, and neither would see end-of-file).
bool make_pipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  read_end.fd = p[0];
  write_end.fd = p[1];
  return true;
}

/// SIGPIPE blocked in this thread while it writes the child's stdin: a child that exits without reading it gives
/// EPIPE instead of a signal that ends monet. The SIGPIPE a write raised is thread-directed, so it is this
/// thread's to consume before the mask is restored.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
  ~SigpipeBlocked() {
    if (raised_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  void raised() { raised_ = true; }

 private:
  sigset_t pipe_{}, old_{};
  bool raised_ = false;
};

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);  // the group is the child's own (POSIX_SPAWN_SETPGROUP 0): a shell's children die too
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/// Milliseconds to the deadline, rounded up; <= 0 once it passed.
long long remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<long long>(std::ceil(left));
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::string& input, double timeout_s) {
  ChildResult r;
  Fd in_r, in_w, out_r, out_w, err_r, err_w;
  if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A process group of its own (what a timeout kills), no signal blocked and the default action for those monet
  // may handle or ignore. Ctrl-C in the terminal reaches monet only, which stops after the running evaluations.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  pid_t pid = 0;
  const bool has_slash = argv.front().find('/') != std::string::npos;
  const int rc = has_slash ? posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ)
                           : posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.error = std::strerror(rc);
    return r;
  }
  r.started = true;
  in_r.reset();
  out_w.reset();
  err_w.reset();
  ::fcntl(in_w.fd, F_SETFL, ::fcntl(in_w.fd, F_GETFL) | O_NONBLOCK);

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  SigpipeBlocked no_sigpipe;
  std::size_t written = 0;
  if (input.empty()) in_w.reset();
  char buffer[65536];
  auto drain = [&](Fd& fd, std::string& to) {
    const ssize_t n = ::read(fd.fd, buffer, sizeof buffer);
    if (n > 0) {
      to.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      fd.reset();
    }
  };
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    pollfd fds[3];
    nfds_t n = 0;
    const int at_in = in_w.fd >= 0 ? static_cast<int>(n++) : -1;
    if (at_in >= 0) fds[at_in] = pollfd{in_w.fd, POLLOUT, 0};
    const int at_out = out_r.fd >= 0 ? static_cast<int>(n++) : -1;
    if (at_out >= 0) fds[at_out] = pollfd{out_r.fd, POLLIN, 0};
    const int at_err = err_r.fd >= 0 ? static_cast<int>(n++) : -1;
    if (at_err >= 0) fds[at_err] = pollfd{err_r.fd, POLLIN, 0};
    const long long ms = remaining_ms(deadline);
    const int ready = ms > 0 ? ::poll(fds, n, static_cast<int>(std::min(ms, 1LL << 30))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {  // the deadline (or a poll that cannot go on): the child and its group go
      kill_group(pid);
      r.timed_out = ready == 0;
      if (ready < 0) r.error = std::string("poll: ") + std::strerror(errno);
      return r;
    }
    if (at_in >= 0 && fds[at_in].revents != 0) {
      const ssize_t w = ::write(in_w.fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno == EPIPE) no_sigpipe.raised();
      if (written == input.size() || (w < 0 && errno != EAGAIN && errno != EINTR)) in_w.reset();
    }
    if (at_out >= 0 && fds[at_out].revents != 0) drain(out_r, r.out);
    if (at_err >= 0 && fds[at_err].revents != 0) {
      drain(err_r, r.err);
      if (r.err.size() > (1u << 20)) r.err.erase(0, r.err.size() - (1u << 19));  // the last lines are what is shown
    }
  }
  in_w.reset();
  // Both outputs closed: the child is ending (or closed them and goes on: the deadline still holds).
  int status = 0;
  for (int wait_us = 100;; wait_us = std::min(wait_us * 2, 20000)) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      r.error = std::string("waitpid: ") + std::strerror(errno);
      return r;
    }
    if (remaining_ms(deadline) <= 0) {
      kill_group(pid);
      r.timed_out = true;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
  }
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace monet::plugins
