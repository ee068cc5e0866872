// The memory allocator (5.4): per memory bottom-up, how many of the remaining loops each operand keeps.
#include "allocator.hpp"

#include <algorithm>
#include <cmath>

namespace monet::loopnest {

namespace {

/// Why orderings fail, for the error message when none fits (the first reason seen).
void note(std::string* why, const std::string& reason) {
  if (why && why->empty()) *why = reason;
}

}  // namespace

double tensor_bits(const Layer& L, const LayerOperand& op, const std::vector<double>& f, double precision) {
  if (precision <= 0) return 0;
  double elems = 1;
  for (std::size_t d = 0; d < L.dims.size(); ++d) {
    if (op.rel[d] == Rel::relevant) elems *= f[d];
  }
  for (int k : op.relations) {
    const Relation& r = L.relations[static_cast<std::size_t>(k)];
    const double A = std::trunc(f[static_cast<std::size_t>(r.a)]);
    const double B = std::trunc(f[static_cast<std::size_t>(r.b)]);
    elems *= std::min(r.limit, pr_size(A, r.ca, B, r.cb));
  }
  return elems * precision;
}

OperandTraffic layer_operand_bits(const Layer& L) {
  OperandTraffic t;
  std::vector<double> all;
  for (std::int64_t size : L.size) all.push_back(static_cast<double>(size));
  for (const LayerOperand& op : L.ops) t.bits[op.slot] += static_cast<std::int64_t>(tensor_bits(L, op, all, op.precision));
  return t;
}

MemoryAllocator::MemoryAllocator(const Layer& layer, const Hierarchy& h, const Spatial& spatial, bool inclusive)
    : layer_(layer), spatial_(spatial) {
  const Core& core = *h.core;
  const std::size_t nops = layer.ops.size();
  for (std::size_t mi = 0; mi < core.memories.size(); ++mi) {
    Step step;
    step.memory = &core.memories[mi];
    for (OperandSlot s : h.operands_at(static_cast<int>(mi))) {
      for (std::size_t o = 0; o < nops; ++o) {
        const LayerOperand& op = layer.ops[o];
        if (op.slot != static_cast<int>(s)) continue;
        Holder holder;
        holder.op = o;
        const int level = h.level_of(op.slot, static_cast<int>(mi));
        holder.level = static_cast<std::size_t>(level);
        holder.top = level + 1 == static_cast<int>(h.levels[op.slot].size());
        if (inclusive && !holder.top) {
          const int next = h.levels[op.slot][static_cast<std::size_t>(level) + 1];
          holder.next_memory = next;
          holder.next_capacity = static_cast<double>(core.memories[static_cast<std::size_t>(next)].size_bits);
        }
        for (std::size_t e = holder.level + 1; e < spatial.frac[o].size(); ++e) {
          for (const Loop& l : spatial.frac[o][e]) {
            holder.partial_above |= op.rel[static_cast<std::size_t>(l.dim)] == Rel::irrelevant && l.size > 1;
          }
        }
        step.holders.push_back(holder);
      }
    }
    // The inclusive check cannot fail where every next level holds this memory's capacity times the largest
    // spatial fan-out between them (the usual hierarchy): it is skipped there, off the search's hot path.
    double fanout = 1;
    for (const Holder& holder : step.holders) {
      double f = 1;
      if (holder.level + 1 < spatial.frac[holder.op].size()) {
        for (const Loop& l : spatial.frac[holder.op][holder.level + 1]) f *= std::max(1.0, l.size);
      }
      fanout = std::max(fanout, f);
    }
    const double worst = static_cast<double>(step.memory->size_bits) * fanout;
    if (std::all_of(step.holders.begin(), step.holders.end(),
                    [&](const Holder& x) { return x.next_memory < 0 || x.next_capacity >= worst; })) {
      for (Holder& x : step.holders) x.next_memory = -1;
    }
    step.check_above = std::any_of(step.holders.begin(), step.holders.end(), [](const Holder& x) { return x.next_memory >= 0; });
    if (!step.holders.empty()) steps_.push_back(std::move(step));
  }
  for (const LayerOperand& op : layer.ops) level_count_.push_back(h.levels[op.slot].size());
  start_.resize(nops);
  below_.resize(nops);
  tm_.resize(nops);
  for (std::size_t o = 0; o < nops; ++o) tm_[o].resize(level_count_[o]);
}

bool MemoryAllocator::fits_above(const Step& step, const std::array<double, kSlots>& up_bits) const {
  // Operands whose next levels are one memory must fit there together (a copy of each tile lives there).
  for (std::size_t a = 0; a < step.holders.size(); ++a) {
    const int m = step.holders[a].next_memory;
    if (m < 0) continue;
    double together = 0;
    for (std::size_t b = 0; b < step.holders.size(); ++b) {
      if (step.holders[b].next_memory == m) together += up_bits[b];
    }
    if (together > step.holders[a].next_capacity) return false;
  }
  return true;
}

const Temporal* MemoryAllocator::allocate(const Nest& ordering, std::string* why) {
  const Layer& L = layer_;
  const std::size_t nops = L.ops.size();
  const int nd = L.ndims();
  // The loops below each operand: the product per layer dim, in the order they are stacked (5.4 multiplies
  // them up in that order; the same order keeps the numbers bit-identical).
  auto stack = [&](std::size_t o, auto begin, auto end) {
    for (auto it = begin; it != end; ++it) {
      if (it->dim < nd) below_[o][static_cast<std::size_t>(it->dim)] *= it->size;
    }
  };
  // The memories of the previous ordering that read only the prefix this one repeats are reused.
  const std::size_t n_loops = ordering.size();
  bool exact = true;
  double product = 1;
  for (const Loop& l : ordering) {
    product *= l.size;
    exact = exact && l.size >= 1 && l.size == std::floor(l.size) && product < 0x1p53;
  }
  std::size_t same = 0;
  if (exact && previous_.size() == n_loops) {
    while (same < n_loops && ordering[same].dim == previous_[same].dim && ordering[same].size == previous_[same].size) ++same;
  }
  std::size_t resume = 0;
  while (resume < valid_steps_ && snapshots_[resume].read <= same) ++resume;
  previous_ = ordering;
  valid_steps_ = 0;
  std::size_t read = 0;  // loops of the ordering read so far
  if (resume > 0) {
    const Snapshot& snap = snapshots_[resume - 1];
    start_ = snap.start;
    below_ = snap.below;
    read = snap.read;
  } else {
    for (std::size_t o = 0; o < nops; ++o) {
      start_[o] = 0;
      below_[o].assign(L.dims.size(), 1.0);
      stack(o, spatial_.frac[o][0].begin(), spatial_.frac[o][0].end());
    }
  }
  valid_steps_ = resume;
  for (std::size_t s = resume; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    const MemoryLevel& mem = *step.memory;
    const double capacity = static_cast<double>(mem.size_bits);
    const std::size_t n = step.holders.size();
    if (options_.size() < kSlots) options_.resize(kSlots);
    if (n > kSlots) throw InternalError("loopnest: a memory holds more than three operands of a layer");
    for (std::size_t k = 0; k < n; ++k) {
      const Holder& holder = step.holders[k];
      const std::size_t o = holder.op;
      const LayerOperand& op = L.ops[o];
      double precision = op.precision;
      if (op.output) {
        // Partial sums while an irrelevant loop is still outside (temporal, or spatial above this level).
        bool partial = holder.partial_above;
        for (std::size_t j = start_[o]; j < ordering.size(); ++j) {
          const Loop& l = ordering[j];
          partial |= l.dim < nd && op.rel[static_cast<std::size_t>(l.dim)] == Rel::irrelevant;
        }
        precision = partial ? op.precision : op.precision_final;
      }
      auto& options = options_[k];
      options.clear();
      factors_ = below_[o];
      const std::size_t left = ordering.size() - start_[o];
      for (std::size_t i = 0; i <= left; ++i) {
        if (i > 0) {
          const Loop& l = ordering[start_[o] + i - 1];
          if (l.dim < nd) factors_[static_cast<std::size_t>(l.dim)] *= l.size;
          read = std::max(read, start_[o] + i);
        }
        const double bits = tensor_bits(L, op, factors_, precision);
        if (bits > capacity) break;
        double up_bits = 0;
        if (holder.next_memory >= 0) {  // the next level holds this tile, fanned out by the spatial loops between
          std::vector<double>& up = up_factors_;
          up = factors_;
          if (holder.level + 1 < spatial_.frac[o].size()) {
            for (const Loop& l : spatial_.frac[o][holder.level + 1]) {
              if (l.dim < nd) up[static_cast<std::size_t>(l.dim)] *= l.size;
            }
          }
          up_bits = tensor_bits(L, op, up, precision);
          if (up_bits > holder.next_capacity) break;
        }
        // Bits fetched from above: what this option holds times the iterations of the loops left above it.
        double above = 1;
        if (!holder.top) {
          for (std::size_t j = start_[o] + i; j < n_loops; ++j) above *= ordering[j].size;
        }
        options.push_back(Option{i, bits, holder.top ? 0.0 : above * bits, up_bits});
      }
      if (options.empty()) {  // even nothing fits: memory too small
        note(why, "memory '" + mem.name + "' (" + std::to_string(mem.size_bits) + " bits) cannot hold operand " +
                      std::string(1, op.name) + " at " + std::to_string(static_cast<int>(precision)) +
                      " bits per element with what the spatial mapping puts below it");
        return nullptr;
      }
      if (holder.top) {
        if (options.back().i != left) {  // hierarchy too small
          note(why, "memory '" + mem.name + "' (" + std::to_string(mem.size_bits) + " bits), the top level of operand " +
                        std::string(1, op.name) + ", cannot hold all of it");
          return nullptr;
        }
        options.erase(options.begin(), options.end() - 1);
      }
    }
    // Joint choice over the cartesian product (last operand fastest); the cheapest, ties to the last
    // combination. A memory holds at most three operands; absent ones add an option of 0 bits.
    static_assert(kSlots == 3);
    static const std::vector<Option> nothing{Option{0, 0, 0, 0}};
    const std::vector<Option>& o0 = options_[0];
    const std::vector<Option>& o1 = n > 1 ? options_[1] : nothing;
    const std::vector<Option>& o2 = n > 2 ? options_[2] : nothing;
    bool found = false;
    std::size_t b0 = 0, b1 = 0, b2 = 0;
    double best_cost = 0;
    for (std::size_t i0 = 0; i0 < o0.size(); ++i0) {
      for (std::size_t i1 = 0; i1 < o1.size(); ++i1) {
        for (std::size_t i2 = 0; i2 < o2.size(); ++i2) {
          const double total = 0.0 + o0[i0].bits + o1[i1].bits + o2[i2].bits;
          const double cost = 0.0 + o0[i0].fetched + o1[i1].fetched + o2[i2].fetched;
          if (total <= capacity && (!step.check_above || fits_above(step, {o0[i0].up_bits, o1[i1].up_bits, o2[i2].up_bits})) &&
              (!found || cost <= best_cost)) {
            found = true;
            b0 = i0;
            b1 = i1;
            b2 = i2;
            best_cost = cost;
          }
        }
      }
    }
    if (!found) {
      note(why, "memory '" + mem.name + "' cannot hold its operands together");
      return nullptr;
    }
    const std::size_t chosen[kSlots] = {b0, b1, b2};
    for (std::size_t k = 0; k < n; ++k) {
      const Holder& holder = step.holders[k];
      const std::size_t o = holder.op;
      const auto first = ordering.begin() + static_cast<std::ptrdiff_t>(start_[o]);
      const std::size_t taken = options_[k][chosen[k]].i;
      const auto last = first + static_cast<std::ptrdiff_t>(taken);
      tm_[o][holder.level].assign(first, last);
      stack(o, first, last);
      start_[o] += taken;
      const std::size_t next = holder.level + 1;
      if (next < spatial_.frac[o].size()) stack(o, spatial_.frac[o][next].begin(), spatial_.frac[o][next].end());
    }
    if (exact) {
      if (snapshots_.size() <= s) snapshots_.resize(s + 1);
      snapshots_[s].start = start_;
      snapshots_[s].below = below_;
      snapshots_[s].read = read;
      valid_steps_ = s + 1;
    }
  }
  for (std::size_t o = 0; o < nops; ++o) {
    if (start_[o] != n_loops) return nullptr;
  }
  return &tm_;
}

}  // namespace monet::loopnest
