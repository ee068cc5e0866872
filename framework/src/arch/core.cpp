#include "monet/arch/core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "monet/config/toml_reader.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::string to_string(PortType t) {
  switch (t) {
    case PortType::read: return "read";
    case PortType::write: return "write";
    case PortType::read_write: return "read_write";
  }
  return "?";
}

std::string to_string(Direction d) {
  switch (d) {
    case Direction::tl: return "tl";
    case Direction::fh: return "fh";
    case Direction::th: return "th";
    case Direction::fl: return "fl";
  }
  return "?";
}

std::string to_string(ValueOrigin o) {
  switch (o) {
    case ValueOrigin::pinned: return "pinned";
    case ValueOrigin::pending: return "pending";
    case ValueOrigin::estimated: return "estimated";
  }
  return "?";
}

bool Port::serves(OperandSlot s, Direction d) const {
  return std::find(allocation.begin(), allocation.end(), PortAllocation{s, d}) != allocation.end();
}

bool MemoryLevel::serves(OperandSlot s) const {
  return std::find(operands.begin(), operands.end(), s) != operands.end();
}

const Port* MemoryLevel::port_for(OperandSlot s, Direction d) const {
  for (const Port& p : ports) {
    if (p.serves(s, d)) return &p;
  }
  return nullptr;
}

std::int64_t MemoryLevel::read_word_bits() const {
  std::int64_t w = 0;
  for (const Port& p : ports) {
    if (p.type != PortType::write) w = std::max(w, p.bandwidth_max_bits);
  }
  return w;
}

std::int64_t MemoryLevel::write_word_bits() const {
  std::int64_t w = 0;
  for (const Port& p : ports) {
    if (p.type != PortType::read) w = std::max(w, p.bandwidth_max_bits);
  }
  return w;
}

bool Core::runs(OpKind k) const { return std::find(op_kinds.begin(), op_kinds.end(), k) != op_kinds.end(); }

std::vector<int> Core::levels_of(OperandSlot s) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < memories.size(); ++i) {
    if (memories[i].serves(s)) out.push_back(static_cast<int>(i));
  }
  return out;
}

const MemoryLevel& Core::top_level(OperandSlot s) const {
  for (std::size_t i = memories.size(); i-- > 0;) {
    if (memories[i].serves(s)) return memories[i];
  }
  throw InternalError("core '" + name + "' has no memory for " + to_string(s));
}

int Core::top_onchip_index(OperandSlot s) const {
  for (std::size_t i = memories.size(); i-- > 0;) {
    if (memories[i].serves(s) && !memories[i].offchip) return static_cast<int>(i);
  }
  return -1;
}

bool Core::lives_offchip(OperandSlot s) const { return top_level(s).offchip; }

std::int64_t Core::resident_capacity_bits() const {
  std::set<int> tops;
  for (OperandSlot s : {OperandSlot::I1, OperandSlot::I2, OperandSlot::O}) {
    const int top = top_onchip_index(s);
    if (top >= 0) tops.insert(top);
  }
  std::int64_t bits = 0;
  for (int m : tops) bits += memories[static_cast<std::size_t>(m)].size_bits * memory_instances(memories[static_cast<std::size_t>(m)]);
  return bits;
}

std::int64_t Core::memory_instances(const MemoryLevel& m) const {
  std::int64_t n = 1;
  for (const ArrayDim& d : array.dims) {
    if (std::find(m.served_dims.begin(), m.served_dims.end(), d.name) == m.served_dims.end()) n *= d.size;
  }
  return n;
}

bool Core::estimates_pending() const {
  if (array.unit_energy_origin == ValueOrigin::pending || array.area_origin == ValueOrigin::pending) return true;
  return std::any_of(memories.begin(), memories.end(), [](const MemoryLevel& m) {
    return m.read_energy_origin == ValueOrigin::pending || m.write_energy_origin == ValueOrigin::pending ||
           m.area_origin == ValueOrigin::pending;
  });
}

