#include "converter.hpp"

#include "conversion.hpp"
#include "op_table.hpp"

namespace monet::onnx_frontend {

const std::vector<std::string>& supported_op_types() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const OpRule& r : op_rules()) {
      if (r.treatment != Treatment::unsupported) v.emplace_back(r.type);
    }
    return v;
  }();
  return ops;
}

GraphPtr convert(const onnx::ModelProto& model, const std::string& file, const ConvertOptions& options) {
  return Converter(model, file, options).run();
}

}  // namespace monet::onnx_frontend
