#pragma once
// The state of one ONNX -> monet conversion, shared by the files that implement it:
//   conversion.cpp   values, sources, dispatch, the IR tensors and operators of a node
//   patterns.cpp     multi-node idioms recognised before conversion (GELU, linear, masked softmax, ...)
//   folding.cpp      nodes that compute on constants only, evaluated at import
//   shapes.cpp  output shapes of the data-movement operators
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
#include "monet/ir/ops.hpp"
#include "op_table.hpp"
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
  /// An axis of a rank-`rank` value (negative: from the end); out of range is an error naming the node.
  std::size_t axis_of(int node, std::int64_t axis, std::size_t rank) const;

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
  /// Every [workload] dims name must be a symbolic dimension of the model's inputs.
  void check_dims_bound() const;
  void declare(const onnx::ValueInfoProto& vi);
  void index_consumers();
  const std::vector<int>& consumers(const std::string& name) const;
  int producer(const std::string& name) const;
  int single_consumer(const std::string& name) const;
  /// A scalar value known from a Constant node (for pattern matching), if any.
  std::optional<double> constant_scalar(const std::string& name) const;
  bool is_op(int node, const char* type) const { return node >= 0 && g_.node(node).op_type() == type; }

  // patterns
  /// A pointwise function exported as several nodes (SiLU = x·Sigmoid(x), GELU from erf or tanh, Mish,
  /// HardSwish = x·HardSigmoid(x), rsqrt = 1/Sqrt(x)): one elementwise operator of `type` on x.
  struct Activation {
    std::string type;
    std::string x;            // input value
    std::vector<int> nodes;   // every node of the pattern, in order
    int name_node;            // the node the operator is named after (Erf, Sigmoid, Tanh, ...)
    double ops;
  };
  /// GroupNorm as PyTorch exports it: Reshape [N, G, -1] -> InstanceNormalization -> Reshape back (-> Mul by
  /// the weight -> Add the bias).
  struct GroupNormPattern {
    std::string x;
    std::string scale, bias;  // stored [C] tensors, empty when the norm has no affine part
    std::int64_t groups;
    std::vector<int> nodes;
    int instance_norm;
  };
  /// LayerNorm as opsets before 17 export it: ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt ->
  /// Div (-> Mul by the weight -> Add the bias).
  struct LayerNormPattern {
    std::string x;
    std::string scale, bias;  // stored tensors, empty when absent
    std::size_t axis;         // the first normalised axis
    std::vector<int> nodes;
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
  /// The other input of a binary node, given one; empty when `input` is not one of its inputs.
  std::string other_input(int node, const std::string& input) const;
  bool scalar_is(const std::string& name, double v) const;
  /// Records a recognised activation ending at node `last`; its other nodes are absorbed.
  void add_activation(int last, Activation a);
  void find_patterns();
  void match_gelu(int erf);
  void match_gelu_tanh(int tanh);
  void match_sigmoid_gate(int node);  // SiLU, HardSwish
  void match_mish(int softplus);
  void match_rsqrt(int sqrt);
  void match_group_norm(int instance_norm);
  void match_layer_norm(int mean);
  void match_linear(int mm);
  void match_masked_softmax(int sm);
  /// Whether a value is computed from rows of a stored float table (Swin's relative position bias): a learned
  /// bias, not a mask.
  bool looked_up_from_table(const std::string& name) const;
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
  /// A new IR tensor of the file (no ONNX value of its own when made for a copy PyTorch inserts).
  TensorId ir_tensor(const std::string& name, const Shape& shape, ElementType dtype, TensorRole role);
  const std::vector<double>& const_data(int node, int v, const char* what) const;
  std::vector<std::int64_t> const_ints(int node, int v, const char* what) const;
  bool is_weight(int v) const;

  // dispatch
  void convert_node(int i);
  /// A node monet does not model: an error naming it (with the rule's reason), or a passthrough view.
  void unknown(int i, const OpRule* rule);

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
  /// Output shape of a copy node (Pad, Resize, Tile, scatters, gathers, ...), shared by folding and emission.
  Shape copy_shape(int i, const std::vector<int>& in);
  /// Begin pads of every axis of a Pad node (negative: cropping), then the ends.
  std::vector<std::int64_t> pad_amounts(int i, const std::vector<int>& in);
  /// Axes a reduction node reduces (attribute or input; all when none are given).
  std::vector<std::size_t> reduce_axes(int i, const std::vector<int>& in);
  /// Output shape of a pointwise node: its inputs broadcast (or the shape it names, for random tensors).
  Shape pointwise_shape(int i, const std::vector<int>& in);
  /// Inputs of a pointwise node that are tensors the operation reads (not bounds, ratios, axes or shapes).
  std::vector<int> pointwise_operands(int i, const std::vector<int>& in);
  ElementType pointwise_dtype(int i, const std::vector<int>& operands);
  /// Strides of output k of a view node, from its input's (empty: contiguous).
  std::vector<std::int64_t> view_strides(int i, const std::vector<int>& in, std::size_t k, const Shape& out);
  bool is_contiguous_value(int v) const;

  // operators
  void emit_view(int i, const std::vector<int>& in);
  void emit_pointwise(int i, const std::vector<int>& in);
  void emit_activation(int i);
  void emit_reduce(int i, const std::vector<int>& in);
  void emit_copy(int i, const std::vector<int>& in);
  /// A view node PyTorch computes as a copy into a new storage: a Reshape / Flatten of a non-contiguous view
  /// (contiguous().view(), reshape) or a Slice with a negative step (flip).
  void emit_copy_of_view(int i, int x, const Shape& out, const char* type);
  /// Kernel, strides, dilations and groups of a Conv / ConvTranspose node (1-, 2- or 3-D), checked.
  ops::ConvSpec conv_spec(int i, const Value& x, const Value& w);
  void emit_conv(int i, const std::vector<int>& in);
  void emit_conv_transpose(int i, const std::vector<int>& in);
  /// Pads of a window node: explicit, or from auto_pad (SAME_UPPER / SAME_LOWER); begins then ends.
  std::vector<std::int64_t> window_pads(int i, const Shape& x, const std::vector<std::int64_t>& kernel,
                                        const std::vector<std::int64_t>& stride,
                                        const std::vector<std::int64_t>& dilation);
  void emit_einsum(int i, const std::vector<int>& in);
  void emit_group_norm(int i, const std::vector<int>& in);
  void emit_group_norm_pattern(int i);
  void emit_layer_norm_pattern(int i);
  void emit_gemm(int i, const std::vector<int>& in);
  void emit_matmul(int i, const std::vector<int>& in);
  /// The tensor a MatMul reads for value v: v itself, or a contiguous copy when torch.matmul's reshape of it to
  /// [batch, n, k] (`batch` batch axes; 0: folding a ≥3-D operand against a matrix) cannot be a view.
  TensorId matmul_operand(int i, int v, std::size_t batch, const char* which);
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
  std::map<int, Activation> activation_;  // by the pattern's last node
  std::map<int, GroupNormPattern> group_norm_;  // by the pattern's last node
  std::map<int, LayerNormPattern> layer_norm_;  // by the pattern's last node
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
