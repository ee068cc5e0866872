#pragma once
// One pass of a pipeline chunk (one micro-batch's forward or backward pass on one chip) as a schedule of two kinds
// of operators (docs/datacenter.md#collectives-in-a-pass): the chip's operators, one after another on its compute
// stream in the order the chip's schedule ran them, and collective operators on the links of the tiers their group
// uses. A collective is issued when an operator starts or ends and starts once its links are free (collectives on
// one link run one at a time: contention); the stream waits for it before or after the operator that needs it
// (a synchronous collective: right where it was issued). What the stream waits is the collective's exposed time;
// the rest ran beside the operators. A collective with a compute share slows the operators it runs beside (their
// rate is 1 - the shares of the collectives in flight); the time they lose is exposed time of those collectives.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

inline constexpr std::size_t kPassEnd = std::numeric_limits<std::size_t>::max();
// What exposure is accounted to: 0 tensor-, 1 context-, 2 data-parallel (ZeRO), 3 parameters sharded over the
// data-parallel group (a DLRM's all-to-alls).
inline constexpr int kPassGroups = 4;

struct PassCollective {
  double seconds = 0;
  unsigned tiers = 0;                   // the links it occupies (collective_tiers' bits: one per set of links)
  int group = 0;                        // < kPassGroups
  std::size_t issued_by = kPassEnd;     // index into the pass's operators; kPassEnd: when the pass starts
  bool issued_at_start = false;
  std::size_t awaited_by = kPassEnd;    // kPassEnd: when the pass ends
  bool awaited_at_start = false;
  double compute_share = 0;             // of the chip's compute rate while it runs (collective_compute_share)
};

struct PassSchedule {
  std::vector<double> operator_seconds;  // the compute stream, in order
  std::vector<PassCollective> collectives;
};

struct PassRun {
  double seconds = 0;                        // from the first operator's start to the last wait
  double compute_s = 0;                      // the operators' own time (without what collectives took)
  std::array<double, kPassGroups> link_s{};  // per group: its collectives' time on the links
  std::array<double, kPassGroups> exposed_s{};  // per group: what the stream waited for them
  std::vector<double> operator_end_s;        // per operator
  std::vector<double> collective_start_s, collective_end_s;
};

/// Runs the pass. A collective awaited before it is issued is an InternalError (the plan is inconsistent).
MONET_API PassRun run_pass(const PassSchedule& pass);

/// The earliest start at or after `from` of a `length`-long use of a link that `taken` (intervals [start, end),
/// sorted by start, possibly overlapping) leaves free: a collective placed around others that hold the link.
MONET_API double first_free(const std::vector<std::pair<double, double>>& taken, double from, double length);

}  // namespace monet
