// Spatial mappings (sections 4.2-4.6).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <set>

#include "model.hpp"

namespace monet::loopnest {

namespace {

const LayerOperand* operand_of_slot(const Layer& L, int slot) {
  for (const LayerOperand& o : L.ops) {
    if (o.slot == slot) return &o;
  }
  return nullptr;
}

/// Memories that are the lowest level of every operand they hold.
std::vector<int> innermost(const Hierarchy& h) {
  std::vector<int> out;
  const Core& core = *h.core;
  for (std::size_t m = 0; m < core.memories.size(); ++m) {
    const std::vector<OperandSlot> held = h.operands_at(static_cast<int>(m));
    bool inner = !held.empty();
    for (OperandSlot s : held) {
      const auto& lv = h.levels[static_cast<int>(s)];
      if (lv.empty() || lv[0] != static_cast<int>(m)) inner = false;
    }
    if (inner) out.push_back(static_cast<int>(m));
  }
  return out;
}

int array_index(const Core& core, const std::string& name) {
  for (std::size_t i = 0; i < core.array.dims.size(); ++i) {
    if (core.array.dims[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

/// max_unroll[array dim][layer dim] (4.2).
std::vector<std::vector<std::int64_t>> max_unrollings(const Layer& L, const Hierarchy& h) {
  const Core& core = *h.core;
  std::vector<std::vector<std::int64_t>> mu(core.array.dims.size(), std::vector<std::int64_t>(L.dims.size()));
  for (std::size_t a = 0; a < core.array.dims.size(); ++a) {
    for (std::size_t d = 0; d < L.dims.size(); ++d) mu[a][d] = std::min(L.size[d], core.array.dims[a].size);
  }
  for (int m : innermost(h)) {
    const MemoryLevel& mem = core.memories[static_cast<std::size_t>(m)];
    for (OperandSlot s : h.operands_at(m)) {
      const LayerOperand* op = operand_of_slot(L, static_cast<int>(s));
      if (!op || op->precision <= 0) continue;
      const Port* port = mem.port_for(s, op->output ? Direction::fl : Direction::tl);
      if (!port) continue;
      const auto cap = static_cast<std::int64_t>(static_cast<double>(port->bandwidth_max_bits) / op->precision);
      for (const std::string& served : mem.served_dims) {
        const int a = array_index(core, served);
        if (a < 0) continue;
        for (std::size_t d = 0; d < L.dims.size(); ++d) {
          if (op->rel[d] != Rel::irrelevant) mu[static_cast<std::size_t>(a)][d] = std::min(mu[static_cast<std::size_t>(a)][d], cap);
        }
      }
    }
  }
  return mu;
}

std::vector<std::int64_t> divisors_desc(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t f = n; f >= 1; --f) {
    if (n % f == 0) out.push_back(f);
  }
  return out;
}

/// Product of the factors of layer dims that matter to an operand on the array dims a memory serves.
double served_product(const Layer& L, const LayerOperand& op, const MemoryLevel& mem, const Core& core,
                      const UserSpatial& sm) {
  double p = 1;
  for (const std::string& served : mem.served_dims) {
    const int a = array_index(core, served);
    if (a < 0) continue;
    for (const auto& [d, f] : sm[static_cast<std::size_t>(a)]) {
      if (op.rel[static_cast<std::size_t>(d)] != Rel::irrelevant) p *= f;
    }
  }
  (void)L;
  return p;
}

/// Capacity limiting (4.5): innermost memories must hold what one instance feeds.
void limit_capacity(const Layer& L, const Hierarchy& h, UserSpatial& sm) {
  const Core& core = *h.core;
  for (int m : innermost(h)) {
    const MemoryLevel& mem = core.memories[static_cast<std::size_t>(m)];
    for (OperandSlot s : h.operands_at(m)) {
      const LayerOperand* op = operand_of_slot(L, static_cast<int>(s));
      if (!op || op->precision <= 0) continue;
      const double cap = static_cast<double>(mem.size_bits) / op->precision;
      while (cap < served_product(L, *op, mem, core, sm)) {
        // decrement the largest counted factor by one
        double* largest = nullptr;
        for (const std::string& served : mem.served_dims) {
          const int a = array_index(core, served);
          if (a < 0) continue;
          for (auto& [d, f] : sm[static_cast<std::size_t>(a)]) {
            if (op->rel[static_cast<std::size_t>(d)] != Rel::irrelevant && (!largest || f > *largest)) largest = &f;
          }
        }
        if (!largest || *largest <= 1) break;
        *largest -= 1;
      }
    }
  }
}

}  // namespace

std::vector<UserSpatial> spatial_candidates(const Layer& L, const Hierarchy& h, const MappingEntry* entry,
                                            const Options& options) {
  const Core& core = *h.core;
  const std::size_t na = core.array.dims.size();
  const auto mu = max_unrollings(L, h);
  // The user's part (4.3): the mapping entry, else the core's dataflow.
  UserSpatial user(na);
  std::vector<bool> present(na, false);
  const std::map<std::string, std::vector<Unrolling>>* given = nullptr;
  if (entry && !entry->spatial_mapping.empty()) given = &entry->spatial_mapping;
  else if (!core.dataflow.empty()) given = &core.dataflow;
  if (given) {
    for (const auto& [array_dim, unrollings] : *given) {
      const int a = array_index(core, array_dim);
      if (a < 0) continue;
      present[static_cast<std::size_t>(a)] = true;
      for (const Unrolling& u : unrollings) {
        const int d = L.dim(u.loop_dim);
        if (d < 0) continue;  // not a dim of this layer
        const std::int64_t f = std::min(u.factor, mu[static_cast<std::size_t>(a)][static_cast<std::size_t>(d)]);
        user[static_cast<std::size_t>(a)].emplace_back(d, static_cast<double>(f));
      }
      auto& list = user[static_cast<std::size_t>(a)];
      auto product = [&] {
        double p = 1;
        for (const auto& [d, f] : list) p *= f;
        return p;
      };
      while (!list.empty() && product() > static_cast<double>(core.array.dims[static_cast<std::size_t>(a)].size)) list.pop_back();
    }
    // A layer dim may not be unrolled more than its size in total.
    for (int d = 0; d < L.ndims(); ++d) {
      while (true) {
        double total = 1;
        int last = -1;
        for (std::size_t a = 0; a < na; ++a) {
          for (const auto& [dd, f] : user[a]) {
            if (dd == d) {
              total *= f;
              last = static_cast<int>(a);
            }
          }
        }
        if (total <= static_cast<double>(L.size[static_cast<std::size_t>(d)]) || last < 0) break;
        auto& list = user[static_cast<std::size_t>(last)];
        list.erase(std::find_if(list.rbegin(), list.rend(), [&](const auto& x) { return x.first == d; }).base() - 1);
      }
    }
  }
  std::vector<std::size_t> missing;
  for (std::size_t a = 0; a < na; ++a) {
    if (!present[a]) missing.push_back(a);
  }
  if (missing.empty()) {
    limit_capacity(L, h, user);
    return {user};
  }
  // Generation (4.4): candidates per missing array dim from its hints (or every layer dim).
  std::vector<std::vector<std::vector<std::pair<int, double>>>> options_per_dim;
  for (std::size_t a : missing) {
    std::vector<int> hinted;
    if (entry) {
      auto it = entry->spatial_mapping_hint.find(core.array.dims[a].name);
      if (it != entry->spatial_mapping_hint.end()) {
        for (const std::string& n : it->second) {
          const int d = L.dim(n);
          if (d >= 0) hinted.push_back(d);
        }
      }
    }
    if (hinted.empty()) {
      for (int d = 0; d < L.ndims(); ++d) hinted.push_back(d);
    }
    std::vector<std::vector<std::pair<int, double>>> cands;
    for (int d : hinted) {
      for (std::int64_t f : divisors_desc(mu[a][static_cast<std::size_t>(d)])) cands.push_back({{d, static_cast<double>(f)}});
    }
    if (options.mixed_spatial && hinted.size() >= 2) {
      const std::int64_t size = core.array.dims[a].size;
      // Every combination of 2..n hinted dims with non-trivial divisors, within the array size.
      const std::size_t n = hinted.size();
      for (std::size_t mask = 1; mask < (std::size_t{1} << n); ++mask) {
        if (std::popcount(mask) < 2) continue;
        std::vector<int> dims;
        for (std::size_t k = 0; k < n; ++k) {
          if (mask & (std::size_t{1} << k)) dims.push_back(hinted[k]);
        }
        std::vector<std::vector<std::int64_t>> divs;
        for (int d : dims) {
          auto dv = divisors_desc(mu[a][static_cast<std::size_t>(d)]);
          dv.erase(std::remove(dv.begin(), dv.end(), 1), dv.end());
          divs.push_back(dv);
        }
        std::vector<std::size_t> idx(dims.size(), 0);
        bool empty = std::any_of(divs.begin(), divs.end(), [](const auto& v) { return v.empty(); });
        while (!empty) {
          std::int64_t prod = 1;
          std::vector<std::pair<int, double>> combo;
          for (std::size_t k = 0; k < dims.size(); ++k) {
            prod *= divs[k][idx[k]];
            combo.emplace_back(dims[k], static_cast<double>(divs[k][idx[k]]));
          }
          if (prod <= size) cands.push_back(combo);
          empty = !next_index(idx, [&](std::size_t k) { return divs[k].size(); });
        }
      }
    }
    options_per_dim.push_back(std::move(cands));
  }
  // The cartesian product, filtered and ranked by indicator = U + (U / max_d total(d) − 1).
  struct Scored {
    UserSpatial sm;
    double indicator;
  };
  std::vector<Scored> all;
  std::vector<std::size_t> idx(missing.size(), 0);
  if (std::any_of(options_per_dim.begin(), options_per_dim.end(), [](const auto& v) { return v.empty(); })) return {user};
  while (true) {
    UserSpatial sm = user;
    for (std::size_t k = 0; k < missing.size(); ++k) sm[missing[k]] = options_per_dim[k][idx[k]];
    bool valid = true;
    std::vector<double> total(L.dims.size(), 1.0);
    double U = 1;
    for (std::size_t a = 0; a < na && valid; ++a) {
      double p = 1;
      for (const auto& [d, f] : sm[a]) {
        if (f > static_cast<double>(mu[a][static_cast<std::size_t>(d)])) valid = false;
        p *= f;
        total[static_cast<std::size_t>(d)] *= f;
        U *= f;
      }
      if (p > static_cast<double>(core.array.dims[a].size)) valid = false;
    }
    for (std::size_t d = 0; d < L.dims.size() && valid; ++d) {
      if (total[d] > static_cast<double>(L.size[d])) valid = false;
    }
    if (valid) {
      const double max_total = *std::max_element(total.begin(), total.end());
      all.push_back(Scored{std::move(sm), U + (U / max_total - 1)});
    }
    if (!next_index(idx, [&](std::size_t k) { return options_per_dim[k].size(); })) break;
  }
  std::stable_sort(all.begin(), all.end(), [](const Scored& a, const Scored& b) { return a.indicator > b.indicator; });
  std::vector<UserSpatial> out;
  for (auto& s : all) {
    if (static_cast<int>(out.size()) >= options.spatial_candidates) break;
    limit_capacity(L, h, s.sm);
    out.push_back(std::move(s.sm));
  }
  if (out.empty()) out.push_back(user);
  return out;
}

Spatial convert_spatial(const Layer& L, const Hierarchy& h, const UserSpatial& user) {
  const Core& core = *h.core;
  const std::size_t na = core.array.dims.size();
  // Clip to the array, make the first largest factor of each dim divide the dim exactly (fractional).
  UserSpatial frac(na);
  UserSpatial integer(na);
  for (std::size_t a = 0; a < na; ++a) {
    for (const auto& [d, f] : user[a]) {
      const double clipped = std::min(f, static_cast<double>(core.array.dims[a].size));
      frac[a].emplace_back(d, clipped);
      integer[a].emplace_back(d, clipped);
    }
  }
  for (int d = 0; d < L.ndims(); ++d) {
    double largest = 0;
    for (std::size_t a = 0; a < na; ++a) {
      for (const auto& [dd, f] : frac[a]) {
        if (dd == d) largest = std::max(largest, f);
      }
    }
    if (largest <= 0) continue;
    double earlier = 1;
    bool done = false;
    for (std::size_t a = 0; a < na && !done; ++a) {
      for (std::size_t k = 0; k < frac[a].size(); ++k) {
        auto& [dd, f] = frac[a][k];
        if (dd != d) continue;
        if (f == largest) {
          const double size = static_cast<double>(L.size[static_cast<std::size_t>(d)]);
          const double q = std::ceil(size / (f * earlier) - 1e-9);
          f = size / q / earlier;
          integer[a][k].second = std::trunc(f + 1e-9);
          done = true;
          break;
        }
        earlier *= f;
      }
    }
  }
  Spatial s;
  s.temporal.assign(L.dims.size(), 0);
  for (std::size_t d = 0; d < L.dims.size(); ++d) s.temporal[d] = static_cast<double>(L.size[d]);
  for (std::size_t a = 0; a < na; ++a) {
    for (const auto& [d, f] : frac[a]) {
      auto& t = s.temporal[static_cast<std::size_t>(d)];
      t = std::ceil(t / f - 1e-9);
      s.used_units *= f;
    }
  }
  // Per operand: level m takes the unassigned array dims it serves; the rest is an extra top entry.
  for (const LayerOperand& op : L.ops) {
    const auto& levels = h.levels[op.slot];
    std::vector<bool> assigned(na, false);
    std::vector<Nest> f_entries(levels.size() + 1);
    std::vector<Nest> i_entries(levels.size() + 1);
    for (std::size_t m = 0; m <= levels.size(); ++m) {
      for (std::size_t a = 0; a < na; ++a) {
        if (assigned[a]) continue;
        bool take = m == levels.size();
        if (!take) {
          const auto& served = core.memories[static_cast<std::size_t>(levels[m])].served_dims;
          take = std::find(served.begin(), served.end(), core.array.dims[a].name) != served.end();
        }
        if (!take) continue;
        assigned[a] = true;
        for (std::size_t k = 0; k < frac[a].size(); ++k) {
          f_entries[m].push_back(Loop{frac[a][k].first, frac[a][k].second});
          i_entries[m].push_back(Loop{integer[a][k].first, integer[a][k].second});
        }
      }
    }
    s.frac.push_back(std::move(f_entries));
    s.integer.push_back(std::move(i_entries));
  }
  for (std::size_t a = 0; a < na; ++a) {
    if (a) s.text += ", ";
    s.text += core.array.dims[a].name + ":";
    for (const auto& [d, f] : frac[a]) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %g", L.dims[static_cast<std::size_t>(d)].c_str(), f);
      s.text += buf;
    }
  }
  return s;
}

}  // namespace monet::loopnest
