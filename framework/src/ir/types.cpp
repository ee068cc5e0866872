#include "monet/ir/types.hpp"

#include <array>
#include <utility>

namespace monet {

namespace {
template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<E, const char*>, N>& table, std::string_view s) {
  for (const auto& [e, name] : table) {
    if (s == name) return e;
  }
  return std::nullopt;
}
template <class E, std::size_t N>
std::string name_of(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [x, name] : table) {
    if (x == e) return name;
  }
  return "?";
}
template <class E, std::size_t N>
std::vector<std::string> names(const std::array<std::pair<E, const char*>, N>& table) {
  std::vector<std::string> out;
  for (const auto& [e, name] : table) out.emplace_back(name);
  return out;
}

constexpr std::array<std::pair<ElementType, const char*>, 12> kElementTypes{{
    {ElementType::fp64, "fp64"},   {ElementType::fp32, "fp32"},   {ElementType::fp16, "fp16"},
    {ElementType::bf16, "bf16"},   {ElementType::fp8, "fp8"},     {ElementType::int64, "int64"},
    {ElementType::int32, "int32"}, {ElementType::int16, "int16"}, {ElementType::int8, "int8"},
    {ElementType::int4, "int4"},   {ElementType::uint8, "uint8"}, {ElementType::boolean, "bool"},
}};
constexpr std::array<std::pair<TensorRole, const char*>, 11> kRoles{{
    {TensorRole::input, "input"},
    {TensorRole::label, "label"},
    {TensorRole::activation, "activation"},
    {TensorRole::weight, "weight"},
    {TensorRole::buffer, "buffer"},
    {TensorRole::gradient, "gradient"},
    {TensorRole::weight_gradient, "weight_gradient"},
    {TensorRole::optimizer_state, "optimizer_state"},
    {TensorRole::master_weight, "master_weight"},
    {TensorRole::index, "index"},
    {TensorRole::loss, "loss"},
}};
constexpr std::array<std::pair<SparseUpdate, const char*>, 3> kSparseUpdates{{
    {SparseUpdate::rowwise_adagrad, "rowwise_adagrad"}, {SparseUpdate::adagrad, "adagrad"}, {SparseUpdate::sgd, "sgd"}}};
constexpr std::array<std::pair<OpKind, const char*>, 12> kKinds{{
    {OpKind::conv, "conv"},
    {OpKind::gemm, "gemm"},
    {OpKind::matmul, "matmul"},
    {OpKind::elementwise, "elementwise"},
    {OpKind::pooling, "pooling"},
    {OpKind::reduction, "reduction"},
    {OpKind::softmax, "softmax"},
    {OpKind::norm, "norm"},
    {OpKind::embedding, "embedding"},
    {OpKind::loss, "loss"},
    {OpKind::view, "view"},
    {OpKind::copy, "copy"},
}};
constexpr std::array<std::pair<Phase, const char*>, 6> kPhases{{
    {Phase::forward, "forward"},
    {Phase::loss, "loss"},
    {Phase::backward_dx, "backward_dx"},
    {Phase::backward_dw, "backward_dw"},
    {Phase::optimizer, "optimizer"},
    {Phase::recompute, "recompute"},
}};
constexpr std::array<std::pair<OperandSlot, const char*>, 3> kSlots{{
    {OperandSlot::I1, "I1"},
    {OperandSlot::I2, "I2"},
    {OperandSlot::O, "O"},
}};
}  // namespace

int bits_of(ElementType t) {
  switch (t) {
    case ElementType::fp64: case ElementType::int64: return 64;
    case ElementType::fp32: case ElementType::int32: return 32;
    case ElementType::fp16: case ElementType::bf16: case ElementType::int16: return 16;
    case ElementType::fp8: case ElementType::int8: case ElementType::uint8: case ElementType::boolean: return 8;
    case ElementType::int4: return 4;
  }
  return 0;
}
std::string to_string(ElementType t) { return name_of(kElementTypes, t); }
std::optional<ElementType> parse_element_type(std::string_view s) { return lookup(kElementTypes, s); }
std::vector<std::string> all_element_type_names() { return names(kElementTypes); }

std::string to_string(TensorRole r) { return name_of(kRoles, r); }
std::optional<TensorRole> parse_tensor_role(std::string_view s) { return lookup(kRoles, s); }
std::vector<std::string> all_tensor_role_names() { return names(kRoles); }
std::string to_string(SparseUpdate u) { return name_of(kSparseUpdates, u); }
std::optional<SparseUpdate> parse_sparse_update(std::string_view s) { return lookup(kSparseUpdates, s); }
std::vector<std::string> all_sparse_update_names() { return names(kSparseUpdates); }

std::string to_string(OpKind k) { return name_of(kKinds, k); }
std::optional<OpKind> parse_op_kind(std::string_view s) { return lookup(kKinds, s); }
std::vector<std::string> all_op_kind_names() { return names(kKinds); }
bool is_mac_kind(OpKind k) { return k == OpKind::conv || k == OpKind::gemm || k == OpKind::matmul; }

std::string to_string(Phase p) { return name_of(kPhases, p); }
std::optional<Phase> parse_phase(std::string_view s) { return lookup(kPhases, s); }

std::string to_string(OperandSlot s) { return name_of(kSlots, s); }
std::optional<OperandSlot> parse_operand_slot(std::string_view s) { return lookup(kSlots, s); }

}  // namespace monet
