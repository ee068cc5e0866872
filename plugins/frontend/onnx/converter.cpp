// ONNX -> monet IR. One pass over the nodes (ONNX keeps them in topological order):
//   * shapes are inferred here (value_info is only a cross-check: PyTorch exports leave many shapes out),
//   * nodes that compute only on constants are folded (shape subgraphs, masks built from Trilu/Equal ...),
//   * every other node becomes an IR operator — a true loop nest, or a zero-cost view,
//   * multi-node idioms become one semantic operator (GELU from its erf formula, linear = MatMul + bias Add,
//     masked softmax, transposed weights feeding MatMul, embedding lookups),
// then initializers are classified into trainable parameters and buffers.
#include "converter.hpp"

#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "monet/ir/ops.hpp"
#include "monet/util/strings.hpp"
#include "values.hpp"

namespace monet::onnx_frontend {

namespace {

/// Arithmetic operations per element of pointwise ONNX ops (docs/workloads.md).
const std::map<std::string, double> kPointwiseOps{
    {"Relu", 1}, {"LeakyRelu", 2}, {"Clip", 2}, {"Sigmoid", 4}, {"Tanh", 5}, {"Erf", 4}, {"Sqrt", 1},
    {"Exp", 1},  {"Log", 1},       {"Neg", 1},  {"Reciprocal", 1}, {"Abs", 1}, {"Pow", 1}, {"Add", 1},
    {"Sub", 1},  {"Mul", 1},       {"Div", 1},  {"Where", 1}, {"Equal", 1}, {"Less", 1}, {"Greater", 1},
    {"Not", 1},  {"And", 1},       {"Or", 1},   {"Cast", 1}, {"Dropout", 2}, {"Max", 1}, {"Min", 1},
    {"Gelu", 8}, {"Softplus", 3},  {"HardSigmoid", 3}, {"HardSwish", 4},
};
/// GELU through erf: divide, erf (4, a polynomial), add, multiply, multiply.
constexpr double kGeluOps = 8;

const std::set<std::string> kViewOps{"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity",
                                     "Slice",   "Split",   "Concat",    "Expand",  "Gather"};
const std::set<std::string> kConstantOnlyOps{"Constant", "Shape", "Size", "ConstantOfShape", "Range", "Trilu"};
const std::set<std::string> kBooleanOps{"Equal", "Less", "Greater", "Not", "And", "Or"};

std::vector<std::string> make_supported() {
  std::set<std::string> s{"Conv",          "Gemm",      "MatMul",           "BatchNormalization",
                          "LayerNormalization", "Softmax", "MaxPool",       "AveragePool",
                          "GlobalAveragePool", "GlobalMaxPool"};
  for (const auto& [k, v] : kPointwiseOps) s.insert(k);
  s.insert(kViewOps.begin(), kViewOps.end());
  s.insert(kConstantOnlyOps.begin(), kConstantOnlyOps.end());
  return {s.begin(), s.end()};
}

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-4 * std::max(1.0, std::fabs(b)); }

class Converter {
 public:
  Converter(const onnx::ModelProto& model, std::string file, const ConvertOptions& options)
      : model_(model), g_(model.graph()), file_(std::move(file)), options_(options),
        builder_(std::filesystem::path(file_).stem().string()) {  // the file's name: exports call every graph torch_jit
    for (const auto& o : model.opset_import()) {
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    }
  }

  GraphPtr run() {
    register_sources();
    index_consumers();
    find_patterns();
    for (int i = 0; i < g_.node_size(); ++i) {
      if (absorbed_[static_cast<std::size_t>(i)]) continue;
      convert_node(i);
    }
    for (const auto& out : g_.output()) {
      if (!index_.contains(out.name())) fail_model("graph output '" + out.name() + "' is produced by no node");
    }
    classify();
    return std::move(builder_).build();
  }

 private:
  // ------------------------------------------------------------------------------------------- errors
  [[noreturn]] void fail_model(const std::string& message) const { throw UserError(SourceLocation{file_}, message); }
  [[noreturn]] void fail(int node, const std::string& message) const {
    const auto& n = g_.node(node);
    throw UserError(SourceLocation{file_}, "node '" + node_name(node) + "' (" + n.op_type() + "): " + message);
  }
  std::string node_name(int node) const {
    const auto& n = g_.node(node);
    return n.name().empty() ? n.op_type() + "_" + std::to_string(node) : n.name();
  }

  // ------------------------------------------------------------------------------------------- values
  int find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  Value& value(int v) { return values_[static_cast<std::size_t>(v)]; }
  const Value& value(int v) const { return values_[static_cast<std::size_t>(v)]; }

  int add_value(Value v) {
    if (index_.contains(v.name)) fail_model("value '" + v.name + "' is defined twice");
    const int id = static_cast<int>(values_.size());
    index_[v.name] = id;
    values_.push_back(std::move(v));
    return id;
  }

