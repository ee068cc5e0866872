#include "monet/arch/accelerator.hpp"

#include <algorithm>
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
  for (const Link& l : links) {
    if (l.connects(a, b) && (!best || l.bandwidth_bits_per_cycle > best->bandwidth_bits_per_cycle)) best = &l;
  }
  return best;
}

Core with_offchip(const Core& core, const OffChipMemory& offchip, const StreamedOperands& streamed) {
  Core c = core;
  if (!streamed.any()) return c;
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
  for (int s = 0; s < 3; ++s) {
    if (!streamed.slot[s]) continue;
    const auto slot = static_cast<OperandSlot>(s);
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
  m.ports.push_back(std::move(port));
  c.memories.push_back(std::move(m));
  return c;
}

std::string Accelerator::endpoint_name(int endpoint) const {
  if (endpoint == kOffChip) return offchip.name;
  return cores.at(static_cast<std::size_t>(endpoint)).name;
}

AcceleratorPtr load_accelerator(const std::filesystem::path& file) {
  TomlDocument doc = TomlDocument::parse_file(file);
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto acc = std::make_shared<Accelerator>();
  acc->file = file.string();

  TableReader head = root.required_table("accelerator");
  acc->name = head.required_string("name");
  acc->frequency_hz = head.number("frequency_hz", Bounds::positive()).value_or(0.0);
  head.finish();

  // Cores: each instance refers to a core file; a file used by several instances is read once.
  std::map<std::filesystem::path, CorePtr> loaded;
  auto cores = root.table_array("cores");
  if (cores.empty()) root.fail_table("an accelerator needs at least one [[cores]] entry");
  for (TableReader& c : cores) {
    CoreInstance inst;
    inst.id = static_cast<int>(acc->cores.size());
    inst.origin = c.where();
    inst.name = c.required_string("name");
    if (acc->core_index(inst.name) >= 0) c.fail("name", "core '" + inst.name + "' is defined twice");
    const auto path = c.required_path("file");
    auto it = loaded.find(path);
    if (it == loaded.end()) it = loaded.emplace(path, load_core(path)).first;
    inst.core = it->second;
    c.finish();
    acc->cores.push_back(std::move(inst));
  }

  TableReader off = root.required_table("offchip");
  acc->offchip.name = off.string("name").value_or("dram");
  if (acc->core_index(acc->offchip.name) >= 0) off.fail("name", "'" + acc->offchip.name + "' is also a core name");
  acc->offchip.size_bits = off.required_integer("size_bits", Bounds::positive());
  acc->offchip.read_energy_pj_per_bit = off.required_number("read_energy_pj_per_bit", Bounds::non_negative());
  acc->offchip.write_energy_pj_per_bit = off.required_number("write_energy_pj_per_bit", Bounds::non_negative());
  acc->offchip.bandwidth_bits_per_cycle = off.required_number("bandwidth_bits_per_cycle", Bounds::positive());
  acc->offchip.ports = static_cast<int>(off.integer("ports", Bounds::at_least(1)).value_or(1));
  off.finish();

  std::vector<std::string> endpoint_names = acc->core_names();
  endpoint_names.push_back(acc->offchip.name);
  auto links = root.table_array("links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    TableReader& l = links[i];
    Link link;
    link.origin = l.where();
    link.name = l.string("name").value_or("link" + std::to_string(i));
    const std::string kind = l.choice("kind", {"point_to_point", "bus"}).value_or("point_to_point");
    link.kind = kind == "bus" ? LinkKind::bus : LinkKind::point_to_point;
    auto ends = l.string_list("endpoints");
    if (!ends) l.fail_table("missing required key 'endpoints' (names of cores, or '" + acc->offchip.name + "')");
    for (const std::string& e : *ends) {
      int id = e == acc->offchip.name ? Accelerator::kOffChip : acc->core_index(e);
      if (e != acc->offchip.name && id < 0) {
        l.fail("endpoints", "'" + e + "' is neither a core nor the off-chip memory" + did_you_mean(e, endpoint_names));
      }
      if (std::find(link.endpoints.begin(), link.endpoints.end(), id) != link.endpoints.end()) {
        l.fail("endpoints", "'" + e + "' is listed twice");
      }
      link.endpoints.push_back(id);
    }
    if (link.kind == LinkKind::point_to_point && link.endpoints.size() != 2) {
      l.fail("endpoints", "a point_to_point link joins exactly 2 endpoints, got " + std::to_string(link.endpoints.size()));
    }
    if (link.kind == LinkKind::bus && link.endpoints.size() < 2) {
      l.fail("endpoints", "a bus joins at least 2 endpoints");
    }
    link.bandwidth_bits_per_cycle = l.required_number("bandwidth_bits_per_cycle", Bounds::positive());
    link.energy_pj_per_bit = l.number("energy_pj_per_bit", Bounds::non_negative()).value_or(0.0);
    l.finish();
    acc->links.push_back(std::move(link));
  }
  root.finish();

  for (const CoreInstance& c : acc->cores) {
    if (!acc->link_between(c.id, Accelerator::kOffChip)) {
      throw UserError(c.origin, "core '" + c.name + "' has no link to the off-chip memory '" + acc->offchip.name +
                                    "': add a [[links]] entry whose endpoints include both");
    }
  }
  return acc;
}

}  // namespace monet
