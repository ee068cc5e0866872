// Conversion: the values of the ONNX graph, the IR tensors and operators made for its nodes, and the dispatch
// of each node to its emitter. One pass over the nodes (ONNX keeps them in topological order):
//   * shapes are inferred here (value_info is only a cross-check: PyTorch exports leave many shapes out),
//   * nodes that compute only on constants are folded (shape subgraphs, masks built from Trilu/Equal ...),
//   * every other node becomes an IR operator — a true loop nest, or a zero-cost view,
//   * multi-node idioms become one semantic operator (patterns.cpp),
// then initializers are classified into trainable parameters and buffers.
#include "conversion.hpp"

#include <google/protobuf/stubs/common.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "monet/util/strings.hpp"
#include "op_table.hpp"

namespace monet::onnx_frontend {

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-4 * std::max(1.0, std::fabs(b)); }

Converter::Converter(const onnx::ModelProto& model, std::string file, const ConvertOptions& options)
    : model_(model), g_(model.graph()), file_(std::move(file)), options_(options),
      builder_(std::filesystem::path(file_).stem().string()) {  // the file's name: exports call every graph torch_jit
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  }
}

std::size_t Converter::axis_of(int node, std::int64_t axis, std::size_t rank) const {
  const std::int64_t a = normalize_axis(axis, rank);
  if (a < 0 || a >= static_cast<std::int64_t>(rank)) {
    fail(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<std::size_t>(a);
}

void Converter::fail_model(const std::string& message) const { throw UserError(SourceLocation{file_}, message); }

void Converter::fail(int node, const std::string& message) const {
  const auto& n = g_.node(node);
  throw UserError(SourceLocation{file_}, "node '" + node_name(node) + "' (" + n.op_type() + "): " + message);
}

GraphPtr Converter::run() {
  try {
    check_dims_bound();
    register_sources();
    index_consumers();
    find_patterns();
  } catch (const std::out_of_range&) {
    fail_model("malformed graph: a node lacks an input, output or attribute the import reads");
  } catch (const google::protobuf::FatalException&) {
    // protobuf's check of an index a node does not have, in the passes over the whole graph (found by fuzz_onnx)
    fail_model("malformed graph: a node lacks an input, output or attribute the import reads");
  }
  for (int i = 0; i < g_.node_size(); ++i) {
    if (absorbed_[static_cast<std::size_t>(i)]) continue;
    try {
      convert_node(i);
    } catch (const std::out_of_range&) {
      // A check this converter lacks: still an error naming the node, not a crash.
      fail(i, "malformed node: an input, attribute or index it needs is missing or out of range");
    } catch (const google::protobuf::FatalException&) {
      // The same found by protobuf: an input or output index the node does not have (found by fuzz_onnx).
      fail(i, "malformed node: an input, output or attribute it needs is missing");
    }
  }
  for (const auto& out : g_.output()) {
    if (!index_.contains(out.name())) fail_model("graph output '" + out.name() + "' is produced by no node");
  }
  classify();
  return std::move(builder_).build();
}

std::string Converter::node_name(int node) const {
  const auto& n = g_.node(node);
  return n.name().empty() ? n.op_type() + "_" + std::to_string(node) : n.name();
}

int Converter::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int Converter::add_value(Value v) {
  if (index_.contains(v.name)) fail_model("value '" + v.name + "' is defined twice");
  const int id = static_cast<int>(values_.size());
  index_[v.name] = id;
  values_.push_back(std::move(v));
  return id;
}

std::vector<int> Converter::inputs_of(int node) const {
  std::vector<int> in;
  for (const auto& name : g_.node(node).input()) {
    if (name.empty()) {
      in.push_back(-1);
      continue;
    }
    const int v = find(name);
    if (v < 0) fail(node, "input '" + name + "' is not defined before this node");
    in.push_back(v);
  }
  return in;
}

std::optional<Shape> Converter::declared_shape(const std::string& name) const {
  auto it = declared_.find(name);
  if (it == declared_.end()) return std::nullopt;
  return it->second;
}

void Converter::register_sources() {
  for (const auto& vi : g_.value_info()) declare(vi);
  for (const auto& vi : g_.output()) declare(vi);
  std::set<std::string> initializer_names;
  for (const auto& t : g_.initializer()) initializer_names.insert(t.name());
  for (const auto& in : g_.input()) {
    if (initializer_names.contains(in.name())) continue;  // old exports list initializers as inputs too
    const auto& type = in.type().tensor_type();
    Value v;
    v.name = in.name();
    v.kind = ValueKind::input;
    auto dt = element_type_of(type.elem_type());
    if (!dt) fail_model("graph input '" + in.name() + "' has an unsupported element type");
    v.dtype = *dt;
    if (!type.has_shape()) fail_model("graph input '" + in.name() + "' has no shape");
    for (const auto& d : type.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() > 0) {
        v.shape.push_back(d.dim_value());
        continue;
      }
      // A symbolic (dynamic) dimension: bound by [workload] dims.NAME, or by batch on the leading axis.
      const std::string& name = d.dim_param();
      if (auto it = options_.dims.find(name); !name.empty() && it != options_.dims.end()) {
        v.shape.push_back(it->second);
        continue;
      }
      if (options_.batch > 0 && v.shape.empty()) {
        v.shape.push_back(options_.batch);  // a symbolic batch dimension, given by the experiment
        continue;
      }
      const std::string axis = "axis " + std::to_string(v.shape.size()) + " of graph input '" + in.name() + "'";
      if (name.empty()) fail_model(axis + " has no size and no name; export with fixed shapes or named dynamic axes");
      fail_model(axis + " is the symbolic dimension '" + name + "'; bind it with [workload] dims." + name +
                 " = N (--set workload.dims." + name + "=N)");
    }
    if (options_.batch > 0 && !v.shape.empty() && v.shape[0] != options_.batch) {
      original_batch_ = v.shape[0];
      v.shape[0] = options_.batch;
    }
    v.ir = ir_tensor(v.name, v.shape, v.dtype, TensorRole::input);
    add_value(std::move(v));
  }
  for (const auto& t : g_.initializer()) {
    Value v;
    v.name = t.name();
    v.kind = ValueKind::initializer;
    auto dt = element_type_of(t.data_type());
    if (!dt) fail_model("initializer '" + t.name() + "' has an unsupported element type");
    v.dtype = *dt;
    v.shape.assign(t.dims().begin(), t.dims().end());
    v.data = tensor_data(t);
    add_value(std::move(v));
  }
}

void Converter::check_dims_bound() const {
  std::set<std::string> symbolic;
  for (const auto& in : g_.input()) {
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (!d.dim_param().empty()) symbolic.insert(d.dim_param());
    }
  }
  for (const auto& [name, size] : options_.dims) {
    if (symbolic.contains(name)) continue;
    const std::vector<std::string> known(symbolic.begin(), symbolic.end());
    throw UserError(options_.dims_where, "dims: '" + name + "' is not a symbolic dimension of " + file_ +
                                             (known.empty() ? " (its inputs have fixed shapes)"
                                                            : " (it has " + join(known, ", ", true) + ")") +
                                             did_you_mean(name, known));
  }
}

