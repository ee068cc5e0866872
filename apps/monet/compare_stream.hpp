#pragma once
// `monet compare-stream`: a monet run against Stream's per-CN trace, CN by CN (docs/scheduling.md).
#include <string>

namespace monet::cli {

struct CompareStreamOptions {
  std::string trace;     // Stream's CN trace, .json or .json.gz (tests/data/stream/cn_trace_README.md)
  std::string results;   // a monet results folder (schedule.csv, results.json)
  std::string json_out;  // "" = none: every number as JSON
};
int compare_stream_command(const CompareStreamOptions& options);

}  // namespace monet::cli
