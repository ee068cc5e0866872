#pragma once
// The live progress of a search on the terminal: one line rewritten in place on a TTY (done/total,
// evaluations per second, ETA, front size, hypervolume), periodic log lines otherwise.
#include <chrono>
#include <string>

#include "monet/search/search_run.hpp"

namespace monet::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string label);
  ~ProgressLine();
  void update(const SearchProgress& p);
  /// Ends the line (a newline on a TTY).
  void finish();

 private:
  std::string label_;
  bool tty_ = false;
  bool open_ = false;
  std::chrono::steady_clock::time_point last_{};
  std::size_t replayed_done_ = 0;  // evaluations served by a resume journal (excluded from the rate)
  double replayed_time_ = 0;
};

}  // namespace monet::cli
