#pragma once
// The analytical model of one spatial mapping's temporal mappings, in two stages (stage 1: evaluate.cpp; stage 2:
// evaluate_finish.cpp and the files it names). A search
// evaluates thousands of orderings of one spatial mapping: the evaluator keeps its buffers between them (no
// allocation per mapping once warm) and the spatial-only parts computed once. Stage 1 (`analyse`) derives each
// operand's merged temporal mapping and transfer patterns; stage 2 (`finish`) computes energy and latency from
// what stage 1 derived and nothing else, so two mappings with equal `signature()`s get equal numbers.
// One evaluator per search (and thread): it is not safe for concurrent use.
#include <array>
#include <cstdint>
#include <vector>

#include "model.hpp"

namespace monet::loopnest {

/// The index of a transfer's direction in OperandPattern::transfers and Evaluation's per-direction arrays.
enum Dir : int { kTL = 0, kFH = 1, kFL = 2, kTH = 3 };  // rd_out_to_low, wr_in_by_high, wr_in_by_low, rd_out_to_high
inline constexpr Direction kDirection[4] = {Direction::tl, Direction::fh, Direction::fl, Direction::th};

class MappingEvaluator {
 public:
  MappingEvaluator(const Layer& layer, const Hierarchy& h, const Spatial& spatial, const Options& options);

  /// Stage 1 for a temporal mapping (per operand, L levels of loops, innermost first).
  void analyse(const Temporal& temporal);
  /// Every value stage 2 reads, as bit patterns: equal signatures give bit-identical evaluations (except the text).
  [[nodiscard]] const std::vector<std::uint64_t>& signature() const { return signature_; }
  /// Stage 2: the numbers of the analysed mapping (no `temporal_text`); valid until the next call.
  const Evaluation& finish();
  /// "K 2 | OX 56, OY 56 | ..." of the analysed mapping's first operand, bottom-up.
  [[nodiscard]] std::string temporal_text() const;
  /// Stream's bandwidth-weighted latency of an evaluation (Options::stream_mapping_objective).
  [[nodiscard]] double stream_rank(const Evaluation& ev) const;

  /// Per operand, the merged-down temporal mapping and what derives from it (6.1).
  struct TemporalFacts {
    std::vector<Nest> tms;
    double mac_st = 1;
    std::vector<double> cycle;   // [m]
    std::vector<double> top_r;   // [a], a = 0..L
    std::vector<double> top_ir;  // [a]
  };
  /// Everything the transfer pattern of one operand needs, for one spatial mapping (fractional or integer).
  struct OperandPattern {
    std::vector<double> unit_count;      // [a], a = 0..L (spatial only: set once)
    std::vector<double> boost;           // [a], a = 0..L (boost[L] = 1; spatial only: set once)
    std::vector<double> data_unrolled;   // [a]
    std::vector<double> prec;            // [a]
    std::vector<double> data_bits;       // data_bit_unrolled [a]
    std::vector<double> effective_bits;  // [a]
    std::vector<bool> psum;              // [a]
    std::vector<double> caal;            // [a], a = 0..L+2
    struct Transfer {
      double period = 0;
      double count = 0;
      double amount = 0;  // elements
      double prec = 0;    // bits per element
      double avg_bw = 0;
      double window = 0;
      double inst_bw = 0;  // ZigZag 3.8's req_mem_bw_inst: int(int(average) x top irrelevant loop factor)
    };
    std::vector<std::array<Transfer, 4>> transfers;  // [m][dir], m = 0..L-1
  };
  /// A periodic transfer through a memory port (8.2), from the integer spatial mapping.
  struct Activity {
    int op = 0;
    int m = 0;
    int dir = 0;
    double period = 0, count = 0, allowed = 0, real = 0, ss = 0, muw = 0, avg_bw = 0;
  };

 private:
  /// The relations an operand reads through (pr-loop decoupling, 6.2), per layer dim.
  struct Decoupling {
    std::vector<int> relation_of;  // relation index, -1: none
    std::vector<bool> is_a;        // the dim is the relation's `a`
  };
  void decouple(std::size_t o, const std::vector<Nest>& levels, std::vector<Nest>& out);
  void temporal_facts(std::size_t o, const std::vector<Nest>& tm);
  void pattern(std::size_t o, const std::vector<Nest>& sm, OperandPattern& p);
  void spatial_counts(std::size_t o, const std::vector<Nest>& sm, OperandPattern& p);
  void make_signature();
  void prepare_ports();
  /// The integer spatial mapping's pattern of operand o (pi_, or pf_ where the two agree).
  [[nodiscard]] const OperandPattern& pi(std::size_t o) const { return *pint_[o]; }
  // Stage 2's steps, in finish()'s order; each reads stage 1's results and what the steps before it left.
  double memory_energy();     // word accesses and their energy, instantaneous bandwidths (7.3, 7.4); returns pJ
  void record_level_bits();   // the data each level holds
  void double_buffering();    // db_ from the levels' capacities (8.1)
  void port_activities();     // the periodic transfers per port, in the port's allocation order (8.2)
  [[nodiscard]] double port_stall() const;  // the largest stall over the ports (8.3)
  void loading(double T, double stall);     // on- and off-loading cycles (8.4)
  /// The latency objective with several CNs streaming off-chip at once (Options::offchip_sharers > 1).
  [[nodiscard]] double sharers_rank(const Evaluation& ev) const;

  const Layer& layer_;
  const Hierarchy& h_;
  const Spatial& spatial_;
  const Options& options_;
  std::vector<Decoupling> decoupling_;  // per operand
  std::vector<TemporalFacts> tf_;       // per operand
  std::vector<OperandPattern> pf_;      // fractional spatial mapping: energy, utilisation
  std::vector<OperandPattern> pi_;      // integer spatial mapping: latency
  std::vector<const OperandPattern*> pint_;  // per operand: pi_, or pf_ where the two spatial mappings agree
  std::vector<std::uint64_t> signature_;
  // Stage 2's state, kept for its capacity; the ports in address order (the order ZigZag's port map had).
  struct PortWork {
    const Port* port = nullptr;
    int memory = 0;
    bool shared = false;  // carries both input operands
    std::vector<Activity> acts;
  };
  struct Entry {  // on-/off-loading cycles of one (operand, level, direction)
    double cycles = 0;
    bool shared = false;
    bool set = false;
  };
  std::vector<PortWork> ports_;
  std::vector<std::vector<std::array<int, 4>>> port_of_;    // [o][m][dir]: index into ports_, -1: no port
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sharers_;  // per memory: (operand, level)
  std::vector<std::vector<std::array<Entry, 4>>> table_;   // [o][m][dir]
  std::vector<std::vector<double>> eff_ind_, eff_shared_;
  std::vector<std::vector<bool>> db_;
  std::vector<const Activity*> once_;
  /// Per layer operand: ZigZag's loading bandwidth borrowed from the computation on the off-chip level's ports
  /// (loading_bw_during_computation), which Stream's objective adds to the operand's off-chip bandwidth.
  std::array<double, 3> borrowed_offchip_bw_{};
  std::vector<double> need_, mins_;
  Evaluation ev_;
  // Scratch of `pattern` and `decouple`, kept for their capacity.
  std::vector<Nest> s1t_, s2t_, d1t_, d2t_;
  std::vector<double> ir1_, cyc_, bw_low_, bw_high_;
  std::vector<bool> irflag_;
  std::vector<double> ca_, cb_, rprev_, irprev_;
};

}  // namespace monet::loopnest
