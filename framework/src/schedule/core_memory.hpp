#pragma once
// What the scheduler keeps in each core's memory (and off chip): the data items CNs read and their copies. The
// bookkeeping over them (making room, spilling, freeing, offloading) is core_memory.cpp's.
#include <cstdint>
#include <vector>

#include "monet/ir/graph.hpp"
#include "links.hpp"  // kNever

namespace monet::detail {

constexpr int kStaging = -1;  // Copy::item of the tiles of streamed operands in flight on a core

/// A copy of a data item held in a core's memory (or off chip).
struct Copy {
  int item = 0;
  int core = 0;
  std::int64_t bits = 0;
  std::int64_t alloc = 0;   // space taken from
  std::int64_t avail = 0;   // data present from
  std::int64_t last_use = 0;
  std::int64_t free = kNever;
};

/// Data a CN reads: the output tile of another CN or a region of a source tensor.
struct Item {
  std::int64_t bits = 0;
  int readers_left = 0;
  TensorId tensor = kNone;
  TensorRole role = TensorRole::activation;
  bool source = false;          // lives in off-chip memory from the start, forever
  std::int64_t dram_avail = -1;  // time a copy in off-chip memory is complete (-1: none)
  int dram_copy = -1;            // index into dram copies (non-source items)
  std::vector<int> copies;       // core copies (indices into copies_)
  bool spilled = false;          // its off-chip copy was made to free a core
  bool offload = false;          // a saved activation to offload (ScheduleInputs::offloaded)
  int late_readers = 0;          // readers in the backward pass (backward, recompute): what it is offloaded for
  bool offloaded = false;        // written off chip and freed on chip after its other readers
};

}  // namespace monet::detail