std::optional<double> Core::area_mm2() const {
  if (!array.area_mm2) return std::nullopt;
  double area = *array.area_mm2;
  for (const MemoryLevel& m : memories) {
    if (m.offchip) continue;
    if (!m.area_mm2) return std::nullopt;
    area += *m.area_mm2 * static_cast<double>(memory_instances(m));
  }
  return area;
}

const MappingEntry* Core::mapping_for(const std::string& op_name, const std::string& op_type) const {
  for (const std::string& key : {op_name, op_type, std::string("default")}) {
    for (const MappingEntry& m : mappings) {
      if (m.name == key) return &m;
    }
  }
  return nullptr;
}

// ------------------------------------------------------------------------------------------------ parse

namespace {

const std::vector<std::string> kSlotNames{"I1", "I2", "O"};
const std::vector<std::string> kDirectionNames{"tl", "fh", "th", "fl"};
const std::vector<std::string> kPortTypeNames{"read", "write", "read_write"};

OperandSlot parse_slot(TableReader& t, std::string_view key, const std::string& text, const SourceLocation& where) {
  auto s = parse_operand_slot(text);
  if (!s) {
    throw UserError(where, t.key_name(key) + ": '" + text + "' is not a memory operand; expected one of " +
                               join(kSlotNames, ", ", true) + did_you_mean(text, kSlotNames));
  }
  return *s;
}

Port parse_port(TableReader t, const MemoryLevel& mem) {
  Port p;
  p.name = t.string("name").value_or("");
  const auto type_opt = t.choice("type", kPortTypeNames);
  if (!type_opt) t.fail_table("missing required key 'type' (one of 'read', 'write', 'read_write')");
  const std::string& type = *type_opt;
  p.type = type == "read" ? PortType::read : type == "write" ? PortType::write : PortType::read_write;
  auto bw = t.integer("bandwidth_bits", Bounds::positive());
  auto bw_min = t.integer("bandwidth_min_bits", Bounds::positive());
  auto bw_max = t.integer("bandwidth_max_bits", Bounds::positive());
  if (bw && (bw_min || bw_max)) {
    t.fail("bandwidth_bits", "give either bandwidth_bits or bandwidth_min_bits/bandwidth_max_bits, not both");
  }
  if (bw) {
    p.bandwidth_min_bits = p.bandwidth_max_bits = *bw;
  } else {
    if (!bw_max) t.fail_table("missing required key 'bandwidth_bits' (bits/cycle) or 'bandwidth_max_bits'");
    p.bandwidth_max_bits = *bw_max;
    p.bandwidth_min_bits = bw_min.value_or(*bw_max);
    if (p.bandwidth_min_bits > p.bandwidth_max_bits) {
      t.fail("bandwidth_min_bits", "must not exceed bandwidth_max_bits (" + std::to_string(*bw_max) + ")");
    }
  }
  auto alloc = t.table("allocation");
  if (!alloc) t.fail_table("missing required key 'allocation' (e.g. allocation = { I1 = [\"tl\"], O = [\"fl\"] })");
  for (const std::string& slot_name : alloc->keys()) {
    const SourceLocation where = alloc->where(slot_name);
    const OperandSlot slot = parse_slot(*alloc, slot_name, slot_name, where);
    if (!mem.serves(slot)) {
      throw UserError(where, alloc->key_name(slot_name) + ": memory '" + mem.name + "' does not hold operand " +
                                 slot_name + " (its operands: " + [&] {
                                   std::vector<std::string> n;
                                   for (OperandSlot s : mem.operands) n.push_back(to_string(s));
                                   return join(n);
                                 }() + ")");
    }
    auto dirs = alloc->string_list(slot_name);
    for (const std::string& d : *dirs) {
      auto it = std::find(kDirectionNames.begin(), kDirectionNames.end(), d);
      if (it == kDirectionNames.end()) {
        throw UserError(where, alloc->key_name(slot_name) + ": '" + d + "' is not a direction; expected one of " +
                                   join(kDirectionNames, ", ", true) + did_you_mean(d, kDirectionNames));
      }
      const auto dir = static_cast<Direction>(it - kDirectionNames.begin());
      if ((p.type == PortType::read && !is_read(dir)) || (p.type == PortType::write && is_read(dir))) {
        throw UserError(where, alloc->key_name(slot_name) + ": direction '" + d + "' " +
                                   (is_read(dir) ? "reads" : "writes") + " but port '" + p.name + "' is a " +
                                   to_string(p.type) + " port");
      }
      p.allocation.push_back(PortAllocation{slot, dir});
    }
  }
  alloc->finish(kSlotNames);
  t.finish();
  return p;
}

/// A number the file may leave to the core's estimator: read when given (pinned), else pending.
double estimable_number(TableReader& t, std::string_view key, bool has_estimator, ValueOrigin& origin) {
  if (t.has(key) || !has_estimator) {
    if (!t.has(key)) t.fail_missing(key, "a number, or name an estimator in [core] to have it estimated");
    origin = ValueOrigin::pinned;
    return *t.number(key, Bounds::non_negative());
  }
  origin = ValueOrigin::pending;
  return 0.0;
}

/// An area key: pinned when given, left to the estimator when the core names one, else unknown.
std::optional<double> estimable_area(TableReader& t, bool has_estimator, ValueOrigin& origin) {
  if (auto a = t.number("area_mm2", Bounds::non_negative())) {
    origin = ValueOrigin::pinned;
    return a;
  }
  origin = has_estimator ? ValueOrigin::pending : ValueOrigin::pinned;
  return std::nullopt;
}

MemoryLevel parse_memory(TableReader t, const OperationalArray& array, bool has_estimator) {
  MemoryLevel m;
  m.origin = t.where();
  m.name = t.required_string("name");
  m.size_bits = t.required_integer("size_bits", Bounds::positive());
  m.read_energy_pj = estimable_number(t, "read_energy_pj", has_estimator, m.read_energy_origin);
  m.write_energy_pj = estimable_number(t, "write_energy_pj", has_estimator, m.write_energy_origin);
  m.area_mm2 = estimable_area(t, has_estimator, m.area_origin);
  const auto operands_opt = t.string_list("operands");
  if (!operands_opt) t.fail_table("missing required key 'operands' (a list of I1, I2, O)");
  const std::vector<std::string>& operands = *operands_opt;
  if (operands.empty()) t.fail("operands", "a memory must hold at least one operand (I1, I2, O)");
  for (const std::string& o : operands) {
    OperandSlot s = parse_slot(t, "operands", o, t.where("operands"));
    if (m.serves(s)) t.fail("operands", "operand " + o + " is listed twice");
    m.operands.push_back(s);
  }
  m.served_dims = t.string_list("served_dims").value_or(std::vector<std::string>{});
  for (const std::string& d : m.served_dims) {
    const bool known = std::any_of(array.dims.begin(), array.dims.end(), [&](const ArrayDim& a) { return a.name == d; });
    if (!known) {
      std::vector<std::string> names;
      for (const ArrayDim& a : array.dims) names.push_back(a.name);
      t.fail("served_dims", "'" + d + "' is not a dimension of the operational array (" + join(names) + ")" +
                                did_you_mean(d, names));
    }
  }
  m.double_buffering = t.boolean("double_buffering").value_or(false);
  m.offchip = t.boolean("offchip").value_or(false);
  std::set<std::string> port_names;
  auto ports = t.table_array("ports");
  if (ports.empty()) t.fail_table("memory '" + m.name + "' needs at least one [[memories.ports]] entry");
  for (std::size_t i = 0; i < ports.size(); ++i) {
    Port p = parse_port(ports[i], m);
    if (p.name.empty()) p.name = "port" + std::to_string(i);
    if (!port_names.insert(p.name).second) ports[i].fail("name", "port '" + p.name + "' is defined twice");
    m.ports.push_back(std::move(p));
  }
  t.finish();
  return m;
}

/// Every level must be able to move its operands the way the cost models need (ZigZag's convention).
void check_hierarchy(const Core& core, const std::vector<SourceLocation>& where) {
  for (OperandSlot s : {OperandSlot::I1, OperandSlot::I2, OperandSlot::O}) {
    const auto levels = core.levels_of(s);
    if (levels.empty()) {
      throw UserError(SourceLocation{core.file}, "core '" + core.name + "': no memory holds operand " + to_string(s) +
                                                     "; every core needs memories for I1, I2 and O");
    }
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const MemoryLevel& m = core.memories[static_cast<std::size_t>(levels[i])];
      const bool top = i + 1 == levels.size();
      if (m.offchip && !top) {
        throw UserError(where[static_cast<std::size_t>(levels[i])],
                        "memory '" + m.name + "' is off chip (offchip = true) but not the top level of " + to_string(s) +
                            ": the off-chip memory can only be the last level of an operand's hierarchy");
      }
      std::vector<Direction> needed;
      if (s == OperandSlot::O) {
        needed.push_back(Direction::fl);
        if (!top) needed.push_back(Direction::th);
      } else {
        needed.push_back(Direction::tl);
        if (!top) needed.push_back(Direction::fh);
      }
      for (Direction d : needed) {
        if (!m.port_for(s, d)) {
          throw UserError(where[static_cast<std::size_t>(levels[i])],
                          "memory '" + m.name + "' holds " + to_string(s) + " but no port is allocated to (" +
                              to_string(s) + ", " + to_string(d) + "); add it to a port's allocation");
        }
      }
    }
  }
}

}  // namespace