void Converter::declare(const onnx::ValueInfoProto& vi) {
  const auto& type = vi.type().tensor_type();
  if (!type.has_shape()) return;
  Shape s;
  for (const auto& d : type.shape().dim()) {
    if (!d.has_dim_value()) return;
    s.push_back(d.dim_value());
  }
  declared_[vi.name()] = s;
}

void Converter::index_consumers() {
  absorbed_.assign(static_cast<std::size_t>(g_.node_size()), false);
  for (int i = 0; i < g_.node_size(); ++i) {
    for (const auto& name : g_.node(i).input()) {
      if (!name.empty()) consumers_[name].push_back(i);
    }
    for (const auto& name : g_.node(i).output()) producer_[name] = i;
  }
  // Which values depend on no graph input (constants and stored tensors, and what is computed from them).
  std::set<std::string> graph_inputs;
  for (const auto& in : g_.input()) graph_inputs.insert(in.name());
  for (const auto& t : g_.initializer()) {
    graph_inputs.erase(t.name());
    static_value_.insert(t.name());
  }
  for (int i = 0; i < g_.node_size(); ++i) {
    const auto& n = g_.node(i);
    bool all_static = true;
    bool only_constants = true;
    for (const auto& name : n.input()) {
      if (name.empty()) continue;
      if (!static_value_.contains(name)) all_static = false;
      if (!constant_value_.contains(name)) only_constants = false;
    }
    if (n.op_type() == "Constant") all_static = only_constants = true;
    for (const auto& out : n.output()) {
      if (all_static) static_value_.insert(out);
      if (only_constants) constant_value_.insert(out);
    }
  }
}