  /// Input values of a node; -1 for omitted optional inputs.
  std::vector<int> inputs_of(int node) const {
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

  // Static shapes the file declares (value_info, outputs), used as a cross-check.
  std::optional<Shape> declared_shape(const std::string& name) const {
    auto it = declared_.find(name);
    if (it == declared_.end()) return std::nullopt;
    return it->second;
  }

  void register_sources() {
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
        if (!d.has_dim_value() || d.dim_value() <= 0) {
          if (options_.batch > 0 && v.shape.empty()) {
            v.shape.push_back(options_.batch);  // a symbolic batch dimension, given by the experiment
            continue;
          }
          fail_model("graph input '" + in.name() + "' has a symbolic dimension '" + d.dim_param() +
                     "'; set [workload] batch = N (or export with fixed shapes)");
        }
        v.shape.push_back(d.dim_value());
      }
      if (options_.batch > 0 && !v.shape.empty() && v.shape[0] != options_.batch) {
        original_batch_ = v.shape[0];
        v.shape[0] = options_.batch;
      }
      Tensor t;
      t.name = v.name;
      t.shape = v.shape;
      t.dtype = v.dtype;
      t.role = TensorRole::input;
      t.origin = SourceLocation{file_};
      v.ir = builder_.add_tensor(std::move(t));
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

  void declare(const onnx::ValueInfoProto& vi) {
    const auto& type = vi.type().tensor_type();
    if (!type.has_shape()) return;
    Shape s;
    for (const auto& d : type.shape().dim()) {
      if (!d.has_dim_value()) return;
      s.push_back(d.dim_value());
    }
    declared_[vi.name()] = s;
  }

  void index_consumers() {
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

  const std::vector<int>& consumers(const std::string& name) const {
    static const std::vector<int> none;
    auto it = consumers_.find(name);
    return it == consumers_.end() ? none : it->second;
  }
  int producer(const std::string& name) const {
    auto it = producer_.find(name);
    return it == producer_.end() ? -1 : it->second;
  }
  int single_consumer(const std::string& name) const {
    const auto& c = consumers(name);
    bool is_output = false;
    for (const auto& o : g_.output()) is_output |= o.name() == name;
    return c.size() == 1 && !is_output ? c[0] : -1;
  }
  /// A scalar value known from a Constant node (for pattern matching), if any.
  std::optional<double> constant_scalar(const std::string& name) const {
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
  bool is_op(int node, const char* type) const { return node >= 0 && g_.node(node).op_type() == type; }

  // ------------------------------------------------------------------------------------------ patterns
  struct Gelu {
    int input_producer_node;  // the Div
    std::string x;            // input value
    std::vector<int> nodes;   // every node of the pattern, in order
  };
  struct Linear {
    int add;            // the Add node that is folded in
    std::string bias;   // its initializer
  };
  struct MaskedSoftmax {
    int mask_node;      // Where or Add
    std::string x;      // scores
    std::string mask;   // mask value
    bool boolean;       // Where(cond, -inf, x) vs Add(x, mask)
  };

  void find_patterns() {
    for (int i = 0; i < g_.node_size(); ++i) {
      const auto& n = g_.node(i);
      if (n.op_type() == "Erf") match_gelu(i);
      if (n.op_type() == "MatMul") match_linear(i);
      if (n.op_type() == "Softmax") match_masked_softmax(i);
      if (n.op_type() == "Transpose") match_transposed_weight(i);
    }
  }

  // x -> Div(x, √2) -> Erf -> Add(·, 1) -> Mul(x, ·) -> Mul(·, 0.5)   (PyTorch's exact GELU)
  void match_gelu(int erf) {
    const auto& e = g_.node(erf);
    const int div = producer(e.input(0));
    if (div < 0 || single_consumer(e.input(0)) != erf) return;
    const auto& d = g_.node(div);
    std::string x;
    if (d.op_type() == "Div" && constant_scalar(d.input(1)) && near(*constant_scalar(d.input(1)), std::sqrt(2.0))) {
      x = d.input(0);
    } else if (d.op_type() == "Mul" && constant_scalar(d.input(1)) &&
               near(*constant_scalar(d.input(1)), 1.0 / std::sqrt(2.0))) {
      x = d.input(0);
    } else {
      return;
    }
    const int add = single_consumer(e.output(0));
    if (!is_op(add, "Add")) return;
    const auto& a = g_.node(add);
    const std::string& one = a.input(0) == e.output(0) ? a.input(1) : a.input(0);
    if (!constant_scalar(one) || !near(*constant_scalar(one), 1.0)) return;
    const int mul = single_consumer(a.output(0));
    if (!is_op(mul, "Mul")) return;
    const auto& m = g_.node(mul);
    const std::string& other = m.input(0) == a.output(0) ? m.input(1) : m.input(0);
    if (other != x) return;
    const int half = single_consumer(m.output(0));
    if (!is_op(half, "Mul")) return;
    const auto& h = g_.node(half);
    const std::string& c = h.input(0) == m.output(0) ? h.input(1) : h.input(0);
    if (!constant_scalar(c) || !near(*constant_scalar(c), 0.5)) return;
    gelu_[half] = Gelu{div, x, {div, erf, add, mul, half}};
    for (int k : {div, erf, add, mul}) absorbed_[static_cast<std::size_t>(k)] = true;
  }

  // MatMul(x, W) -> Add(b, ·) with b a 1-D initializer: one linear layer with bias.
  void match_linear(int mm) {
    const auto& m = g_.node(mm);
    const std::string& b = m.input(1);
    if (!static_value_.contains(b) || constant_value_.contains(b)) return;  // weights, not activations
    const int add = single_consumer(m.output(0));
    if (!is_op(add, "Add")) return;
    const auto& a = g_.node(add);
    const std::string& bias = a.input(0) == m.output(0) ? a.input(1) : a.input(0);
    bool is_initializer = false;
    for (const auto& t : g_.initializer()) {
      if (t.name() == bias && t.dims_size() == 1) is_initializer = true;
    }
    if (!is_initializer) return;
    linear_[mm] = Linear{add, bias};
    absorbed_[static_cast<std::size_t>(add)] = true;
  }

  // Where(mask, -inf, x) -> Softmax   or   Add(x, mask) -> Softmax, the mask depending on no input.
  void match_masked_softmax(int sm) {
    const auto& s = g_.node(sm);
    const int p = producer(s.input(0));
    if (p < 0 || single_consumer(s.input(0)) != sm) return;
    const auto& n = g_.node(p);
    if (n.op_type() == "Where" && n.input_size() == 3) {
      const auto fill = constant_scalar(n.input(1));
      if (static_value_.contains(n.input(0)) && fill && (std::isinf(*fill) || *fill < -1e4) &&
          !static_value_.contains(n.input(2))) {
        masked_[sm] = MaskedSoftmax{p, n.input(2), n.input(0), true};
        absorbed_[static_cast<std::size_t>(p)] = true;
      }
    } else if (n.op_type() == "Add" && n.input_size() == 2) {
      for (int k = 0; k < 2; ++k) {
        const std::string& mask = n.input(k);
        const std::string& x = n.input(1 - k);
        if (static_value_.contains(mask) && !static_value_.contains(x) && !constant_scalar(mask)) {
          masked_[sm] = MaskedSoftmax{p, x, mask, false};
          absorbed_[static_cast<std::size_t>(p)] = true;
          return;
        }
      }
    }
  }

  // Transpose(W, perm=[1,0]) of a 2-D initializer used only as MatMul's B: MatMul reads W transposed.
  void match_transposed_weight(int tr) {
    const auto& t = g_.node(tr);
    const auto perm = attr_ints(t, "perm");
    if (!perm || *perm != std::vector<std::int64_t>{1, 0}) return;
    bool two_d_initializer = false;
    for (const auto& init : g_.initializer()) {
      if (init.name() == t.input(0) && init.dims_size() == 2) two_d_initializer = true;
    }
    if (!two_d_initializer) return;
    const auto& users = consumers(t.output(0));
    if (users.empty()) return;
    for (int u : users) {
      const auto& un = g_.node(u);
      if (un.op_type() != "MatMul" || un.input(1) != t.output(0) || un.input(0) == t.output(0)) return;
    }
    transposed_[t.output(0)] = tr;
  }

  // ---------------------------------------------------------------------------------------- emission
  Operator base(int node, std::vector<int> extra_nodes = {}) {
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

  /// The IR tensor of a value, creating it for stored tensors and constants on first use.
  TensorId tensor_of(int v) {
    Value& val = value(v);
    if (val.ir != kNone) return val.ir;
    Tensor t;
    t.name = val.name;
    t.shape = val.shape;
    t.dtype = val.dtype;
    t.origin = SourceLocation{file_};
    if (val.kind == ValueKind::initializer) {
      t.role = TensorRole::weight;  // classified at the end
    } else if (val.kind == ValueKind::constant) {
      // Computed from constants in the forward pass (torch.tril(ones), arange): not a stored buffer.
      t.role = t.dtype == ElementType::int64 || t.dtype == ElementType::int32 ? TensorRole::index : TensorRole::activation;
    } else {
      throw InternalError("activation '" + val.name + "' has no IR tensor");
    }
    val.ir = builder_.add_tensor(std::move(t));
    return val.ir;
  }

  /// Defines an output value of a node (cross-checked against the file's declared shape).
  int define(int node, const std::string& name, Shape shape, ElementType dtype, ValueKind kind,
             std::optional<std::vector<double>> data = std::nullopt) {
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

  /// An activation output tensor for an IR operator.
  TensorId output_tensor(int node, const std::string& name, const Shape& shape, ElementType dtype) {
    const int v = define(node, name, shape, dtype, ValueKind::activation);
    Tensor t;
    t.name = name;
    t.shape = shape;
    t.dtype = dtype;
    t.role = TensorRole::activation;
    t.origin = SourceLocation{file_};
    value(v).ir = builder_.add_tensor(std::move(t));
    return value(v).ir;
  }

  const std::vector<double>& const_data(int node, int v, const char* what) const {
    if (v < 0 || !value(v).data) {
      fail(node, std::string("needs the values of its ") + what + " input" +
                     (v >= 0 ? " '" + value(v).name + "'" : std::string()) +
                     ", which are not stored in the file or not computable from constants");
    }
    return *value(v).data;
  }
  std::vector<std::int64_t> const_ints(int node, int v, const char* what) const {
    std::vector<std::int64_t> out;
    for (double d : const_data(node, v, what)) out.push_back(static_cast<std::int64_t>(d));
    return out;
  }

  // ---------------------------------------------------------------------------------------- dispatch
  void convert_node(int i) {
    const auto& n = g_.node(i);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return unknown(i);
    const std::string& op = n.op_type();
    // Patterns read the pattern's inputs, not the node's (those are absorbed values that never exist).
    if (gelu_.contains(i)) return emit_gelu(i);
    if (masked_.contains(i)) return emit_softmax(i, {});
    const std::vector<int> in = inputs_of(i);
    bool all_constant = !in.empty();
    for (int v : in) {
      if (v >= 0 && value(v).kind != ValueKind::constant) all_constant = false;
    }
    if (kConstantOnlyOps.contains(op) || (all_constant && fold(i, in))) {
      if (kConstantOnlyOps.contains(op)) fold_constant_op(i, in);
      return;
    }
    if (op == "Conv") return emit_conv(i, in);
    if (op == "Gemm") return emit_gemm(i, in);
    if (op == "MatMul") return emit_matmul(i, in);
    if (op == "BatchNormalization") return emit_batch_norm(i, in);
    if (op == "LayerNormalization") return emit_layer_norm(i, in);
    if (op == "Softmax") return emit_softmax(i, in);
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
    if (kViewOps.contains(op)) return emit_view(i, in);
    if (kPointwiseOps.contains(op)) return emit_pointwise(i, in);
    unknown(i);
  }

  void unknown(int i) {
    const auto& n = g_.node(i);
    if (!options_.passthrough_unknown) {
      fail(i, "unsupported ONNX operator" + std::string(n.domain().empty() ? "" : " (domain " + n.domain() + ")") +
                  "; supported: " + join(supported_op_types()) +
                  ". Set [workload] unknown_ops = \"passthrough\" to treat unknown operators as zero-cost views");
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
      const TensorId y = output_tensor(i, out, shape, src.dtype);
      op.operands.push_back(Operand{y, OperandSlot::O, {}, bits_of(src.dtype), 0, false});
      op.operands.push_back(Operand{x, OperandSlot::I1, {}, bits_of(src.dtype), 0, false});
      builder_.add_operator(std::move(op));
    }
  }

  // ------------------------------------------------------------------------------------ constant folds

  /// Folds a node whose inputs are all constants. Returns false when the op must become an operator.
  bool fold(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const std::string& op = n.op_type();
    if (!kViewOps.contains(op) && !kPointwiseOps.contains(op)) return false;
    const std::string& out = n.output(0);
    auto dtype_of = [&]() { return value(in[0]).dtype; };
    if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Identity" ||
        op == "Expand" || op == "Transpose" || op == "Slice" || op == "Concat" || op == "Gather" || op == "Split") {
      const auto shapes = view_shapes(i, in);
      std::optional<std::vector<double>> data;
      const auto& x = value(in[0]).data;
      if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Identity") {
        data = x;
      } else if (op == "Concat" && value(in[0]).shape.size() == 1) {
        std::vector<double> all;
        bool known = true;
        for (int v : in) {
          if (!value(v).data) known = false;
          else all.insert(all.end(), value(v).data->begin(), value(v).data->end());
        }
        if (known) data = all;
      } else if (op == "Gather" && x && in.size() == 2 && value(in[1]).data && value(in[0]).shape.size() == 1) {
        std::vector<double> g;
        for (double k : *value(in[1]).data) {
          auto idx = static_cast<std::int64_t>(k);
          if (idx < 0) idx += static_cast<std::int64_t>(x->size());
          g.push_back((*x)[static_cast<std::size_t>(idx)]);
        }
        data = g;
      } else if (op == "Slice" && x && value(in[0]).shape.size() == 1) {
        const auto starts = const_ints(i, in[1], "starts");
        const auto ends = const_ints(i, in[2], "ends");
        const std::int64_t dim = static_cast<std::int64_t>(x->size());
        std::int64_t s = starts[0] < 0 ? starts[0] + dim : std::min(starts[0], dim);
        std::int64_t e = ends[0] < 0 ? ends[0] + dim : std::min(ends[0], dim);
        data = std::vector<double>(x->begin() + std::max<std::int64_t>(s, 0), x->begin() + std::max(e, s));
      }
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        define(i, n.output(static_cast<int>(k)), shapes[k], dtype_of(), ValueKind::constant,
               shapes.size() == 1 ? data : std::nullopt);
      }
      return true;
    }
    // Pointwise arithmetic on constants (broadcast).
    std::vector<Shape> shapes;
    for (int v : in) {
      if (v >= 0) shapes.push_back(value(v).shape);
    }
    const Shape shape = ops::broadcast_shapes(shapes, SourceLocation{file_}, node_name(i));
    ElementType dtype = kBooleanOps.contains(op) ? ElementType::boolean : dtype_of();
    if (op == "Cast") dtype = element_type_of(static_cast<int>(attr_int(n, "to").value_or(1))).value_or(dtype);
    std::optional<std::vector<double>> data;
    const std::size_t count = static_cast<std::size_t>(element_count(shape));
    bool known = count <= (1u << 16);
    for (int v : in) {
      if (v >= 0 && !value(v).data) known = false;
    }
    if (known) {
      std::vector<double> r(count);
      auto at = [&](int v, std::size_t flat) {
        // Broadcast read of value v at the flat index of the output.
        const Shape& s = value(v).shape;
        std::size_t idx = 0;
        std::size_t stride = 1;
        std::size_t rem = flat;
        std::vector<std::size_t> coord(shape.size());
        for (std::size_t a = shape.size(); a-- > 0;) {
          coord[a] = rem % static_cast<std::size_t>(shape[a]);
          rem /= static_cast<std::size_t>(shape[a]);
        }
        for (std::size_t a = s.size(); a-- > 0;) {
          const std::size_t oa = shape.size() - s.size() + a;
          const std::size_t c = s[a] == 1 ? 0 : coord[oa];
          idx += c * stride;
          stride *= static_cast<std::size_t>(s[a]);
        }
        return (*value(v).data)[idx];
      };
      for (std::size_t k = 0; k < count; ++k) {
        const double a = at(in[0], k);
        const double b = in.size() > 1 && in[1] >= 0 ? at(in[1], k) : 0;
        double res = a;
        if (op == "Add") res = a + b;
        else if (op == "Sub") res = a - b;
        else if (op == "Mul") res = a * b;
        else if (op == "Div") res = (dtype == ElementType::int64 || dtype == ElementType::int32) ? std::trunc(a / b) : a / b;
        else if (op == "Equal") res = a == b;
        else if (op == "Less") res = a < b;
        else if (op == "Greater") res = a > b;
        else if (op == "Not") res = a == 0;
        else if (op == "Neg") res = -a;
        else if (op == "Sqrt") res = std::sqrt(a);
        else if (op == "Pow") res = std::pow(a, b);
        else if (op == "Where") res = a != 0 ? b : at(in[2], k);
        else if (op == "Cast") res = dtype == ElementType::boolean ? (a != 0) : a;
        else if (op == "Max") res = std::max(a, b);
        else if (op == "Min") res = std::min(a, b);
        else if (op == "Identity") res = a;
        else known = false;
        r[k] = res;
      }
      if (known) data = std::move(r);
    }
    define(i, n.output(0), shape, dtype, ValueKind::constant, data);
    (void)out;
    return true;
  }

  /// Constant, Shape, Size, ConstantOfShape, Range, Trilu: values computed at import.
  void fold_constant_op(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const std::string& op = n.op_type();
    const std::string& out = n.output(0);
    if (op == "Constant") {
      if (const auto* a = attr(n, "value"); a && a->has_t()) {
        const auto& t = a->t();
        auto dt = element_type_of(t.data_type());
        if (!dt) fail(i, "unsupported element type");
        define(i, out, Shape(t.dims().begin(), t.dims().end()), *dt, ValueKind::constant, tensor_data(t));
      } else if (auto f = attr_float(n, "value_float")) {
        define(i, out, {}, ElementType::fp32, ValueKind::constant, std::vector<double>{*f});
      } else if (auto k = attr_int(n, "value_int")) {
        define(i, out, {}, ElementType::int64, ValueKind::constant, std::vector<double>{static_cast<double>(*k)});
      } else if (auto ks = attr_ints(n, "value_ints")) {
        define(i, out, {static_cast<std::int64_t>(ks->size())}, ElementType::int64, ValueKind::constant,
               std::vector<double>(ks->begin(), ks->end()));
      } else {
        fail(i, "Constant without a supported value attribute");
      }
    } else if (op == "Shape") {
      const Shape& s = value(in[0]).shape;
      std::int64_t start = normalize_axis(attr_int(n, "start").value_or(0), s.size());
      std::int64_t end = attr_int(n, "end") ? normalize_axis(*attr_int(n, "end"), s.size())
                                            : static_cast<std::int64_t>(s.size());
      start = std::clamp<std::int64_t>(start, 0, static_cast<std::int64_t>(s.size()));
      end = std::clamp<std::int64_t>(end, start, static_cast<std::int64_t>(s.size()));
      std::vector<double> d(s.begin() + start, s.begin() + end);
      define(i, out, {static_cast<std::int64_t>(d.size())}, ElementType::int64, ValueKind::constant, d);
    } else if (op == "Size") {
      define(i, out, {}, ElementType::int64, ValueKind::constant,
             std::vector<double>{static_cast<double>(element_count(value(in[0]).shape))});
    } else if (op == "ConstantOfShape") {
      const auto dims = const_ints(i, in[0], "shape");
      double fill = 0;
      ElementType dt = ElementType::fp32;
      if (const auto* a = attr(n, "value"); a && a->has_t()) {
        dt = element_type_of(a->t().data_type()).value_or(dt);
        if (auto d = tensor_data(a->t(), 1); d && !d->empty()) fill = (*d)[0];
      }
      const Shape s(dims.begin(), dims.end());
      std::optional<std::vector<double>> data;
      if (element_count(s) <= (1 << 16)) data = std::vector<double>(static_cast<std::size_t>(element_count(s)), fill);
      define(i, out, s, dt, ValueKind::constant, data);
    } else if (op == "Range") {
      const double start = const_data(i, in[0], "start")[0];
      const double limit = const_data(i, in[1], "limit")[0];
      const double delta = const_data(i, in[2], "delta")[0];
      const auto count = static_cast<std::int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
      std::vector<double> d(static_cast<std::size_t>(count));
      for (std::int64_t k = 0; k < count; ++k) d[static_cast<std::size_t>(k)] = start + static_cast<double>(k) * delta;
      define(i, out, {count}, value(in[0]).dtype, ValueKind::constant, d);
    } else if (op == "Trilu") {
      const Value& x = value(in[0]);
      if (x.kind != ValueKind::constant) unknown(i);
      std::optional<std::vector<double>> data;
      if (x.data && x.shape.size() >= 2) {
        const bool upper = attr_int(n, "upper").value_or(1) != 0;
        const std::int64_t k = in.size() > 1 && in[1] >= 0 ? const_ints(i, in[1], "k")[0] : 0;
        const std::int64_t rows = x.shape[x.shape.size() - 2];
        const std::int64_t cols = x.shape.back();
        std::vector<double> d = *x.data;
        for (std::size_t idx = 0; idx < d.size(); ++idx) {
          const std::int64_t c = static_cast<std::int64_t>(idx) % cols;
          const std::int64_t r = (static_cast<std::int64_t>(idx) / cols) % rows;
          const bool keep = upper ? c - r >= k : c - r <= k;
          if (!keep) d[idx] = 0;
        }
        data = d;
      }
      define(i, out, x.shape, x.dtype, ValueKind::constant, data);
    }
  }

  // -------------------------------------------------------------------------------------- view shapes

  /// Per axis of a Slice's input: first index taken, step and number of elements (ONNX clamping rules).
  struct SliceParams {
    std::vector<std::int64_t> start, step, size;
  };
  SliceParams slice_params(int i, const std::vector<int>& in) {
    const Shape x = value(in[0]).shape;
    const std::size_t rank = x.size();
    SliceParams sp;
    sp.start.assign(rank, 0);
    sp.step.assign(rank, 1);
    sp.size.assign(x.begin(), x.end());
    const auto starts = const_ints(i, in[1], "starts");
    const auto ends = const_ints(i, in[2], "ends");
    std::vector<std::int64_t> axes;
    if (in.size() > 3 && in[3] >= 0) axes = const_ints(i, in[3], "axes");
    else for (std::size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<std::int64_t>(a));
    std::vector<std::int64_t> steps(starts.size(), 1);
    if (in.size() > 4 && in[4] >= 0) steps = const_ints(i, in[4], "steps");
    for (std::size_t k = 0; k < starts.size(); ++k) {
      const auto a = static_cast<std::size_t>(normalize_axis(axes[k], rank));
      const std::int64_t dim = x.at(a);
      const std::int64_t step = steps[k];
      if (step == 0) fail(i, "slice step 0");
      auto clampi = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
        if (v < 0) v += dim;
        return std::clamp(v, lo, hi);
      };
      std::int64_t begin;
      std::int64_t end;
      if (step > 0) {
        begin = clampi(starts[k], 0, dim);
        end = clampi(ends[k], 0, dim);
        sp.size[a] = std::max<std::int64_t>(0, (end - begin + step - 1) / step);
      } else {
        begin = clampi(starts[k], -1, dim - 1);
        end = clampi(ends[k], -1, dim - 1);
        sp.size[a] = std::max<std::int64_t>(0, (begin - end + (-step) - 1) / (-step));
      }
      sp.start[a] = begin;
      sp.step[a] = step;
    }
    return sp;
  }

  /// Output shapes of the data-movement ops (shared by folding and emission).
  std::vector<Shape> view_shapes(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const std::string& op = n.op_type();
    const Shape x = value(in[0]).shape;
    const std::size_t rank = x.size();
    if (op == "Identity") return {x};
    if (op == "Flatten") {
      const auto axis = normalize_axis(attr_int(n, "axis").value_or(1), rank);
      std::int64_t outer = 1;
      std::int64_t inner = 1;
      for (std::size_t a = 0; a < rank; ++a) (static_cast<std::int64_t>(a) < axis ? outer : inner) *= x[a];
      return {{outer, inner}};
    }
    if (op == "Reshape") {
      auto target = const_ints(i, in[1], "shape");
      const bool allow_zero = attr_int(n, "allowzero").value_or(0) != 0;
      std::int64_t known = 1;
      int unknown_axis = -1;
      for (std::size_t a = 0; a < target.size(); ++a) {
        if (target[a] == 0 && !allow_zero) target[a] = a < rank ? x[a] : 1;
        if (target[a] == -1) {
          unknown_axis = static_cast<int>(a);
        } else {
          known *= target[a];
        }
      }
      const std::int64_t total = element_count(x);
      if (unknown_axis >= 0) {
        target[static_cast<std::size_t>(unknown_axis)] = known > 0 ? total / known : 0;
      } else if (known != total && original_batch_ > 0 && !target.empty() && target[0] == original_batch_ &&
                 known / original_batch_ * options_.batch == total) {
        target[0] = options_.batch;  // a fixed batch in the exported shape constant
      }
      if (element_count(Shape(target.begin(), target.end())) != total) {
        fail(i, "cannot reshape " + to_string(x) + " to " + to_string(Shape(target.begin(), target.end())) +
                    (original_batch_ > 0 ? " (the batch override cannot be applied here)" : ""));
      }
      return {Shape(target.begin(), target.end())};
    }
    if (op == "Transpose") {
      std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
      if (perm.empty()) {
        for (std::size_t a = rank; a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
      }
      if (perm.size() != rank) fail(i, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
      Shape s;
      for (auto p : perm) s.push_back(x.at(static_cast<std::size_t>(p)));
      return {s};
    }
    if (op == "Squeeze" || op == "Unsqueeze") {
      std::vector<std::int64_t> axes;
      if (in.size() > 1 && in[1] >= 0) axes = const_ints(i, in[1], "axes");
      else if (auto a = attr_ints(n, "axes")) axes = *a;
      if (op == "Squeeze") {
        Shape s;
        std::set<std::int64_t> drop;
        for (auto a : axes) drop.insert(normalize_axis(a, rank));
        for (std::size_t a = 0; a < rank; ++a) {
          const bool squeeze = axes.empty() ? x[a] == 1 : drop.contains(static_cast<std::int64_t>(a));
          if (!squeeze) s.push_back(x[a]);
        }
        return {s};
      }
      const std::size_t out_rank = rank + axes.size();
      std::set<std::int64_t> add;
      for (auto a : axes) add.insert(normalize_axis(a, out_rank));
      Shape s;
      std::size_t k = 0;
      for (std::size_t a = 0; a < out_rank; ++a) s.push_back(add.contains(static_cast<std::int64_t>(a)) ? 1 : x.at(k++));
      return {s};
    }
    if (op == "Expand") {
      const auto target = const_ints(i, in[1], "shape");
      return {ops::broadcast_shapes({x, Shape(target.begin(), target.end())}, SourceLocation{file_}, node_name(i))};
    }
    if (op == "Slice") {
      const SliceParams sp = slice_params(i, in);
      Shape s = x;
      for (std::size_t a = 0; a < rank; ++a) s[a] = sp.size[a];
      return {s};
    }
    if (op == "Concat") {
      const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
      Shape s = x;
      s[axis] = 0;
      for (int v : in) s[axis] += value(v).shape.at(axis);
      return {s};
    }
    if (op == "Split") {
      const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
      std::vector<std::int64_t> sizes;
      if (in.size() > 1 && in[1] >= 0) sizes = const_ints(i, in[1], "split");
      else if (auto a = attr_ints(n, "split")) sizes = *a;
      const int outputs = n.output_size();
      if (sizes.empty()) {
        const std::int64_t each = (x[axis] + outputs - 1) / outputs;
        for (int k = 0; k < outputs; ++k) sizes.push_back(std::min(each, x[axis] - each * k));
      }
      std::vector<Shape> out;
      for (auto sz : sizes) {
        Shape s = x;
        s[axis] = sz;
        out.push_back(s);
      }
      return out;
    }
    if (op == "Gather") {
      const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(0), rank));
      const Shape& idx = value(in[1]).shape;
      Shape s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
      s.insert(s.end(), idx.begin(), idx.end());
      s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end());
      return {s};
    }
    fail(i, "no shape rule");
  }

