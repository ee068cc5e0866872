#include "monet/training/precision.hpp"

#include <algorithm>
#include <sstream>

#include "monet/config/params.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {
bool is_float(ElementType t) {
  return t == ElementType::fp64 || t == ElementType::fp32 || t == ElementType::fp16 || t == ElementType::bf16 ||
         t == ElementType::fp8;
}
}  // namespace

std::optional<Precision> Precision::preset_named(const std::string& name) {
  Precision p;
  p.preset = name;
  if (name == "fp32") return p;
  if (name == "mixed_bf16") {
    p.activation = p.weight = p.gradient = p.weight_gradient = ElementType::bf16;
    return p;  // master weights, optimizer states and partial sums stay fp32
  }
  if (name == "fp8_hybrid") {
    p = *preset_named("mixed_bf16");
    p.preset = name;
    p.weight_matmul = ElementType::fp8;
    return p;
  }
  if (name == "int8_stream") {
    p.activation = p.weight = ElementType::int8;
    p.partial_sum = ElementType::int16;
    return p;
  }
  return std::nullopt;
}

std::vector<std::string> Precision::preset_names() { return {"fp32", "mixed_bf16", "fp8_hybrid", "int8_stream"}; }

namespace {
const char* const kClasses[] = {"activation", "weight",        "gradient",    "weight_gradient", "optimizer_state",
                                "master_weight", "partial_sum", "dropout_mask"};

ElementType& field(Precision& p, const std::string& c) {
  if (c == "activation") return p.activation;
  if (c == "weight") return p.weight;
  if (c == "gradient") return p.gradient;
  if (c == "weight_gradient") return p.weight_gradient;
  if (c == "optimizer_state") return p.optimizer_state;
  if (c == "master_weight") return p.master_weight;
  if (c == "dropout_mask") return p.dropout_mask;
  return p.partial_sum;
}

std::optional<ElementType> from_bits(std::int64_t bits) {
  switch (bits) {
    case 64: return ElementType::fp64;
    case 32: return ElementType::fp32;
    case 16: return ElementType::bf16;
    case 8: return ElementType::int8;
    case 4: return ElementType::int4;
    default: return std::nullopt;
  }
}

/// An element type given as a name ("bf16") or a number of bits (16); nullopt when the key is absent.
std::optional<ElementType> element_type_at(TableReader& t, const std::string& c) {
  const toml::node* n = t.raw().get(c);
  t.mark_used(c);
  if (!n) return std::nullopt;
  std::optional<ElementType> e;
  if (n->is_integer()) {
    e = from_bits(n->as_integer()->get());
    if (!e) t.fail(c, "expected 64, 32, 16 (bf16), 8 (int8) or 4 (int4) bits, or an element type name");
  } else if (n->is_string()) {
    e = parse_element_type(n->as_string()->get());
    if (!e) {
      t.fail(c, "'" + n->as_string()->get() + "' is not an element type; expected one of " +
                    join(all_element_type_names(), ", ", true) + did_you_mean(n->as_string()->get(), all_element_type_names()));
    }
  } else {
    t.fail(c, "expected an element type (\"bf16\") or a number of bits (16), got " + toml_type_name(*n));
  }
  return e;
}

/// [precision.group.NAME]: operators (a glob or a list of globs over forward operator names), weight, activation.
PrecisionGroup read_group(TableReader& g, const std::string& name) {
  PrecisionGroup out;
  out.name = name;
  out.where = g.where();
  if (!g.has("operators")) g.fail_table("missing required key 'operators' (operator names or globs: \"layer1.*\")");
  if (g.raw().get("operators")->is_string()) {
    out.operators = {*g.string("operators")};
  } else {
    out.operators = *g.string_list("operators");
  }
  if (out.operators.empty()) g.fail("operators", "expected at least one operator name or glob");
  out.operators_where = g.where("operators");
  out.weight = element_type_at(g, "weight");
  out.activation = element_type_at(g, "activation");
  if (!out.weight && !out.activation) g.fail_table("a precision group sets weight, activation or both");
  g.finish();
  return out;
}
}  // namespace

Precision read_precision(TableReader& t) {
  const std::string preset = t.choice("preset", Precision::preset_names()).value_or("fp32");
  Precision p = *Precision::preset_named(preset);
  for (const char* c : kClasses) {
    if (const auto e = element_type_at(t, c)) field(p, c) = *e;
  }
  if (auto groups = t.table("group")) {
    for (const std::string& name : groups->keys()) {
      auto g = groups->table(name);
      if (!g) groups->fail(name, "expected a table: [precision.group." + name + "] with operators and weight or activation");
      p.groups.push_back(read_group(*g, name));
    }
    groups->finish();
  }
  p.loss_scaling = t.boolean("loss_scaling").value_or(false);
  if (const toml::node* n = t.raw().get("weight_matmul")) {
    t.mark_used("weight_matmul");
    const auto* name = n->as_string();
    const std::optional<ElementType> e = name ? parse_element_type(name->get()) : std::nullopt;
    if (name && name->get() == "none") {
      p.weight_matmul.reset();
    } else if (!e || !is_float(*e)) {
      t.fail("weight_matmul", "expected a floating-point element type (\"fp8\") or \"none\", got " +
                                  (name ? "'" + name->get() + "'" : toml_type_name(*n)));
    } else {
      p.weight_matmul = e;
    }
  }
  return p;
}

