#pragma once
// The scheduler behind schedule(): one object per schedule, its member functions in three files by the question
// they answer — scheduler.cpp (which CN runs where and when), core_memory.cpp (what each core holds), links.cpp
// (how data moves) — and schedule_result.cpp (the result's latency, memory timelines and capacity checks).
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "core_memory.hpp"
#include "links.hpp"
#include "monet/schedule/schedule.hpp"

namespace monet::detail {

class Scheduler {
 public:
  explicit Scheduler(const ScheduleInputs& in);

  ScheduleResult run();

 private:
  // ------------------------------------------------------------------- list scheduling (scheduler.cpp)
  [[nodiscard]] std::vector<bool> barriers() const;
  int choose_core(const ComputationNode& cn);
  Cost cost_or_all_streamed(const ComputationNode& cn, int c, StreamedOperands& mask) const;
  void place_view(const ComputationNode& cn);

  /// Data a CN reads before it runs: an item (another CN's output or a source region) and the bits it needs.
  struct Need {
    int item;
    std::int64_t bits;
    OperandSlot slot;
    TensorId tensor;
    bool source;
  };

  void place(const ComputationNode& cn);
  // The steps of place, in its order.
  std::vector<Need> gather_needs(const ComputationNode& cn, std::int64_t& after) const;
  [[nodiscard]] static std::vector<int> pinned_items(const ComputationNode& cn, const std::vector<Need>& needs);
  std::int64_t bring_inputs(const ComputationNode& cn, int c, const std::vector<Need>& needs,
                            const StreamedOperands& streamed, const std::vector<int>& pinned, std::int64_t ready,
                            int share);
  std::int64_t put_offchip(const Need& nd, int cn, int share);
  std::pair<std::int64_t, TransferCause> fetch_input(const Need& nd, int cn, int c, std::int64_t prefetch,
                                                     const std::vector<int>& pinned, int share);
  std::int64_t make_room_for_staging(const ComputationNode& cn, int c, const std::vector<Need>& needs,
                                     const std::vector<int>& pinned, int share, std::int64_t& start,
                                     StreamedOperands& mask, Cost& cost);
  std::int64_t hold_stream_bandwidth(const ComputationNode& cn, int c, const StreamedOperands& mask, const Cost& cost,
                                     std::int64_t start);
  void account_cost(const Cost& cost);
  void stage_tiles(int c, std::int64_t staged, std::int64_t start, std::int64_t end);
  void store_output(const ComputationNode& cn, int c, const StreamedOperands& mask, std::int64_t start,
                    std::int64_t end);
  void release_inputs(const std::vector<Need>& needs, int c, std::int64_t end);
  void write_graph_output(const ComputationNode& cn, int c, const StreamedOperands& mask, std::int64_t end, int share);
  void release_unread_output(int item_id);
  [[nodiscard]] TensorId output_tensor(const ComputationNode& cn) const;

  [[nodiscard]] const Link* link_between(int a, int b) const { return link_table_[acc_.link_table_index(a, b)]; }
  [[nodiscard]] const Core& core(int id) const { return *acc_.cores[static_cast<std::size_t>(id)].core; }

  // ------------------------------------------------------------------- core memories (core_memory.cpp)
  void init_items();
  static bool late_phase(Phase p);

  /// Bits held on a core from time t on (copies not yet freed at t).
  [[nodiscard]] std::int64_t held_after(int c, std::int64_t t) const {
    std::int64_t bits = 0;
    for (int k : live_[static_cast<std::size_t>(c)]) {
      const Copy& cp = copies_[static_cast<std::size_t>(k)];
      if (cp.free > t) bits += cp.bits;
    }
    return bits;
  }

  void purge(int c);
  std::int64_t make_room(int c, std::int64_t bits, std::int64_t t, const std::vector<int>& pinned, int share);

  /// Data of `item` held on `core` (or off chip): space taken from `alloc`, data there from `avail`.
  static Copy make_copy(int item, int core, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    Copy cp;
    cp.item = item;
    cp.core = core;
    cp.bits = bits;
    cp.alloc = alloc;
    cp.avail = avail;
    cp.last_use = avail;
    return cp;
  }