namespace {

/// An array-dim -> { loop dim = factor } table (dataflow, spatial mappings).
void read_unrollings(TableReader& df, const Core& core, std::map<std::string, std::vector<Unrolling>>& out) {
  std::vector<std::string> dims;
  for (const ArrayDim& a : core.array.dims) dims.push_back(a.name);
  for (const std::string& array_dim : df.keys()) {
    auto it = std::find(dims.begin(), dims.end(), array_dim);
    if (it == dims.end()) {
      df.fail(array_dim, "'" + array_dim + "' is not a dimension of the operational array" + did_you_mean(array_dim, dims));
    }
    auto unroll = df.table(array_dim);
    std::int64_t product = 1;
    for (const std::string& loop_dim : unroll->keys()) {
      const std::int64_t f = *unroll->integer(loop_dim, Bounds::at_least(1));
      product *= f;
      out[array_dim].push_back(Unrolling{loop_dim, f});
    }
    const std::int64_t size = core.array.dims[static_cast<std::size_t>(it - dims.begin())].size;
    if (product > size) {
      df.fail(array_dim, "unrolls " + std::to_string(product) + " iterations on an array dimension of size " +
                             std::to_string(size));
    }
    unroll->finish();
  }
  df.finish();
}

std::vector<MappingEntry> read_mappings(TableReader& mt, const Core& core, const std::string& file) {
  std::vector<std::string> dims;
  for (const ArrayDim& a : core.array.dims) dims.push_back(a.name);
  std::vector<MappingEntry> out;
  for (const std::string& name : mt.keys()) {
    auto m = mt.table(name);
    MappingEntry e;
    e.name = name;
    if (auto sm = m->table("spatial_mapping")) read_unrollings(*sm, core, e.spatial_mapping);
    if (auto hint = m->table("spatial_mapping_hint")) {
      for (const std::string& array_dim : hint->keys()) {
        const auto hinted = *hint->string_list(array_dim);
        if (std::find(dims.begin(), dims.end(), array_dim) == dims.end()) {
          // ZigZag ignores hints for array dims a core lacks (its mixed mapping files carry hints for larger
          // arrays); say so rather than fail.
          spdlog::warn("{}: spatial_mapping_hint for '{}' ignored: core '{}' has no such array dimension ({})",
                       hint->key_location(array_dim).str(), array_dim, core.name, join(dims));
          continue;
        }
        e.spatial_mapping_hint[array_dim] = hinted;
      }
      hint->finish();
    }
    if (const toml::node* to = m->node("temporal_ordering")) {
      const toml::array* arr = to->as_array();
      if (!arr) m->fail("temporal_ordering", "expected a list of [loop dim, size] pairs, innermost first");
      for (const toml::node& entry : *arr) {
        const toml::array* pair = entry.as_array();
        const SourceLocation where = location_of(entry, file);
        if (!pair || pair->size() != 2 || !(*pair)[0].is_string() ||
            !((*pair)[1].is_integer() || ((*pair)[1].is_string() && (*pair)[1].as_string()->get() == "*"))) {
          throw UserError(where, m->key_name("temporal_ordering") +
                                     ": each entry is [\"DIM\", size] or [\"DIM\", \"*\"] (innermost first)");
        }
        const std::int64_t size = (*pair)[1].is_integer() ? (*pair)[1].as_integer()->get() : 0;
        e.temporal_ordering.emplace_back((*pair)[0].as_string()->get(), size);
      }
    }
    m->finish();
    out.push_back(std::move(e));
  }
  mt.finish();
  return out;
}

}  // namespace

