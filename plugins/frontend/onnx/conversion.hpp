#pragma once
// The state of one ONNX -> monet conversion, shared by the files that implement it:
//   conversion.cpp   values, sources, dispatch, the IR tensors and operators of a node
//   patterns.cpp     multi-node idioms recognised before conversion (GELU, linear, masked softmax, ...)
//   folding.cpp      nodes that compute on constants only, evaluated at import
//   view_shapes.cpp  output shapes of the data-movement operators
//   emit_*.cpp       one IR operator (or a few) per ONNX node, by operator family
//   classify.cpp     stored tensors: trainable parameters vs buffers
#include <onnx/onnx_pb.h>

#include <array>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "converter.hpp"
#include "values.hpp"

namespace monet::onnx_frontend {

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank);
/// Equal up to 1e-4 relative: constants in exports are rounded to float.
bool near(double a, double b);

class Converter {
 public:
  Converter(const onnx::ModelProto& model, std::string file, const ConvertOptions& options);
  GraphPtr run();

 private:
  // errors
  [[noreturn]] void fail_model(const std::string& message) const;
  [[noreturn]] void fail(int node, const std::string& message) const;
  std::string node_name(int node) const;

  // values
  int find(const std::string& name) const;
  Value& value(int v) { return values_[static_cast<std::size_t>(v)]; }
  const Value& value(int v) const { return values_[static_cast<std::size_t>(v)]; }
  int add_value(Value v);
  /// Input values of a node; -1 for omitted optional inputs.
  std::vector<int> inputs_of(int node) const;
  /// Static shapes the file declares (value_info, outputs), used as a cross-check.
  std::optional<Shape> declared_shape(const std::string& name) const;
  void register_sources();
  void declare(const onnx::ValueInfoProto& vi);
  void index_consumers();
  const std::vector<int>& consumers(const std::string& name) const;
  int producer(const std::string& name) const;
  int single_consumer(const std::string& name) const;
  /// A scalar value known from a Constant node (for pattern matching), if any.
  std::optional<double> constant_scalar(const std::string& name) const;
  bool is_op(int node, const char* type) const { return node >= 0 && g_.node(node).op_type() == type; }

  // patterns
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
  void find_patterns();
  void match_gelu(int erf);
  void match_linear(int mm);
  void match_masked_softmax(int sm);
  void match_transposed_weight(int tr);

  // emission helpers
  Operator base(int node, std::vector<int> extra_nodes = {});
  /// The IR tensor of a value, creating it for stored tensors and constants on first use.
  TensorId tensor_of(int v);
  /// Defines an output value of a node (cross-checked against the file's declared shape).
  int define(int node, const std::string& name, Shape shape, ElementType dtype, ValueKind kind,
             std::optional<std::vector<double>> data = std::nullopt);
  /// An activation output tensor for an IR operator.
  TensorId output_tensor(int node, const std::string& name, const Shape& shape, ElementType dtype);
  const std::vector<double>& const_data(int node, int v, const char* what) const;
  std::vector<std::int64_t> const_ints(int node, int v, const char* what) const;
  bool is_weight(int v) const;

  // dispatch
  void convert_node(int i);
  void unknown(int i);

  // constant folding
  /// Folds a node whose inputs are all constants. Returns false when the op must become an operator.
  bool fold(int i, const std::vector<int>& in);
  /// Constant, Shape, Size, ConstantOfShape, Range, Trilu: values computed at import.
  void fold_constant_op(int i, const std::vector<int>& in);

  // view shapes
  /// Per axis of a Slice's input: first index taken, step and number of elements (ONNX clamping rules).
  struct SliceParams {
    std::vector<std::int64_t> start, step, size;
  };
  SliceParams slice_params(int i, const std::vector<int>& in);
  /// Output shapes of the data-movement ops (shared by folding and emission).
  std::vector<Shape> view_shapes(int i, const std::vector<int>& in);

  // operators
  void emit_view(int i, const std::vector<int>& in);
  void emit_pointwise(int i, const std::vector<int>& in);
  void emit_gelu(int i);
  void emit_conv(int i, const std::vector<int>& in);
  std::array<std::int64_t, 4> pads(int i, const Shape& x, std::array<std::int64_t, 2> kernel,
                                   std::array<std::int64_t, 2> stride, std::array<std::int64_t, 2> dilation);
  void emit_gemm(int i, const std::vector<int>& in);
  void emit_matmul(int i, const std::vector<int>& in);
  void emit_batch_norm(int i, const std::vector<int>& in);
  void emit_layer_norm(int i, const std::vector<int>& in);
  void emit_softmax(int i, const std::vector<int>& in);
  void emit_pool(int i, const std::vector<int>& in);
  void emit_gather(int i, const std::vector<int>& in);

  // classification
  /// Trainable parameters vs buffers. Defaults: stored float tensors read by operators are parameters;
  /// batch-norm running statistics, integer tensors, constants and attention masks are buffers. Then the
  /// experiment's frozen / trainable globs apply.
  void classify();
  /// Applies f to every stored tensor a glob matches; a glob that matches nothing is an error.
  template <class F>
  void apply_globs(const std::vector<std::string>& globs, const SourceLocation& where, const char* what, F&& f);

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

}  // namespace monet::onnx_frontend
