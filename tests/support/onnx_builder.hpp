#pragma once
// Builds small ONNX models in tests (no Python needed): inputs, initializers (shape only, or with data),
// nodes with attributes, outputs; saves them to a file for the onnx frontend.
#include <onnx/onnx_pb.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace monet::test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  OnnxBuilder& input(const std::string& name, const std::vector<std::int64_t>& shape,
                     int type = onnx::TensorProto::FLOAT) {
    value_info(model_.mutable_graph()->add_input(), name, shape, type);
    return *this;
  }
  /// An input whose axes are sizes ("8") or symbolic names ("batch").
  OnnxBuilder& symbolic_input(const std::string& name, const std::vector<std::string>& dims,
                              int type = onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* shape = t->mutable_shape();
    for (const auto& d : dims) {
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
      else shape->add_dim()->set_dim_param(d);
    }
    return *this;
  }
  OnnxBuilder& output(const std::string& name, const std::vector<std::int64_t>& shape = {},
                      int type = onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    if (!shape.empty()) value_info(v, name, shape, type);
    return *this;
  }
  /// A stored tensor without data (like the exports in workloads/onnx).
  OnnxBuilder& initializer(const std::string& name, const std::vector<std::int64_t>& shape,
                           int type = onnx::TensorProto::FLOAT) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : shape) t->add_dims(d);
    return *this;
  }
  /// A stored tensor whose data lives in an external file (large models), which need not exist.
  OnnxBuilder& external_initializer(const std::string& name, const std::vector<std::int64_t>& shape,
                                    const std::string& location) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : shape) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    return *this;
  }
  /// A stored int64 tensor with data.
  OnnxBuilder& ints(const std::string& name, const std::vector<std::int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  /// A Constant node producing a float scalar or an int64 vector.
  OnnxBuilder& constant(const std::string& out, float value) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(value);
    return *this;
  }
  OnnxBuilder& constant_ints(const std::string& out, const std::vector<std::int64_t>& values, bool scalar = false) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) a->mutable_t()->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) a->mutable_t()->add_int64_data(v);
    return *this;
  }
  /// A Constant node producing a float tensor of the given shape.
  OnnxBuilder& constant_floats(const std::string& out, const std::vector<float>& values,
                               const std::vector<std::int64_t>& shape) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : shape) a->mutable_t()->add_dims(d);
    for (auto v : values) a->mutable_t()->add_float_data(v);
    return *this;
  }
  /// A Constant of the given shape whose data was stripped (only the shape is known).
  OnnxBuilder& constant_shape_only(const std::string& out, const std::vector<std::int64_t>& shape) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : shape) a->mutable_t()->add_dims(d);
    return *this;
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "/" + op + "_" + std::to_string(model_.graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  std::filesystem::path save(const std::filesystem::path& file) const {
    std::ofstream out(file, std::ios::binary);
    model_.SerializeToOstream(&out);
    return file;
  }

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, const std::vector<std::int64_t>& shape,
                         int type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (auto d : shape) s->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto model_;
};

}  // namespace monet::test
