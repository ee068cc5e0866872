#include "monet/training/precision.hpp"

#include <sstream>

#include "monet/config/params.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/util/strings.hpp"

namespace monet {

std::optional<Precision> Precision::preset_named(const std::string& name) {
  Precision p;
  p.preset = name;
  if (name == "fp32") return p;
  if (name == "mixed_bf16") {
    p.activation = p.weight = p.gradient = p.weight_gradient = ElementType::bf16;
    return p;  // master weights, optimizer states and partial sums stay fp32
  }
  if (name == "int8_stream") {
    p.activation = p.weight = ElementType::int8;
    p.partial_sum = ElementType::int16;
    return p;
  }
  return std::nullopt;
}

std::vector<std::string> Precision::preset_names() { return {"fp32", "mixed_bf16", "int8_stream"}; }

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
}  // namespace

Precision read_precision(TableReader& t) {
  const std::string preset = t.choice("preset", Precision::preset_names()).value_or("fp32");
  Precision p = *Precision::preset_named(preset);
  for (const char* c : kClasses) {
    const toml::node* n = t.raw().get(c);
    t.mark_used(c);
    if (!n) continue;
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
    field(p, c) = *e;
  }
  p.loss_scaling = t.boolean("loss_scaling").value_or(false);
  return p;
}

std::string precision_toml(const Precision& p) {
  std::ostringstream out;
  out << "preset = \"" << p.preset << "\"\n";
  Precision copy = p;
  for (const char* c : kClasses) out << c << " = \"" << to_string(field(copy, c)) << "\"\n";
  out << "loss_scaling = " << (p.loss_scaling ? "true" : "false") << "\n";
  return out.str();
}

namespace {
bool is_float(ElementType t) {
  return t == ElementType::fp64 || t == ElementType::fp32 || t == ElementType::fp16 || t == ElementType::bf16 ||
         t == ElementType::fp8;
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
  for (const Operator& op : graph.operators()) {
    Operator& o = b.op(op.id);
    for (Operand& operand : o.operands) {
      operand.precision_bits = bits_of(type[static_cast<std::size_t>(operand.tensor)]);
      operand.partial_sum_bits = 0;
      if (operand.is_output() && is_mac_kind(o.kind) && bits_of(p.partial_sum) > operand.precision_bits) {
        operand.partial_sum_bits = bits_of(p.partial_sum);
      }
    }
  }
  return std::move(b).build();
}

}  // namespace monet
