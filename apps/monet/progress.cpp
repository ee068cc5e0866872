#include "progress.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "monet/util/strings.hpp"

namespace monet::cli {

namespace {

std::string duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
  }
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(const SearchProgress& p) {
  if (p.replayed) {
    replayed_done_ = p.done;
    replayed_time_ = p.elapsed_s;
  }
  const auto now = std::chrono::steady_clock::now();
  const bool last = p.planned > 0 && p.done >= p.planned;
  if (!last && now - last_ < std::chrono::milliseconds(tty_ ? 200 : 10000)) return;
  last_ = now;
  const double rate = (p.elapsed_s - replayed_time_) > 0
                          ? static_cast<double>(p.done - replayed_done_) / (p.elapsed_s - replayed_time_)
                          : 0.0;
  char line[256];
  const double pct = p.planned > 0 ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.planned) : 0.0;
  const double eta = rate > 0 && p.planned > p.done ? static_cast<double>(p.planned - p.done) / rate : 0.0;
  std::snprintf(line, sizeof line,
                "%s: batch %zu | %s/%s evaluations (%.1f %%) | %.1f eval/s | ETA %s | front %zu | HV %.4f | feasible %zu/%zu",
                label_.c_str(), p.batch, with_thousands(static_cast<long long>(p.done)).c_str(),
                p.planned > 0 ? with_thousands(static_cast<long long>(p.planned)).c_str() : "?", pct, rate,
                duration(eta).c_str(), p.front, p.hypervolume, p.feasible, p.evaluated);
  if (tty_) {
    std::cerr << "\r\033[K" << line << std::flush;
    open_ = true;
  } else {
    spdlog::info("{}", line);
  }
}

void ProgressLine::finish() {
  if (tty_ && open_) std::cerr << "\n";
  open_ = false;
}

}  // namespace monet::cli
