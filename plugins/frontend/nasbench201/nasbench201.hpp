#pragma once
// A NAS-Bench-201 network (Dong & Yang, ICLR 2020; docs/workloads.md#nas-bench-201) generated from its cell's
// architecture string: a workload file whose [workload] table says `generator = "nasbench201"`.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monet/config/toml_reader.hpp"
#include "monet/ir/graph.hpp"

namespace monet::plugins {

/// The five operations of an edge, as the benchmark names them.
inline const std::vector<std::string> kNasBench201Ops = {"none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3",
                                                          "avg_pool_3x3"};

/// A cell: the operation of each of its 6 edges i -> j (i < j), in the order of the architecture string
/// (1<-0, 2<-0, 2<-1, 3<-0, 3<-1, 3<-2).
struct NasBench201Cell {
  std::array<std::string, 6> ops;
};

/// Parses `|op~0|+|op~0|op~1|+|op~0|op~1|op~2|`; nullopt and `error` set when it is not one.
std::optional<NasBench201Cell> parse_nasbench201_arch(const std::string& arch, std::string& error);

/// The architecture string of a cell (the inverse of parse_nasbench201_arch).
std::string nasbench201_arch(const NasBench201Cell& cell);

struct NasBench201Overrides {
  std::int64_t batch = 0;  // > 0 replaces batch
  std::string arch;        // non-empty replaces arch
};

/// Reads the [workload] table of `doc` (arch, classes, batch, channels, cells_per_stage, input, name) and builds
/// the network as NAS-Bench-201's TinyNetwork does. Every mistake is a UserError at its key.
GraphPtr build_nasbench201(const TomlDocument& doc, const NasBench201Overrides& overrides = {});

}  // namespace monet::plugins
