#include "values.hpp"

#include <cstring>

namespace monet::onnx_frontend {

std::optional<ElementType> element_type_of(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return ElementType::fp32;
    case onnx::TensorProto::UINT8: return ElementType::uint8;
    case onnx::TensorProto::INT8: return ElementType::int8;
    case onnx::TensorProto::INT16: return ElementType::int16;
    case onnx::TensorProto::UINT16: return ElementType::int16;
    case onnx::TensorProto::INT32: return ElementType::int32;
    case onnx::TensorProto::UINT32: return ElementType::int32;
    case onnx::TensorProto::INT64: return ElementType::int64;
    case onnx::TensorProto::UINT64: return ElementType::int64;
    case onnx::TensorProto::BOOL: return ElementType::boolean;
    case onnx::TensorProto::FLOAT16: return ElementType::fp16;
    case onnx::TensorProto::BFLOAT16: return ElementType::bf16;
    case onnx::TensorProto::DOUBLE: return ElementType::fp64;
    default: return std::nullopt;
  }
}

namespace {
template <class T>
std::vector<double> from_raw(const std::string& raw) {
  std::vector<double> out(raw.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
  return out;
}
}  // namespace

std::optional<std::vector<double>> tensor_data(const onnx::TensorProto& t, std::size_t max_elements) {
  std::size_t n = 1;
  for (auto d : t.dims()) n *= static_cast<std::size_t>(d);
  if (n > max_elements || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<double> out;
  if (t.has_raw_data() && !t.raw_data().empty()) {
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT: out = from_raw<float>(raw); break;
      case onnx::TensorProto::DOUBLE: out = from_raw<double>(raw); break;
      case onnx::TensorProto::INT64: out = from_raw<std::int64_t>(raw); break;
      case onnx::TensorProto::INT32: out = from_raw<std::int32_t>(raw); break;
      case onnx::TensorProto::INT8: out = from_raw<std::int8_t>(raw); break;
      case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: out = from_raw<std::uint8_t>(raw); break;
      default: return std::nullopt;
    }
  } else if (t.float_data_size() > 0) {
    out.assign(t.float_data().begin(), t.float_data().end());
  } else if (t.int64_data_size() > 0) {
    out.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (t.int32_data_size() > 0) {
    out.assign(t.int32_data().begin(), t.int32_data().end());
  } else if (t.double_data_size() > 0) {
    out.assign(t.double_data().begin(), t.double_data().end());
  } else {
    return std::nullopt;  // no data stored (stripped weights)
  }
  if (out.size() != n) return std::nullopt;
  return out;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::optional<std::int64_t> attr_int(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  if (!a || a->type() != onnx::AttributeProto::INT) return std::nullopt;
  return a->i();
}

std::optional<float> attr_float(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  if (!a || a->type() != onnx::AttributeProto::FLOAT) return std::nullopt;
  return a->f();
}

std::optional<std::vector<std::int64_t>> attr_ints(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  if (!a || a->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

}  // namespace monet::onnx_frontend