const std::vector<int>& Converter::consumers(const std::string& name) const {
  static const std::vector<int> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

int Converter::producer(const std::string& name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? -1 : it->second;
}

int Converter::single_consumer(const std::string& name) const {
  const auto& c = consumers(name);
  bool is_output = false;
  for (const auto& o : g_.output()) is_output |= o.name() == name;
  return c.size() == 1 && !is_output ? c[0] : -1;
}

std::optional<double> Converter::constant_scalar(const std::string& name) const {
  const int p = producer(name);
  if (p < 0 || g_.node(p).op_type() != "Constant") return std::nullopt;
  const auto* a = attr(g_.node(p), "value");
  if (a && a->has_t()) {
    auto d = tensor_data(a->t(), 1);
    if (d && d->size() == 1) return (*d)[0];
  }
  if (auto f = attr_float(g_.node(p), "value_float")) return *f;
  return std::nullopt;
}

Operator Converter::base(int node, std::vector<int> extra_nodes) {
  Operator op;
  std::string name = node_name(node);
  if (builder_.has_operator(name)) name += "#" + std::to_string(node);
  op.name = name;
  op.type = g_.node(node).op_type();
  op.origin = SourceLocation{file_};
  for (int k : extra_nodes) op.source_nodes.push_back(node_name(k));
  if (std::find(extra_nodes.begin(), extra_nodes.end(), node) == extra_nodes.end()) {
    op.source_nodes.push_back(node_name(node));
  }
  return op;
}

TensorId Converter::tensor_of(int v) {
  Value& val = value(v);
  if (val.ir != kNone) return val.ir;
  TensorRole role = TensorRole::weight;  // stored tensors: classified at the end
  if (val.kind == ValueKind::constant) {
    // Computed from constants in the forward pass (torch.tril(ones), arange): not a stored buffer.
    const bool integer = val.dtype == ElementType::int64 || val.dtype == ElementType::int32;
    role = integer ? TensorRole::index : TensorRole::activation;
  } else if (val.kind != ValueKind::initializer) {
    throw InternalError("activation '" + val.name + "' has no IR tensor");
  }
  val.ir = ir_tensor(val.name, val.shape, val.dtype, role);
  return val.ir;
}

int Converter::define(int node, const std::string& name, Shape shape, ElementType dtype, ValueKind kind,
                      std::optional<std::vector<double>> data) {
  if (kind != ValueKind::constant && original_batch_ == 0) {
    if (auto declared = declared_shape(name); declared && *declared != shape) {
      fail(node, "monet infers shape " + to_string(shape) + " for '" + name + "' but the file declares " +
                     to_string(*declared));
    }
  }
  Value v;
  v.name = name;
  v.kind = kind;
  v.shape = std::move(shape);
  v.dtype = dtype;
  v.data = std::move(data);
  v.producer = node;
  return add_value(std::move(v));
}

TensorId Converter::output_tensor(int node, const std::string& name, const Shape& shape, ElementType dtype) {
  const int v = define(node, name, shape, dtype, ValueKind::activation);
  value(v).ir = ir_tensor(name, shape, dtype, TensorRole::activation);
  return value(v).ir;
}

TensorId Converter::ir_tensor(const std::string& name, const Shape& shape, ElementType dtype, TensorRole role) {
  Tensor t;
  t.name = name;
  t.shape = shape;
  t.dtype = dtype;
  t.role = role;
  t.origin = SourceLocation{file_};
  return builder_.add_tensor(std::move(t));
}

const std::vector<double>& Converter::const_data(int node, int v, const char* what) const {
  if (v < 0 || !value(v).data) {
    fail(node, std::string("needs the values of its ") + what + " input" +
                   (v >= 0 ? " '" + value(v).name + "'" : std::string()) +
                   ", which are not stored in the file or not computable from constants");
  }
  return *value(v).data;
}

std::vector<std::int64_t> Converter::const_ints(int node, int v, const char* what) const {
  std::vector<std::int64_t> out;
  for (double d : const_data(node, v, what)) {
    // Open slice ends are INT64_MAX / INT64_MIN: saturate instead of overflowing the conversion.
    if (d >= 9.2e18) out.push_back(std::numeric_limits<std::int64_t>::max());
    else if (d <= -9.2e18) out.push_back(std::numeric_limits<std::int64_t>::min());
    else out.push_back(static_cast<std::int64_t>(d));
  }
  return out;
}

void Converter::convert_node(int i) {
  const auto& n = g_.node(i);
  if (!n.domain().empty() && n.domain() != "ai.onnx") return unknown(i, nullptr);
  const std::string& op = n.op_type();
  // Patterns read the pattern's inputs, not the node's (those are absorbed values that never exist).
  if (activation_.contains(i)) return emit_activation(i);
  if (group_norm_.contains(i)) return emit_group_norm_pattern(i);
  if (layer_norm_.contains(i)) return emit_layer_norm_pattern(i);
  if (masked_.contains(i)) return emit_softmax(i, {});
  const OpRule* rule = op_rule(op);
  if (!rule || rule->treatment == Treatment::unsupported) return unknown(i, rule);
  const std::vector<int> in = inputs_of(i);
  bool all_constant = !in.empty();
  for (int v : in) {
    if (v >= 0 && value(v).kind != ValueKind::constant) all_constant = false;
  }
  if (rule->treatment == Treatment::folded) return fold_constant_op(i, in);
  if (all_constant && fold(i, in)) return;
  if (op == "Conv") return emit_conv(i, in);
  if (op == "ConvTranspose") return emit_conv_transpose(i, in);
  if (op == "Gemm") return emit_gemm(i, in);
  if (op == "MatMul") return emit_matmul(i, in);
  if (op == "Einsum") return emit_einsum(i, in);
  if (op == "BatchNormalization") return emit_batch_norm(i, in);
  if (op == "LayerNormalization") return emit_layer_norm(i, in);
  if (op == "InstanceNormalization" || op == "GroupNormalization") return emit_group_norm(i, in);
  if (op == "Softmax" || op == "LogSoftmax") return emit_softmax(i, in);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    return emit_pool(i, in);
  }
  if (op == "Gather") return emit_gather(i, in);
  if (op == "Transpose" && transposed_.contains(n.output(0))) {
    // Read by MatMul as a transposed weight: nothing to emit.
    const Value& w = value(in[0]);
    const int v = define(i, n.output(0), {w.shape[1], w.shape[0]}, w.dtype, ValueKind::initializer);
    value(v).ir = kNone;
    return;
  }
  switch (rule->treatment) {
    case Treatment::view: return emit_view(i, in);
    case Treatment::elementwise: return emit_pointwise(i, in);
    case Treatment::reduction: return emit_reduce(i, in);
    case Treatment::copy: return emit_copy(i, in);
    default: break;
  }
  throw InternalError("onnx frontend: no emitter for '" + op + "'");
}

