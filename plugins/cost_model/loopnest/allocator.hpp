#pragma once
// LOMA's memory allocator (section 5.4): an ordering of temporal loops split into memory levels, per memory
// bottom-up. One allocator serves every ordering of one spatial mapping and keeps its buffers between them.
// Not safe for concurrent use: one per search.
#include <array>
#include <string>
#include <vector>

#include "model.hpp"

namespace monet::loopnest {

class MemoryAllocator {
 public:
  /// `inclusive`: an operand keeps no more at a level than its next level can hold (that level holds a copy of
  /// it); ZigZag does not check this and finds no mapping when a lower memory outgrows a higher one.
  MemoryAllocator(const Layer& layer, const Hierarchy& h, const Spatial& spatial, bool inclusive);
  /// The temporal mapping of `ordering` (innermost first), or nullptr when it does not fit; `why` (optional)
  /// receives the first reason an ordering did not fit. The result lives until the next call.
  /// Successive orderings that share a prefix (as permutations in lexicographic order do) reuse the memories
  /// whose allocation read only that prefix: the rest of the ordering enters a memory's choice only as a
  /// multiset (products of integer loop sizes, exact below 2^53), so the choice is the same.
  const Temporal* allocate(const Nest& ordering, std::string* why);

 private:
  struct Holder {           // an operand a memory holds
    std::size_t op = 0;     // layer operand
    std::size_t level = 0;  // its level there
    bool top = false;       // its top level
    bool partial_above = false;  // an output with an irrelevant spatial loop above this level
    int next_memory = -1;        // its next level's memory (inclusive allocation; -1: not checked)
    double next_capacity = 0;    // that memory's bits
  };
  struct Step {  // a memory that holds operands, bottom-up
    const MemoryLevel* memory = nullptr;
    std::vector<Holder> holders;  // in the memory's operand order
    bool check_above = false;     // some holder's next level may not hold what it keeps here (inclusive allocation)
  };
  struct Option {
    std::size_t i;   // loops taken
    double bits;
    double fetched;  // bits times the iterations of the loops above (ZigZag's cost estimate; 0 at the top)
    double up_bits;  // what its next level must then hold of it (inclusive allocation)
  };

  /// Whether the tiles a memory's operands keep (their next-level copies `up_bits`) fit together in the next
  /// levels they share (always true without inclusive allocation).
  [[nodiscard]] bool fits_above(const Step& step, const std::array<double, kSlots>& up_bits) const;

  const Layer& layer_;
  const Spatial& spatial_;
  std::vector<Step> steps_;
  std::vector<std::size_t> level_count_;  // per operand
  /// The state after a memory of the previous ordering was allocated, and the last loop it read.
  struct Snapshot {
    std::vector<std::size_t> start;
    std::vector<std::vector<double>> below;
    std::size_t read = 0;  // the memories up to this one read the ordering up to this index
  };
  Nest previous_;              // the last ordering allocated
  std::size_t valid_steps_ = 0;  // snapshots of it that are valid (its memories that fit)
  std::vector<Snapshot> snapshots_;
  // Per-allocation state, kept for its capacity.
  std::vector<std::size_t> start_;          // per operand: first unallocated loop of the ordering
  std::vector<std::vector<double>> below_;  // per operand and layer dim: product of the loops below (allocated)
  std::vector<double> factors_;
  std::vector<double> up_factors_;
  std::vector<std::vector<Option>> options_;
  Temporal tm_;
};

/// Bits of an operand's tile whose loops multiply to `factors` per layer dim (5.4).
double tensor_bits(const Layer& L, const LayerOperand& op, const std::vector<double>& factors, double precision);

}  // namespace monet::loopnest