std::vector<MappingEntry> parse_mappings(const TomlDocument& doc, const Core& core) {
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto mt = root.table("mapping");
  if (!mt) throw UserError(SourceLocation{doc.file()}, "a mapping file needs [mapping.<name>] tables (default, an operator type or an operator name)");
  auto out = read_mappings(*mt, core, doc.file());
  root.finish();
  return out;
}

CorePtr load_core(const std::filesystem::path& file) { return core_from_document(TomlDocument::parse_file(file)); }

CorePtr core_from_document(const TomlDocument& doc) {
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  auto core = std::make_shared<Core>();
  core->file = doc.file();

  TableReader head = root.required_table("core");
  core->name = head.required_string("name");
  core->cost_model = head.string("cost_model", "the name of a cost-model plugin").value_or("roofline");
  core->cost_model_origin = head.has("cost_model") ? head.where("cost_model") : head.where();
  if (auto name = head.string("estimator", "the name of an estimator plugin")) {
    EstimatorChoice e;
    e.name = *name;
    e.name_origin = head.where("estimator");
    e.technology_nm = head.required_number("technology_nm", Bounds::positive());
    e.technology_origin = head.where("technology_nm");
    core->estimator = std::move(e);
  } else if (head.has("technology_nm")) {
    head.fail("technology_nm", "a technology node is for an estimator: name one with estimator = \"...\" (see "
                               "docs/estimators.md)");
  }
  const bool has_estimator = core->estimator.has_value();
  if (auto kinds = head.string_list("op_kinds")) {
    for (const std::string& k : *kinds) {
      auto kind = parse_op_kind(k);
      if (!kind) {
        head.fail("op_kinds", "'" + k + "' is not an operator kind; expected some of " +
                                  join(all_op_kind_names(), ", ", true) + did_you_mean(k, all_op_kind_names()));
      }
      core->op_kinds.push_back(*kind);
    }
    if (core->op_kinds.empty()) head.fail("op_kinds", "a core must run at least one operator kind");
  } else {
    for (const std::string& k : all_op_kind_names()) core->op_kinds.push_back(*parse_op_kind(k));
  }
  head.finish();

  TableReader arr = root.required_table("array");
  auto dims = arr.string_list("dims").value_or(std::vector<std::string>{});
  auto sizes = arr.integer_list("sizes", Bounds::at_least(1)).value_or(std::vector<std::int64_t>{});
  if (dims.empty()) arr.fail_table("missing required key 'dims' (names of the array dimensions, e.g. [\"D1\", \"D2\"])");
  if (sizes.size() != dims.size()) {
    arr.fail("sizes", "expected " + std::to_string(dims.size()) + " sizes (one per dimension in 'dims'), got " +
                          std::to_string(sizes.size()));
  }
  std::set<std::string> seen;
  // PE counts, tile products and instance counts multiply these: refuse an array whose size overflows 64 bits.
  std::int64_t pes = 1;
  for (std::int64_t n : sizes) {
    if (__builtin_mul_overflow(pes, n, &pes)) arr.fail("sizes", "the array's size (the product of its sizes) overflows 64 bits");
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (!seen.insert(dims[i]).second) arr.fail("dims", "dimension '" + dims[i] + "' is listed twice");
    core->array.dims.push_back(ArrayDim{dims[i], sizes[i]});
  }
  core->array.unit_energy_pj = estimable_number(arr, "unit_energy_pj", has_estimator, core->array.unit_energy_origin);
  core->array.area_mm2 = estimable_area(arr, has_estimator, core->array.area_origin);
  core->array.precision_origin = arr.where();
  if (auto p = arr.string("precision", "an element type")) {
    core->array.precision = parse_element_type(*p);
    if (!core->array.precision) {
      arr.fail("precision", "'" + *p + "' is not an element type; expected one of " +
                                join(all_element_type_names(), ", ", true) + did_you_mean(*p, all_element_type_names()));
    }
    core->array.precision_origin = arr.where("precision");
  } else if (has_estimator) {
    arr.fail_table("missing required key 'precision' (the operand type of the array's units, e.g. \"int8\"): the "
                   "core's estimator needs it");
  }
  core->array.operation = arr.choice("operation", {"mac", "add"}).value_or("mac");
  core->array.energy_scales_with_width = arr.choice("energy_scaling", {"none", "operand_bits"}).value_or("none") == "operand_bits";
  if (core->array.energy_scales_with_width && !core->array.precision) {
    arr.fail("energy_scaling", "\"operand_bits\" scales unit_energy_pj from the array's precision: give precision (e.g. \"int8\")");
  }
  arr.finish();

  if (auto df = root.table("dataflow")) read_unrollings(*df, *core, core->dataflow);
  if (auto mt = root.table("mapping")) core->mappings = read_mappings(*mt, *core, doc.file());
  std::set<std::string> mem_names;
  std::vector<SourceLocation> mem_where;
  auto mems = root.table_array("memories");
  if (mems.empty()) root.fail_table("a core needs at least one [[memories]] entry (listed bottom-up)");
  for (TableReader& m : mems) {
    MemoryLevel level = parse_memory(m, core->array, has_estimator);
    if (!mem_names.insert(level.name).second) m.fail("name", "memory '" + level.name + "' is defined twice");
    mem_where.push_back(level.origin);
    core->memories.push_back(std::move(level));
  }
  if (auto params = root.table("cost_model_params")) {
    // Checked against the plugin's parameters when the model is created (the registry is not known here).
    for (const std::string& k : params->keys()) params->mark_used(k);
    core->cost_model_params = std::make_shared<const TomlDocument>(doc);
  }
  if (auto params = root.table("estimator_params")) {
    // Checked against the estimator's parameters when it is created (apply_estimators).
    if (!has_estimator) params->fail_table("[estimator_params] needs an estimator: name one in [core] estimator");
    for (const std::string& k : params->keys()) params->mark_used(k);
    core->estimator->params = std::make_shared<const TomlDocument>(doc);
  }
  root.finish();
  check_hierarchy(*core, mem_where);
  return core;
}

}  // namespace monet