void Converter::unknown(int i, const OpRule* rule) {
  const auto& n = g_.node(i);
  if (!options_.passthrough_unknown) {
    std::vector<std::string> known;
    for (const OpRule& r : op_rules()) {
      if (r.treatment != Treatment::unsupported) known.emplace_back(r.type);
    }
    const std::string why =
        rule ? "unsupported ONNX operator: " + std::string(rule->note)
             : "unknown ONNX operator" + std::string(n.domain().empty() ? "" : " (domain " + n.domain() + ")") +
                   "; docs/workloads.md lists the supported ones" + did_you_mean(n.op_type(), known);
    fail(i, why + ". Set [workload] unknown_ops = \"passthrough\" to treat it as a zero-cost view");
  }
  if (warned_.insert(n.op_type()).second) {
    spdlog::warn("{}: unsupported ONNX operator '{}' (first at node '{}') treated as a zero-cost view", file_,
                 n.op_type(), node_name(i));
  }
  const std::vector<int> in = inputs_of(i);
  int source = -1;
  for (int v : in) {
    if (v >= 0 && value(v).kind != ValueKind::constant) {
      source = v;
      break;
    }
  }
  for (const auto& out : n.output()) {
    if (out.empty()) continue;
    auto declared = declared_shape(out);
    if (source < 0) {
      define(i, out, declared.value_or(Shape{1}), ElementType::fp32, ValueKind::constant);
      continue;
    }
    const Value& src = value(source);
    const Shape shape = declared.value_or(src.shape);
    const TensorId x = tensor_of(source);
    Operator op = base(i);
    op.kind = OpKind::view;
    op.ops_per_iteration = 0;
    op.attributes["passthrough"] = {1};  // reported by inspect: an operator monet does not model
    const TensorId y = output_tensor(i, out, shape, src.dtype);
    op.operands.push_back(Operand{y, OperandSlot::O, {}, bits_of(src.dtype), 0, false});
    op.operands.push_back(Operand{x, OperandSlot::I1, {}, bits_of(src.dtype), 0, false});
    builder_.add_operator(std::move(op));
  }
}

}  // namespace monet::onnx_frontend