  int new_copy(int item, int c, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    const int k = static_cast<int>(copies_.size());
    copies_.push_back(make_copy(item, c, bits, alloc, avail));
    live_[static_cast<std::size_t>(c)].push_back(k);
    items_[static_cast<std::size_t>(item)].copies.push_back(k);
    return k;
  }

  int dram_copy(int item, std::int64_t bits, std::int64_t alloc, std::int64_t avail) {
    dram_copies_.push_back(make_copy(item, Accelerator::kOffChip, bits, alloc, avail));
    return static_cast<int>(dram_copies_.size()) - 1;
  }

  [[nodiscard]] int copy_on(int item, int c) const {
    for (int k : items_[static_cast<std::size_t>(item)].copies) {
      if (copies_[static_cast<std::size_t>(k)].core == c) return k;
    }
    return -1;
  }

  void consumed(int item_id);
  void offload_if_due(int item_id);
  [[nodiscard]] StreamedOperands streamed_operands(const ComputationNode& cn, int c,
                                                   const std::vector<Need>& needs) const;
  [[nodiscard]] std::int64_t spillable_bits(int c, const std::vector<int>& pinned) const;
  [[nodiscard]] std::int64_t staged_bits(const ComputationNode& cn, int c, const StreamedOperands& mask,
                                         const Cost& cost, const std::vector<Need>& needs) const;

  // ------------------------------------------------------------------- links and transfers (links.cpp)
  [[nodiscard]] const MemoryLevel& resident_level(int c, OperandSlot slot) const;
  [[nodiscard]] double write_energy_per_bit(int endpoint, OperandSlot slot) const;
  [[nodiscard]] double read_energy_per_bit(int endpoint, OperandSlot slot) const;
  std::int64_t reserve(std::size_t li, bool offchip, std::int64_t earliest, std::int64_t duration, double bw);
  std::int64_t move(int from, int to, std::int64_t bits, OperandSlot slot, std::int64_t earliest, int cn,
                    TensorId tensor, TransferCause cause, int share);
  void record_streams(const ComputationNode& cn, int c, const Cost& cost, int link, std::int64_t start,
                      double bandwidth);
  [[nodiscard]] TensorId operand_tensor(const ComputationNode& cn, OperandSlot slot) const;

  // ------------------------------------------------------------------- results (schedule_result.cpp)
  struct MemoryEvent {
    std::int64_t time = 0;
    std::int64_t delta = 0;  // bits: + allocated, - released
    MemoryUse use = MemoryUse::other;
    bool operator<(const MemoryEvent& o) const { return std::tie(time, delta) < std::tie(o.time, o.delta); }
  };

  static MemoryTimeline timeline(std::vector<MemoryEvent>& events, bool with_uses, std::int64_t& peak,
                                 std::int64_t& peak_step, std::array<std::int64_t, kMemoryUses>& peak_uses);
  [[nodiscard]] MemoryUse use_of(const Copy& cp) const;
  void finish();
  void check_capacities();

  const ScheduleInputs& in_;
  const Graph& g_;
  const CNGraph& cns_;
  const Accelerator& acc_;
  std::vector<BandwidthTimeline> links_;
  std::vector<const Link*> link_table_;  // Accelerator::link_table(): the link between two endpoints, by index
  BandwidthTimeline port_;
  std::vector<std::int64_t> core_free_;
  std::vector<std::int64_t> frontier_;
  std::vector<std::int64_t> capacity_;
  std::vector<std::vector<int>> live_;  // per core: copies not yet purged
  std::vector<Copy> copies_;
  std::vector<Copy> dram_copies_;
  std::vector<Item> items_;
  std::vector<bool> sink_ = std::vector<bool>(cns_.nodes.size(), false);
  bool overflow_ = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> dram_releases_;  // old versions of tensors updated in place
  ScheduleResult result_;
};

}  // namespace monet::detail