  // --------------------------------------------------------------------------------------- operators

  void emit_view(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const auto shapes = view_shapes(i, in);
    std::vector<int> sources;
    for (int v : in) {
      if (v >= 0 && value(v).kind != ValueKind::constant) sources.push_back(v);
    }
    if (n.op_type() != "Concat") sources.resize(1);
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const std::string& out = n.output(static_cast<int>(k));
      if (out.empty()) continue;
      Operator op = base(i);
      if (shapes.size() > 1) op.name += ":" + std::to_string(k);
      op.kind = OpKind::view;
      op.ops_per_iteration = 0;
      const ElementType dt = value(sources[0]).dtype;
      std::vector<TensorId> xs;
      for (int v : sources) xs.push_back(tensor_of(v));
      const TensorId y = output_tensor(i, out, shapes[k], dt);
      if (builder_.tensor(xs[0]).role == TensorRole::weight || builder_.tensor(xs[0]).role == TensorRole::buffer) {
        builder_.tensor(y).role = TensorRole::buffer;  // a view of a stored tensor (not counted again)
      }
      op.operands.push_back(Operand{y, OperandSlot::O, {}, bits_of(dt), 0, false});
      for (TensorId x : xs) op.operands.push_back(Operand{x, OperandSlot::I1, {}, bits_of(builder_.tensor(x).dtype), 0, false});
      // What each output element reads (framework/include/monet/ir/view.hpp), so tiles connect exactly.
      if (n.op_type() == "Transpose") {
        std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
        if (perm.empty()) {
          for (std::size_t a = shapes[k].size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
        }
        op.attributes["perm"] = perm;
      }
      const std::size_t rank = value(sources[0]).shape.size();
      if (n.op_type() == "Concat") {  // the offset of each non-constant input along the axis
        const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
        std::vector<std::int64_t> offsets;
        std::int64_t offset = 0;
        for (int v : in) {
          if (v < 0) continue;
          if (value(v).kind != ValueKind::constant) offsets.push_back(offset);
          offset += value(v).shape.at(static_cast<std::size_t>(axis));
        }
        op.attributes["axis"] = {axis};
        op.attributes["offsets"] = offsets;
      }
      if (n.op_type() == "Split") {
        const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), rank);
        std::int64_t offset = 0;
        for (std::size_t j = 0; j < k; ++j) offset += shapes[j][static_cast<std::size_t>(axis)];
        op.attributes["axis"] = {axis};
        op.attributes["offset"] = {offset};
      }
      if (n.op_type() == "Slice") {
        const SliceParams sp = slice_params(i, in);
        op.attributes["slice_start"] = sp.start;
        op.attributes["slice_step"] = sp.step;
      }
      builder_.add_operator(std::move(op));
    }
  }

  void emit_pointwise(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const std::string& type = n.op_type();
    std::vector<int> tensors;
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < in.size(); ++k) {
      const int v = in[k];
      if (v < 0) continue;
      shapes.push_back(value(v).shape);
      if (value(v).is_scalar_constant()) continue;  // a scalar constant is part of the operation
      if ((type == "Clip" && k > 0) || (type == "Dropout" && k > 0)) continue;  // bounds, ratio, training flag
      tensors.push_back(v);
    }
    if (type == "Clip" || type == "Dropout") shapes.resize(1);
    if (tensors.empty()) fail(i, "no tensor input");
    const Shape shape = ops::broadcast_shapes(shapes, SourceLocation{file_}, node_name(i));
    ElementType dt = kBooleanOps.contains(type) ? ElementType::boolean : value(tensors[0]).dtype;
    if (type == "Cast") dt = element_type_of(static_cast<int>(attr_int(n, "to").value_or(1))).value_or(dt);
    if (type == "Where") dt = value(tensors.back()).dtype;
    std::vector<TensorId> xs;
    for (int v : tensors) xs.push_back(tensor_of(v));
    Operator op = base(i);
    op.kind = OpKind::elementwise;
    const TensorId y = output_tensor(i, n.output(0), shape, dt);
    ops::elementwise(builder_, std::move(op), xs, y, kPointwiseOps.at(type));
  }

  void emit_gelu(int i) {
    const Gelu& p = gelu_.at(i);
    const int x = find(p.x);
    Operator op = base(p.nodes[1], p.nodes);  // named after the Erf node
    op.kind = OpKind::elementwise;
    op.type = "Gelu";
    const TensorId y = output_tensor(i, g_.node(i).output(0), value(x).shape, value(x).dtype);
    ops::elementwise(builder_, std::move(op), {tensor_of(x)}, y, kGeluOps);
  }

  void emit_conv(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const Value& x = value(in[0]);
    const Value& w = value(in.at(1));
    if (x.shape.size() != 4 || w.shape.size() != 4) fail(i, "only 2-D convolutions (NCHW) are supported");
    ops::Conv2dSpec s;
    const auto kernel = attr_ints(n, "kernel_shape").value_or(std::vector<std::int64_t>{w.shape[2], w.shape[3]});
    s.kernel = {kernel[0], kernel[1]};
    if (auto v = attr_ints(n, "strides")) s.stride = {(*v)[0], (*v)[1]};
    if (auto v = attr_ints(n, "dilations")) s.dilation = {(*v)[0], (*v)[1]};
    s.groups = attr_int(n, "group").value_or(1);
    s.pads = pads(i, x.shape, s.kernel, s.stride, s.dilation);
    const Shape out = ops::conv2d_output_shape(x.shape, w.shape[0], s, SourceLocation{file_}, node_name(i));
    std::optional<TensorId> bias;
    if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
    const TensorId xi = tensor_of(in[0]);
    const TensorId wi = tensor_of(in[1]);
    const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
    ops::conv2d(builder_, base(i), xi, wi, bias, y, s);
  }

  std::array<std::int64_t, 4> pads(int i, const Shape& x, std::array<std::int64_t, 2> kernel,
                                   std::array<std::int64_t, 2> stride, std::array<std::int64_t, 2> dilation) {
    const auto& n = g_.node(i);
    std::array<std::int64_t, 4> p{0, 0, 0, 0};
    const std::string auto_pad = attr(n, "auto_pad") ? attr(n, "auto_pad")->s() : "NOTSET";
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      for (int a = 0; a < 2; ++a) {
        const std::int64_t in = x[static_cast<std::size_t>(2 + a)];
        const std::int64_t out = (in + stride[a] - 1) / stride[a];
        const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride[a] + (kernel[a] - 1) * dilation[a] + 1 - in);
        const std::int64_t small = total / 2;
        p[static_cast<std::size_t>(a)] = auto_pad == "SAME_UPPER" ? small : total - small;
        p[static_cast<std::size_t>(a + 2)] = total - p[static_cast<std::size_t>(a)];
      }
    } else if (auto v = attr_ints(n, "pads")) {
      if (v->size() != 4) fail(i, "expected 4 pads for a 2-D window");
      p = {(*v)[0], (*v)[1], (*v)[2], (*v)[3]};
    }
    return p;
  }

  bool is_weight(int v) const {
    const Value& val = value(v);
    return val.kind == ValueKind::initializer;
  }

  void emit_gemm(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    ops::MatmulSpec s;
    s.transpose_a = attr_int(n, "transA").value_or(0) != 0;
    s.transpose_b = attr_int(n, "transB").value_or(0) != 0;
    const Value& a = value(in[0]);
    const Value& b = value(in[1]);
    const Shape out = ops::matmul_output_shape(a.shape, b.shape, s, SourceLocation{file_}, node_name(i));
    std::optional<TensorId> bias;
    if (in.size() > 2 && in[2] >= 0) {
      const Shape& c = value(in[2]).shape;
      if (element_count(c) != out.back() || c.empty() || c.back() != out.back()) {
        fail(i, "only a bias of shape [N] or [1, N] is supported for C, got " + to_string(c));
      }
      bias = tensor_of(in[2]);
    }
    Operator op = base(i);
    op.kind = is_weight(in[1]) ? OpKind::gemm : OpKind::matmul;
    const TensorId ai = tensor_of(in[0]);
    const TensorId bi = tensor_of(in[1]);
    const TensorId y = output_tensor(i, n.output(0), out, a.dtype);
    ops::matmul(builder_, std::move(op), ai, bi, bias, y, s);
  }

  void emit_matmul(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    int b = in[1];
    ops::MatmulSpec s;
    std::vector<int> extra;
    if (auto it = transposed_.find(value(b).name); it != transposed_.end()) {
      b = find(g_.node(it->second).input(0));  // the stored weight itself, read transposed
      s.transpose_b = true;
      extra.push_back(it->second);
    }
    if (value(in[0]).shape.size() < 2 || value(b).shape.size() < 2) fail(i, "1-D matrix products are not supported");
    const Shape out = ops::matmul_output_shape(value(in[0]).shape, value(b).shape, s, SourceLocation{file_}, node_name(i));
    std::optional<TensorId> bias;
    std::string out_name = n.output(0);
    extra.push_back(i);
    if (auto it = linear_.find(i); it != linear_.end()) {
      const int bv = find(it->second.bias);
      if (value(bv).shape == Shape{out.back()}) {
        bias = tensor_of(bv);
        out_name = g_.node(it->second.add).output(0);
        extra.push_back(it->second.add);
      } else {
        convert_node_later_.push_back(it->second.add);  // not a bias after all: keep the Add
      }
    }
    Operator op = base(i, extra);
    op.kind = is_weight(b) ? OpKind::gemm : OpKind::matmul;
    const TensorId ai = tensor_of(in[0]);
    const TensorId bi = tensor_of(b);
    const TensorId y = output_tensor(i, out_name, out, value(in[0]).dtype);
    ops::matmul(builder_, std::move(op), ai, bi, bias, y, s);
    for (int later : convert_node_later_) {
      absorbed_[static_cast<std::size_t>(later)] = false;
      convert_node(later);
    }
    convert_node_later_.clear();
  }

  void emit_batch_norm(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    if (in.size() < 5) fail(i, "expected 5 inputs (X, scale, B, mean, var)");
    const bool training = attr_int(n, "training_mode").value_or(0) != 0 || n.output_size() > 1;
    bn_statistics_.insert(in[3]);
    bn_statistics_.insert(in[4]);
    const Value& x = value(in[0]);
    const TensorId xi = tensor_of(in[0]);
    const TensorId sc = tensor_of(in[1]);
    const TensorId bi = tensor_of(in[2]);
    const TensorId mean = tensor_of(in[3]);
    const TensorId var = tensor_of(in[4]);
    const TensorId y = output_tensor(i, n.output(0), x.shape, x.dtype);
    for (int k = 1; k < n.output_size(); ++k) {
      // Updated running statistics: buffers written in place; nothing downstream may read them.
      if (!n.output(k).empty() && !consumers(n.output(k)).empty()) fail(i, "reading the updated running statistics is not supported");
    }
    ops::batch_norm(builder_, base(i), xi, sc, bi, mean, var, y, training);
  }

  void emit_layer_norm(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const Value& x = value(in[0]);
    const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(-1), x.shape.size()));
    std::optional<TensorId> scale;
    std::optional<TensorId> bias;
    if (in.size() > 1 && in[1] >= 0) scale = tensor_of(in[1]);
    if (in.size() > 2 && in[2] >= 0) bias = tensor_of(in[2]);
    const TensorId xi = tensor_of(in[0]);
    const TensorId y = output_tensor(i, n.output(0), x.shape, x.dtype);
    ops::layer_norm(builder_, base(i), xi, scale, bias, y, axis);
  }

  void emit_softmax(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    int x = in.empty() ? -1 : in[0];
    std::optional<TensorId> mask;
    std::vector<int> nodes;
    if (auto it = masked_.find(i); it != masked_.end()) {
      x = find(it->second.x);
      const int m = find(it->second.mask);
      mask = tensor_of(m);
      mask_values_.insert(m);
      nodes.push_back(it->second.mask_node);
    }
    nodes.push_back(i);
    const Value& xv = value(x);
    // Opset 13 changed the default axis from 1 to -1.
    const std::int64_t default_axis = opset_ >= 13 ? -1 : 1;
    const auto axis =
        static_cast<std::size_t>(normalize_axis(attr_int(n, "axis").value_or(default_axis), xv.shape.size()));
    Operator op = base(i, nodes);
    if (mask) op.attributes["mask"] = {masked_.at(i).boolean ? 1 : 2};  // 1: boolean (Where), 2: additive
    const TensorId xi = tensor_of(x);
    const TensorId y = output_tensor(i, n.output(0), xv.shape, xv.dtype);
    ops::softmax(builder_, std::move(op), xi, mask, y, axis);
  }

  void emit_pool(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const Value& x = value(in[0]);
    if (x.shape.size() != 4) fail(i, "only 2-D pooling (NCHW) is supported");
    ops::Pool2dSpec s;
    const bool global = n.op_type().rfind("Global", 0) == 0;
    if (global) {
      s.kernel = {x.shape[2], x.shape[3]};
    } else {
      const auto k = attr_ints(n, "kernel_shape");
      if (!k || k->size() != 2) fail(i, "missing kernel_shape");
      s.kernel = {(*k)[0], (*k)[1]};
      if (auto v = attr_ints(n, "strides")) s.stride = {(*v)[0], (*v)[1]};
      if (auto v = attr_ints(n, "dilations")) s.dilation = {(*v)[0], (*v)[1]};
      s.ceil_mode = attr_int(n, "ceil_mode").value_or(0) != 0;
      s.pads = pads(i, x.shape, s.kernel, s.stride, s.dilation);
    }
    const Shape out = ops::pool2d_output_shape(x.shape, s, SourceLocation{file_}, node_name(i));
    const TensorId xi = tensor_of(in[0]);
    const TensorId y = output_tensor(i, n.output(0), out, x.dtype);
    ops::pool2d(builder_, base(i), xi, y, s);
  }

  void emit_gather(int i, const std::vector<int>& in) {
    const auto& n = g_.node(i);
    const Value& table = value(in[0]);
    const Value& idx = value(in[1]);
    const std::int64_t axis = normalize_axis(attr_int(n, "axis").value_or(0), table.shape.size());
    if (table.kind != ValueKind::initializer || table.shape.size() != 2 || axis != 0) return emit_view(i, in);
    // An embedding lookup: rows of a stored table.
    Shape out = idx.shape;
    out.push_back(table.shape[1]);
    std::optional<TensorId> indices;
    if (idx.kind == ValueKind::constant && idx.data && idx.shape.size() == 1) {
      bool positions = true;  // 0, 1, ..., T-1: the table rows are known
      for (std::size_t k = 0; k < idx.data->size(); ++k) positions &= (*idx.data)[k] == static_cast<double>(k);
      if (!positions) indices = tensor_of(in[1]);
    } else {
      indices = tensor_of(in[1]);
    }
    if (out.size() < 2) fail(i, "embedding of a scalar index is not supported");
    Operator op = base(i);
    op.type = "Embedding";
    const TensorId ti = tensor_of(in[0]);
    const TensorId y = output_tensor(i, n.output(0), out, table.dtype);
    ops::embedding(builder_, std::move(op), ti, indices, y);
  }

  // ---------------------------------------------------------------------------------- classification

  /// Trainable parameters vs buffers. Defaults: stored float tensors read by operators are parameters;
  /// batch-norm running statistics, integer tensors, constants and attention masks are buffers. Then the
  /// experiment's frozen / trainable globs apply.
  void classify() {
    std::set<TensorId> buffers;
    for (int v : bn_statistics_) buffers.insert(value(v).ir);
    for (int v : mask_values_) {
      // The mask and every stored tensor it is computed from (through views) are buffers.
      std::vector<std::string> stack{value(v).name};
      while (!stack.empty()) {
        const std::string name = stack.back();
        stack.pop_back();
        const int id = find(name);
        if (id >= 0 && value(id).ir != kNone) buffers.insert(value(id).ir);
        const int p = producer(name);
        if (p < 0) continue;
        for (const auto& input : g_.node(p).input()) {
          if (!input.empty()) stack.push_back(input);
        }
      }
    }
    for (const Value& v : values_) {
      if (v.ir == kNone || v.kind != ValueKind::initializer) continue;
      Tensor& t = builder_.tensor(v.ir);
      const bool integer = t.dtype == ElementType::int64 || t.dtype == ElementType::int32 ||
                           t.dtype == ElementType::int16 || t.dtype == ElementType::boolean;
      if (integer || buffers.contains(v.ir)) t.role = TensorRole::buffer;
    }
    for (TensorId id : buffers) {
      Tensor& t = builder_.tensor(id);
      if (t.role == TensorRole::weight) t.role = TensorRole::buffer;
    }
    apply_globs(options_.frozen, options_.frozen_where, "frozen", [](Tensor& t) {
      if (t.role != TensorRole::weight || t.producer != kNone) return false;
      t.frozen = true;
      return true;
    });
    apply_globs(options_.trainable, options_.trainable_where, "trainable", [](Tensor& t) {
      if (t.role != TensorRole::weight && t.role != TensorRole::buffer) return false;
      t.role = TensorRole::weight;
      t.frozen = false;
      return true;
    });
  }

  template <class F>
  void apply_globs(const std::vector<std::string>& globs, const SourceLocation& where, const char* what, F&& f) {
    for (const std::string& glob : globs) {
      std::size_t matched = 0;
      for (const Value& v : values_) {
        if (v.ir == kNone || (v.kind != ValueKind::initializer && v.kind != ValueKind::constant)) continue;
        if (fnmatch(glob.c_str(), v.name.c_str(), 0) == 0 && f(builder_.tensor(v.ir))) ++matched;
      }
      if (matched == 0) {
        std::vector<std::string> names;
        for (const Value& v : values_) {
          if (v.ir != kNone && v.kind == ValueKind::initializer) names.push_back(v.name);
        }
        throw UserError(where, std::string(what) + ": '" + glob + "' matches no stored tensor of " + file_ +
                                   did_you_mean(glob, names));
      }
    }
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  std::string file_;
  ConvertOptions options_;
  GraphBuilder builder_;
  std::deque<Value> values_;  // a deque: references stay valid while values are added
  std::unordered_map<std::string, int> index_;
  std::unordered_map<std::string, Shape> declared_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> producer_;
  std::set<std::string> static_value_;    // depends on no graph input
  std::set<std::string> constant_value_;  // computed from Constant nodes only
  std::vector<bool> absorbed_;            // nodes folded into a pattern emitted elsewhere
  std::map<int, Gelu> gelu_;              // by the final Mul node
  std::map<int, Linear> linear_;          // by MatMul node
  std::map<int, MaskedSoftmax> masked_;   // by Softmax node
  std::map<std::string, int> transposed_; // transposed weight value -> Transpose node
  std::set<int> bn_statistics_;
  std::set<int> mask_values_;
  std::set<std::string> warned_;
  std::vector<int> convert_node_later_;
  std::int64_t original_batch_ = 0;
  std::int64_t opset_ = 17;
};

}  // namespace

const std::vector<std::string>& supported_op_types() {
  static const std::vector<std::string> ops = make_supported();
  return ops;
}

GraphPtr convert(const onnx::ModelProto& model, const std::string& file, const ConvertOptions& options) {
  return Converter(model, file, options).run();
}

}  // namespace monet::onnx_frontend
