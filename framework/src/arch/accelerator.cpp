#include "monet/arch/accelerator.hpp"

#include "monet/arch/architecture_documents.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "monet/config/toml_reader.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::string to_string(LinkKind k) { return k == LinkKind::bus ? "bus" : "point_to_point"; }

bool Link::connects(int a, int b) const {
  const bool has_a = std::find(endpoints.begin(), endpoints.end(), a) != endpoints.end();
  const bool has_b = std::find(endpoints.begin(), endpoints.end(), b) != endpoints.end();
  return has_a && has_b;
}

int Accelerator::core_index(std::string_view n) const {
  for (const CoreInstance& c : cores) {
    if (c.name == n) return c.id;
  }
  return -1;
}

std::vector<std::string> Accelerator::core_names() const {
  std::vector<std::string> out;
  for (const CoreInstance& c : cores) out.push_back(c.name);
  return out;
}

const Link* Accelerator::link_between(int a, int b) const {
  const Link* best = nullptr;
  const bool offchip = a == kOffChip || b == kOffChip;
  for (const Link& l : links) {
    if (l.offchip_only && !offchip) continue;
    if (l.connects(a, b) && (!best || l.bandwidth_bits_per_cycle > best->bandwidth_bits_per_cycle)) best = &l;
  }
  return best;
}

std::vector<const Link*> Accelerator::link_table() const {
  const std::size_t n = cores.size() + 1;
  std::vector<const Link*> table(n * n, nullptr);
  for (const Link& l : links) {  // in file order: a later link wins only when strictly wider (link_between's rule)
    for (int a : l.endpoints) {
      for (int b : l.endpoints) {
        if (a == b) continue;
        if (l.offchip_only && a != kOffChip && b != kOffChip) continue;
        const Link*& best = table[link_table_index(a, b)];
        if (!best || l.bandwidth_bits_per_cycle > best->bandwidth_bits_per_cycle) best = &l;
      }
    }
  }
  return table;
}

Core with_offchip(const Core& core, const OffChipMemory& offchip, const StreamedOperands& streamed) {
  Core c = core;
  if (!streamed.any()) return c;
  if (streamed.onchip_shift > 0) {
    std::set<int> shrunk;
    for (int s = 0; s < 3; ++s) {
      const int top = streamed.slot[s] ? core.top_onchip_index(static_cast<OperandSlot>(s)) : -1;
      if (top < 0 || !shrunk.insert(top).second) continue;
      std::int64_t& size = c.memories[static_cast<std::size_t>(top)].size_bits;
      size = std::max<std::int64_t>(1, size >> streamed.onchip_shift);
    }
  }
  MemoryLevel m;
  m.name = offchip.name;
  m.size_bits = offchip.size_bits;
  m.offchip = true;
  const auto word = static_cast<std::int64_t>(offchip.bandwidth_bits_per_cycle);
  m.read_energy_pj = offchip.read_energy_pj_per_bit * static_cast<double>(word);
  m.write_energy_pj = offchip.write_energy_pj_per_bit * static_cast<double>(word);
  for (const ArrayDim& d : core.array.dims) m.served_dims.push_back(d.name);
  Port port;
  port.name = "port";
  port.type = PortType::read_write;
  port.bandwidth_min_bits = word;
  port.bandwidth_max_bits = word;
  bool appended = false;
  for (int s = 0; s < 3; ++s) {
    if (!streamed.slot[s]) continue;
    const auto slot = static_cast<OperandSlot>(s);
    if (core.lives_offchip(slot)) continue;  // the core's own top level is the off-chip memory
    appended = true;
    m.operands.push_back(slot);
    for (Direction d : {Direction::tl, Direction::fh, Direction::fl, Direction::th}) {
      if (slot != OperandSlot::O && (d == Direction::fl || d == Direction::th)) continue;
      port.allocation.push_back(PortAllocation{slot, d});
    }
    // The level below now needs the directions that face upwards.
    const auto levels = c.levels_of(slot);
    if (!levels.empty()) {
      MemoryLevel& below = c.memories[static_cast<std::size_t>(levels.back())];
      const Direction up = slot == OperandSlot::O ? Direction::th : Direction::fh;
      if (!below.port_for(slot, up)) {
        // Borrow the port that already faces the array in the same sense (write for fh, read for th).
        for (Port& p : below.ports) {
          const bool writes = p.type != PortType::read;
          const bool reads = p.type != PortType::write;
          if ((up == Direction::fh && writes) || (up == Direction::th && reads)) {
            p.allocation.push_back(PortAllocation{slot, up});
            break;
          }
        }
      }
      if (slot == OperandSlot::O && !below.port_for(slot, Direction::fh)) {
        for (Port& p : below.ports) {
          if (p.type != PortType::read) {
            p.allocation.push_back(PortAllocation{slot, Direction::fh});
            break;
          }
        }
      }
    }
  }
  if (!appended) return c;
  m.ports.push_back(std::move(port));
  c.memories.push_back(std::move(m));
  return c;
}

std::string Accelerator::endpoint_name(int endpoint) const {
  if (endpoint == kOffChip) return offchip.name;
  return cores.at(static_cast<std::size_t>(endpoint)).name;
}

AcceleratorPtr load_accelerator(const std::filesystem::path& file) { return ArchitectureDocuments::read(file).build(); }

}  // namespace monet