std::string precision_toml(const Precision& p) {
  std::ostringstream out;
  out << "preset = \"" << p.preset << "\"\n";
  Precision copy = p;
  for (const char* c : kClasses) out << c << " = \"" << to_string(field(copy, c)) << "\"\n";
  out << "loss_scaling = " << (p.loss_scaling ? "true" : "false") << "\n";
  out << "weight_matmul = \"" << (p.weight_matmul ? to_string(*p.weight_matmul) : "none") << "\"\n";
  for (const PrecisionGroup& g : p.groups) {
    out << "\n[precision.group." << to_string(ParamValue(g.name)) << "]\noperators = " << to_string(ParamValue(g.operators)) << "\n";
    if (g.weight) out << "weight = \"" << to_string(*g.weight) << "\"\n";
    if (g.activation) out << "activation = \"" << to_string(*g.activation) << "\"\n";
  }
  return out.str();
}

namespace {
bool flag(const Operator& op, const char* name) {
  const auto it = op.attributes.find(name);
  return it != op.attributes.end() && !it->second.empty() && it->second.front() != 0;
}

/// The MAC-kind operators of linear layers: they read a weight or write a weight gradient, and neither they nor
/// their forward operator keep the working precision.
std::vector<bool> narrow_matmuls(const Graph& g) {
  std::vector<bool> narrow(g.operators().size(), false);
  for (const Operator& op : g.operators()) {
    if (!is_mac_kind(op.kind) || flag(op, "keeps_working_precision")) continue;
    if (op.derived_from != kNone && flag(g.op(op.derived_from), "keeps_working_precision")) continue;
    narrow[static_cast<std::size_t>(op.id)] = std::any_of(op.operands.begin(), op.operands.end(), [&](const Operand& o) {
      const TensorRole role = g.tensor(o.tensor).role;
      return o.is_output() ? role == TensorRole::weight_gradient : role == TensorRole::weight;
    });
  }
  return narrow;
}
}  // namespace

namespace {
/// [precision.group]s, in order (a later group wins): the weights the group's forward operators read and the
/// activations they (and their recomputations) produce take the group's types — integer ones too (an int8
/// workload's layer quantized to int4); index and boolean tensors are other roles and keep theirs.
void apply_groups(const Graph& graph, const Precision& p, GraphBuilder& b, std::vector<ElementType>& type) {
  for (const PrecisionGroup& g : p.groups) {
    bool matched = false;
    for (const Operator& op : graph.operators()) {
      const bool forward = op.phase == Phase::forward;
      if (!forward && op.phase != Phase::recompute) continue;
      const std::string& name = forward || op.derived_from == kNone ? op.name : graph.op(op.derived_from).name;
      if (!std::any_of(g.operators.begin(), g.operators.end(), [&](const std::string& glob) { return glob_match(glob, name); })) continue;
      matched = matched || forward;
      for (const Operand& o : op.operands) {
        const Tensor& t = graph.tensor(o.tensor);
        if (t.dtype == ElementType::boolean) continue;
        const std::optional<ElementType> to = o.is_output() ? (t.role == TensorRole::activation ? g.activation : std::nullopt)
                                                            : (t.role == TensorRole::weight ? g.weight : std::nullopt);
        if (to) type[static_cast<std::size_t>(t.id)] = b.tensor(t.id).dtype = *to;
      }
    }
    if (!matched) {
      throw UserError(g.operators_where, "precision group '" + g.name + "': " + join(g.operators, ", ", true) +
                                             " matches no forward operator of the workload");
    }
  }
}
}  // namespace

GraphPtr apply_precision(const Graph& graph, const Precision& p) {
  GraphBuilder b(graph);
  std::vector<ElementType> type(graph.tensors().size());
  for (const Tensor& t : graph.tensors()) {
    Tensor& x = b.tensor(t.id);
    if (is_float(x.dtype)) {
      switch (x.role) {
        case TensorRole::input: case TensorRole::activation: x.dtype = p.activation; break;
        case TensorRole::weight: x.dtype = p.weight; break;
        case TensorRole::gradient: x.dtype = p.gradient; break;
        case TensorRole::weight_gradient: x.dtype = p.weight_gradient; break;
        case TensorRole::optimizer_state: x.dtype = p.optimizer_state; break;
        case TensorRole::master_weight: x.dtype = p.master_weight; break;
        case TensorRole::buffer: x.dtype = p.weight; break;
        case TensorRole::label: case TensorRole::index: case TensorRole::loss: break;
      }
    }
    type[static_cast<std::size_t>(t.id)] = x.dtype;
  }
  apply_groups(graph, p, b, type);
  const std::vector<bool> narrow = p.weight_matmul ? narrow_matmuls(graph) : std::vector<bool>(graph.operators().size());
  if (p.weight_matmul) {
    for (const Tensor& t : graph.tensors()) {
      if ((t.role != TensorRole::activation && t.role != TensorRole::gradient) || !is_float(t.dtype) || t.consumers.empty()) continue;
      const bool only_narrow = std::all_of(t.consumers.begin(), t.consumers.end(),
                                           [&](OperatorId c) { return narrow[static_cast<std::size_t>(c)]; });
      if (only_narrow) type[static_cast<std::size_t>(t.id)] = b.tensor(t.id).dtype = *p.weight_matmul;
    }
  }
  for (const Operator& op : graph.operators()) {
    Operator& o = b.op(op.id);
    const bool narrowed = narrow[static_cast<std::size_t>(op.id)];
    if (narrowed) o.attributes["matmul_type"] = {static_cast<std::int64_t>(*p.weight_matmul)};
    for (Operand& operand : o.operands) {
      operand.precision_bits = bits_of(type[static_cast<std::size_t>(operand.tensor)]);
      if (narrowed && !operand.is_output()) operand.precision_bits = bits_of(*p.weight_matmul);
      operand.partial_sum_bits = 0;
      if (operand.is_output() && is_mac_kind(o.kind) && bits_of(p.partial_sum) > operand.precision_bits) {
        operand.partial_sum_bits = bits_of(p.partial_sum);
      }
    }
  }
  return std::move(b).build();
}

}  // namespace monet
