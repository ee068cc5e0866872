#pragma once
// Values of an ONNX graph while it is converted: shapes, element types, folded constant data.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "monet/ir/tensor.hpp"

namespace monet::onnx_frontend {

enum class ValueKind {
  input,        // a graph input (data fed to the network)
  initializer,  // a stored tensor: parameter or buffer (data usually stripped)
  constant,     // computed from Constant nodes only: folded (data when known, else shape only)
  activation,   // produced by an IR operator
};

struct Value {
  std::string name;
  ValueKind kind = ValueKind::activation;
  Shape shape;
  ElementType dtype = ElementType::fp32;
  std::optional<std::vector<double>> data;  // known contents (small constants), row-major
  TensorId ir = kNone;                      // the IR tensor, once it exists
  /// Views: element strides into the storage they alias, as PyTorch lays them out (empty: contiguous). A
  /// reshape of a non-contiguous view copies, as PyTorch's contiguous() / reshape does.
  std::vector<std::int64_t> strides;
  int producer = -1;                        // ONNX node index
  std::vector<int> consumers;               // ONNX node indices, in order
  [[nodiscard]] bool is_scalar_constant() const {
    return kind == ValueKind::constant && data && data->size() == 1;
  }
};

/// ONNX TensorProto element type -> monet element type (nullopt for strings, complex ...).
std::optional<ElementType> element_type_of(int onnx_type);
/// Contents of a tensor when it carries data and has at most `max_elements` elements.
std::optional<std::vector<double>> tensor_data(const onnx::TensorProto& t, std::size_t max_elements = 1 << 16);
/// Integer attribute / list helpers.
std::optional<std::int64_t> attr_int(const onnx::NodeProto& n, const std::string& name);
std::optional<float> attr_float(const onnx::NodeProto& n, const std::string& name);
std::optional<std::vector<std::int64_t>> attr_ints(const onnx::NodeProto& n, const std::string& name);
const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name);

}  // namespace monet::onnx_frontend
