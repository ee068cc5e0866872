#pragma once
// Pictures of a schedule: a Chrome/Perfetto trace (open in ui.perfetto.dev or chrome://tracing), and SVG plots
// of memory over time and of the schedule (a Gantt chart). They render for every run, including runs that
// keep nothing on chip.
#include <string>

#include "monet/experiment/runner.hpp"

namespace monet {

/// trace.json: Chrome trace format. Cores and links are threads; every CN and transfer is a complete event
/// ("ph": "X") with its tensors, bits and energy. Timestamps are cycles (shown as microseconds by the viewers).
MONET_API std::string trace_json(const PreparedExperiment& prepared, const RunResult& result);

/// memory.svg: data held in each core's memories and in off-chip memory over time (one panel each, kB).
MONET_API std::string memory_svg(const PreparedExperiment& prepared, const RunResult& result);

/// schedule.svg: a Gantt chart, one row per core and per link, coloured by operator kind / transfer cause.
MONET_API std::string schedule_svg(const PreparedExperiment& prepared, const RunResult& result);

}  // namespace monet
