// The native workload format: a list of layers in TOML (docs/workloads.md). Shapes are inferred layer by
// layer; every mistake is reported with file:line:column.
#include <map>
#include <set>

#include "monet/config/toml_reader.hpp"
#include "monet/ir/ops.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/frontend.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

/// Arithmetic operations per element of the pointwise ops (documented in docs/workloads.md).
struct PointwiseOp {
  const char* name;
  const char* type;  // operator type recorded in the graph
  int arity;         // 1 = unary, 2 = binary with broadcasting
  double ops;        // default operations per output element
};
constexpr PointwiseOp kPointwise[] = {
    {"relu", "Relu", 1, 1},       {"relu6", "Clip", 1, 2},   {"clip", "Clip", 1, 2},
    {"sigmoid", "Sigmoid", 1, 4}, {"tanh", "Tanh", 1, 5},    {"gelu", "Gelu", 1, 8},
    {"silu", "Silu", 1, 5},       {"identity", "Identity", 1, 0},
    {"add", "Add", 2, 1},         {"sub", "Sub", 2, 1},      {"mul", "Mul", 2, 1},
    {"div", "Div", 2, 1},
};

/// Bits of an operand or a partial sum: 1 to 64, monet's widest element type (a larger value would not fit an int).
const Bounds kBits{1.0, 64.0};

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"conv", "linear", "gemm", "matmul", "maxpool", "avgpool", "global_avgpool",
                               "softmax", "flatten", "reshape", "loopnest"};
    for (const PointwiseOp& p : kPointwise) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

class TomlWorkload {
 public:
  TomlWorkload(const TomlDocument& doc, std::int64_t batch_override)
      : doc_(doc), root_(doc.root(), doc.file(), "", doc.base_dir()), batch_(batch_override) {}

  GraphPtr build() {
    std::string name = "workload";
    ElementType dtype = ElementType::fp32;
    if (auto w = root_.table("workload")) {
      name = w->string("name").value_or(name);
      dtype = element_type(*w, "dtype").value_or(dtype);
      weight_dtype_ = element_type(*w, "weight_dtype");
      partial_sum_bits_ = static_cast<int>(w->integer("partial_sum_bits", kBits).value_or(0));
      w->finish();
    }
    dtype_ = dtype;
    GraphBuilder b(name);
    builder_ = &b;
    auto inputs = root_.table_array("inputs");
    if (inputs.empty()) root_.fail_table("a workload needs at least one [[inputs]] entry (name, shape)");
    for (TableReader& in : inputs) read_input(in);
    if (inputs.size() == 1) last_ = 0;  // the first layer reads the only input unless it says otherwise
    for (TableReader& t : root_.table_array("tensors")) read_stored_tensor(t);
    auto layers = root_.table_array("layers");
    if (layers.empty()) root_.fail_table("a workload needs at least one [[layers]] entry");
    for (TableReader& l : layers) read_layer(l);
    root_.finish();
    return std::move(b).build();
  }

 private:
  std::optional<ElementType> element_type(TableReader& t, std::string_view key) {
    auto s = t.string(key);
    if (!s) return std::nullopt;
    auto e = parse_element_type(*s);
    if (!e) {
      t.fail(key, "'" + *s + "' is not an element type; expected one of " + join(all_element_type_names(), ", ", true) +
                      did_you_mean(*s, all_element_type_names()));
    }
    return e;
  }

  /// A new tensor's name (under `name_key`, not yet defined) and shape, located at its table.
  Tensor new_tensor(TableReader& t, const char* name_key) {
    Tensor x;
    x.origin = t.where();
    x.name = t.required_string(name_key);
    if (builder_->find_tensor(x.name) != kNone) t.fail(name_key, "'" + x.name + "' is defined twice");
    auto shape = t.integer_list("shape", Bounds::at_least(1));
    if (!shape) t.fail_missing("shape", "a list of positive integers");
    x.shape = *shape;
    GraphBuilder::check_shape(x.name, x.shape, t.where("shape"));  // an overflow is the shape's, not the table's
    return x;
  }

  void read_input(TableReader& t) {
    Tensor x = new_tensor(t, "name");
    if (x.shape.empty()) t.fail_missing("shape", "a list of positive integers");
    if (batch_ > 0) x.shape[0] = batch_;
    x.dtype = element_type(t, "dtype").value_or(dtype_);
    const std::string role = t.choice("role", {"input", "label"}).value_or("input");
    x.role = role == "label" ? TensorRole::label : TensorRole::input;
    t.finish();
    defined_.insert(x.name);
    builder_->add_tensor(std::move(x));
  }

  /// [[tensors]]: stored tensors (parameters and buffers) that generic layers read.
  void read_stored_tensor(TableReader& t) {
    Tensor x = new_tensor(t, "name");
    x.dtype = element_type(t, "dtype").value_or(weight_dtype_.value_or(dtype_));
    // weight (trainable), buffer (stored, not trained), activation or index (computed in the forward pass
    // from constants, e.g. a causal mask or position ids: saved for backward like activations).
    const std::string role = t.choice("role", {"weight", "buffer", "activation", "index"}).value_or("weight");
    x.role = *parse_tensor_role(role);
    x.frozen = t.boolean("frozen").value_or(false);
    if (x.frozen && x.role != TensorRole::weight) t.fail("frozen", "only weights can be frozen");
    // A table's update where its gradient is row-sparse (FBGEMM's EmbOptimType; what `inspect --emit-toml` keeps).
    if (auto u = t.choice("sparse_update", all_sparse_update_names())) x.sparse_update = *parse_sparse_update(*u);
    t.finish();
    defined_.insert(x.name);
    builder_->add_tensor(std::move(x));
  }

  /// A tensor that generic layers may read: inputs, stored tensors and earlier outputs.
  TensorId existing(TableReader& t, std::string_view key, const std::string& name) {
    const TensorId id = builder_->find_tensor(name);
    if (id == kNone) {
      std::vector<std::string> known(defined_.begin(), defined_.end());
      t.fail(key, "'" + name + "' is not an input, a [[tensors]] entry or an earlier layer's output" +
                      did_you_mean(name, known));
    }
    return id;
  }

  std::vector<AffineExpr> index_of(TableReader& t, const std::vector<std::string>& dims) {
    std::vector<AffineExpr> acc;
    auto index = t.string_list("index");
    if (!index) return acc;  // the whole tensor, without an affine relation (views)
    for (const std::string& text : *index) {
      std::string error;
      auto e = parse_affine(text, dims, &error);
      if (!e) t.fail("index", "not an index expression over the loop dims (" + join(dims) + "): " + error);
      acc.push_back(*e);
    }
    return acc;
  }

  /// op = "loopnest": any operator, spelled out (what `monet inspect --emit-toml` writes).
  OperatorId read_loopnest(TableReader& t, Operator op) {
    op.kind = *parse_op_kind(t.choice("kind", all_op_kind_names()).value_or("elementwise"));
    op.type = t.string("type").value_or(to_string(op.kind));
    if (auto phase = t.choice("phase", {"forward", "loss", "backward_dx", "backward_dw", "optimizer", "recompute"})) {
      op.phase = *parse_phase(*phase);
    }
    const auto dims = t.string_list("dims").value_or(std::vector<std::string>{});
    const auto sizes = t.integer_list("sizes", Bounds::at_least(1)).value_or(std::vector<std::int64_t>{});
    if (dims.size() != sizes.size()) {
      t.fail("sizes", "expected " + std::to_string(dims.size()) + " sizes (one per entry of 'dims'), got " +
                          std::to_string(sizes.size()));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (!seen.insert(dims[i]).second) t.fail("dims", "dimension '" + dims[i] + "' is listed twice");
      op.dims.push_back(LoopDim{dims[i], sizes[i]});
    }
    op.ops_per_iteration = t.number("ops_per_iteration", Bounds::non_negative()).value_or(1);
    auto outputs = t.table_array("outputs");
    if (outputs.empty()) t.fail_missing("outputs", "a list of { tensor, shape, index } tables");
    for (TableReader& o : outputs) {
      Tensor y = new_tensor(o, "tensor");
      y.dtype = element_type(o, "dtype").value_or(dtype_);
      y.role = o.choice("role", {"activation", "buffer"}).value_or("activation") == "buffer" ? TensorRole::buffer
                                                                                               : TensorRole::activation;
      Operand operand;
      operand.slot = OperandSlot::O;
      operand.access = index_of(o, dims);
      operand.precision_bits = static_cast<int>(o.integer("precision_bits", kBits).value_or(bits_of(y.dtype)));
      operand.partial_sum_bits = static_cast<int>(o.integer("partial_sum_bits", kBits).value_or(0));
      o.finish();
      defined_.insert(y.name);
      operand.tensor = builder_->add_tensor(std::move(y));
      op.operands.push_back(std::move(operand));
    }
    auto inputs = t.table_array("inputs");
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      TableReader& in = inputs[k];
      Operand operand;
      const std::string name = in.required_string("tensor");
      operand.tensor = existing(in, "tensor", name);
      const std::string slot = in.choice("slot", {"I1", "I2"}).value_or(k == 0 ? "I1" : "I2");
      operand.slot = *parse_operand_slot(slot);
      operand.access = index_of(in, dims);
      // An I2 operand may have 0 bits: never stored or moved, ZigZag's pooling "weights" (its W, imported as I2).
      const Bounds bits = operand.slot == OperandSlot::I2 ? Bounds{0.0, 64.0} : kBits;
      operand.precision_bits = static_cast<int>(
          in.integer("precision_bits", bits).value_or(bits_of(builder_->tensor(operand.tensor).dtype)));
      operand.indirect = in.boolean("indirect").value_or(false);
      in.finish();
      op.operands.push_back(std::move(operand));
    }
    if (auto attrs = t.table("attributes")) {
      for (const std::string& k : attrs->keys()) op.attributes[k] = *attrs->integer_list(k);
      attrs->finish();
    }
    op.source_nodes = t.string_list("source_nodes").value_or(std::vector<std::string>{});
    return builder_->add_operator(std::move(op));
  }

  TensorId lookup(TableReader& t, std::string_view key, const std::string& name) {
    const TensorId id = builder_->find_tensor(name);
    if (id == kNone || builder_->tensor(id).role == TensorRole::weight) {
      std::vector<std::string> known;
      for (const auto& n : defined_) known.push_back(n);
      t.fail(key, "'" + name + "' is not an input or an earlier layer" + did_you_mean(name, known));
    }
    return id;
  }

  std::vector<TensorId> read_inputs(TableReader& t, std::size_t expected) {
    std::vector<std::string> names;
    std::string key = "input";
    if (t.has("input") && t.has("inputs")) t.fail("inputs", "give either 'input' or 'inputs', not both");
    if (auto one = t.string("input")) {
      names.push_back(*one);
    } else if (auto many = t.string_list("inputs")) {
      names = *many;
      key = "inputs";
    } else if (last_ != kNone) {
      names.push_back(builder_->tensor(last_).name);  // default: the previous layer
    } else {
      t.fail_table("missing 'input': the workload has several inputs (" + [&] {
        std::vector<std::string> n;
        for (const auto& d : defined_) n.push_back(d);
        return join(n);
      }() + ")");
    }
    if (names.size() != expected) {
      t.fail(key, "this operator takes " + std::to_string(expected) + " input(s), got " + std::to_string(names.size()));
    }
    std::vector<TensorId> ids;
    for (const std::string& n : names) ids.push_back(lookup(t, key, n));
    return ids;
  }

  TensorId add_weight(const std::string& name, Shape shape, const SourceLocation& where) {
    Tensor w;
    w.name = name;
    w.shape = std::move(shape);
    w.dtype = weight_dtype_.value_or(dtype_);
    w.role = TensorRole::weight;
    w.origin = where;
    return builder_->add_tensor(std::move(w));
  }

  TensorId add_output(const std::string& name, Shape shape, ElementType dtype, const SourceLocation& where) {
    Tensor y;
    y.name = name;
    y.shape = std::move(shape);
    y.dtype = dtype;
    y.role = TensorRole::activation;
    y.origin = where;
    return builder_->add_tensor(std::move(y));
  }

  /// kernel/stride/dilation: an integer or [h, w].
  std::array<std::int64_t, 2> pair(TableReader& t, std::string_view key, std::int64_t def) {
    auto v = t.integer_or_list(key, 2, Bounds::at_least(1));
    if (!v) return {def, def};
    return {(*v)[0], (*v)[1]};
  }

  /// padding: an integer, [h, w] or [top, left, bottom, right].
  std::array<std::int64_t, 4> pads(TableReader& t) {
    const toml::node* n = t.raw().get("padding");
    if (!n) {
      t.mark_used("padding");
      return {0, 0, 0, 0};
    }
    if (n->is_integer()) {
      const auto p = *t.integer("padding", Bounds::non_negative());
      return {p, p, p, p};
    }
    auto v = *t.integer_list("padding", Bounds::non_negative());
    if (v.size() == 2) return {v[0], v[1], v[0], v[1]};
    if (v.size() == 4) return {v[0], v[1], v[2], v[3]};
    t.fail("padding", "expected an integer, [h, w] or [top, left, bottom, right], got a list of " +
                          std::to_string(v.size()));
  }

  void read_layer(TableReader& t) {
    Operator op;
    op.origin = t.where();
    op.name = t.required_string("name");
    if (builder_->find_tensor(op.name) != kNone) t.fail("name", "'" + op.name + "' is defined twice");
    // The module this layer belongs to (checkpointing regions follow modules): "block1" or "block1.conv".
    op.module = t.string("module", "a dotted module name").value_or("");
    if (op.module.starts_with('.') || op.module.ends_with('.') || op.module.find("..") != std::string::npos) {
      t.fail("module", "expected a dotted module name such as \"block1.conv\", got \"" + op.module + "\"");
    }
    const std::string kind = t.required_string("op", "an operator name");
    const ElementType out_dtype = element_type(t, "dtype").value_or(dtype_);
    const int psum = static_cast<int>(t.integer("partial_sum_bits", kBits).value_or(partial_sum_bits_));
    const SourceLocation where = t.where();

    OperatorId id = kNone;
    if (kind == "loopnest") {
      id = read_loopnest(t, std::move(op));
    } else if (kind == "conv") {
      const TensorId x = read_inputs(t, 1)[0];
      const std::int64_t k = t.required_integer("out_channels", Bounds::at_least(1));
      ops::Conv2dSpec s;
      s.kernel = pair(t, "kernel", 1);
      s.stride = pair(t, "stride", 1);
      s.dilation = pair(t, "dilation", 1);
      s.pads = pads(t);
      s.groups = t.integer("groups", Bounds::at_least(1)).value_or(1);
      const bool bias = t.boolean("bias").value_or(true);
      const Shape& in = builder_->tensor(x).shape;
      const Shape out = ops::conv2d_output_shape(in, k, s, where, op.name);
      const TensorId w = add_weight(op.name + ".weight", {k, in[1] / s.groups, s.kernel[0], s.kernel[1]}, where);
      std::optional<TensorId> bt;
      if (bias) bt = add_weight(op.name + ".bias", {k}, where);
      const TensorId y = add_output(op.name, out, out_dtype, where);
      id = ops::conv2d(*builder_, std::move(op), x, w, bt, y, s);
    } else if (kind == "linear" || kind == "gemm") {
      const TensorId x = read_inputs(t, 1)[0];
      const std::int64_t n = t.required_integer("out_features", Bounds::at_least(1));
      const bool bias = t.boolean("bias").value_or(true);
      const Shape in = builder_->tensor(x).shape;
      if (in.size() < 2) t.fail_table("a linear layer needs an input of rank >= 2, got " + to_string(in));
      const TensorId w = add_weight(op.name + ".weight", {n, in.back()}, where);  // PyTorch layout [out, in]
      std::optional<TensorId> bt;
      if (bias) bt = add_weight(op.name + ".bias", {n}, where);
      ops::MatmulSpec s;
      s.transpose_b = true;
      const Shape out = ops::matmul_output_shape(in, builder_->tensor(w).shape, s, where, op.name);
      const TensorId y = add_output(op.name, out, out_dtype, where);
      op.kind = OpKind::gemm;
      op.type = "Gemm";
      id = ops::matmul(*builder_, std::move(op), x, w, bt, y, s);
    } else if (kind == "matmul") {
      const auto in = read_inputs(t, 2);
      ops::MatmulSpec s;
      s.transpose_a = t.boolean("transpose_a").value_or(false);
      s.transpose_b = t.boolean("transpose_b").value_or(false);
      const Shape out =
          ops::matmul_output_shape(builder_->tensor(in[0]).shape, builder_->tensor(in[1]).shape, s, where, op.name);
      const TensorId y = add_output(op.name, out, out_dtype, where);
      op.kind = OpKind::matmul;
      op.type = "MatMul";
      id = ops::matmul(*builder_, std::move(op), in[0], in[1], std::nullopt, y, s);
    } else if (kind == "maxpool" || kind == "avgpool") {
      const TensorId x = read_inputs(t, 1)[0];
      ops::Pool2dSpec s;
      s.kernel = pair(t, "kernel", 1);
      if (!t.has("kernel")) t.fail_table("missing required key 'kernel' (an integer or [h, w])");
      s.stride = pair(t, "stride", 0);
      if (s.stride[0] == 0) s.stride = s.kernel;  // PyTorch default: stride = kernel
      s.dilation = pair(t, "dilation", 1);
      s.pads = pads(t);
      s.ceil_mode = t.boolean("ceil_mode").value_or(false);
      const Shape out = ops::pool2d_output_shape(builder_->tensor(x).shape, s, where, op.name);
      const TensorId y = add_output(op.name, out, out_dtype, where);
      op.type = kind == "maxpool" ? "MaxPool" : "AveragePool";
      id = ops::pool2d(*builder_, std::move(op), x, y, s);
    } else if (kind == "global_avgpool") {
      const TensorId x = read_inputs(t, 1)[0];
      const Shape in = builder_->tensor(x).shape;
      if (in.size() != 4) t.fail_table("global_avgpool needs an NCHW input, got " + to_string(in));
      ops::Pool2dSpec s;
      s.kernel = {in[2], in[3]};
      s.stride = {1, 1};
      const TensorId y = add_output(op.name, {in[0], in[1], 1, 1}, out_dtype, where);
      op.type = "GlobalAveragePool";
      id = ops::pool2d(*builder_, std::move(op), x, y, s);
    } else if (kind == "softmax") {
      const TensorId x = read_inputs(t, 1)[0];
      const Shape shape = builder_->tensor(x).shape;
      const std::int64_t rank = static_cast<std::int64_t>(shape.size());
      std::int64_t axis = t.integer("axis", Bounds{static_cast<double>(-rank), static_cast<double>(rank - 1)}).value_or(-1);
      if (axis < 0) axis += rank;
      const TensorId y = add_output(op.name, shape, out_dtype, where);
      op.type = "Softmax";
      id = ops::softmax(*builder_, std::move(op), x, std::nullopt, y, static_cast<std::size_t>(axis));
    } else if (kind == "flatten" || kind == "reshape") {
      const TensorId x = read_inputs(t, 1)[0];
      const Shape in = builder_->tensor(x).shape;
      Shape out;
      if (kind == "flatten") {
        const auto axis = t.integer("axis", Bounds::at_least(0)).value_or(1);
        if (static_cast<std::size_t>(axis) > in.size()) t.fail("axis", "is beyond the rank of " + to_string(in));
        std::int64_t outer = 1;
        std::int64_t inner = 1;
        for (std::size_t i = 0; i < in.size(); ++i) (static_cast<std::int64_t>(i) < axis ? outer : inner) *= in[i];
        out = {outer, inner};
      } else {
        auto shape = t.integer_list("shape", Bounds::at_least(-1));
        if (!shape) t.fail_table("missing required key 'shape' (a list of sizes; -1 once for 'the rest')");
        out = *shape;
        std::int64_t known = 1;
        int unknown = -1;
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (out[i] == -1) {
            if (unknown >= 0) t.fail("shape", "only one size may be -1");
            unknown = static_cast<int>(i);
          } else if (out[i] == 0) {
            t.fail("shape", "sizes must be positive (or -1)");
          } else if (__builtin_mul_overflow(known, out[i], &known)) {  // then it wrapped, maybe to 0 (a division below)
            t.fail("shape", "reshaping " + to_string(in) + " to " + to_string(*shape) + " changes the element count");
          }
        }
        if (unknown >= 0) out[static_cast<std::size_t>(unknown)] = element_count(in) / known;
        if (element_count(out) != element_count(in)) {
          t.fail("shape", "reshaping " + to_string(in) + " to " + to_string(*shape) + " changes the element count");
        }
      }
      const TensorId y = add_output(op.name, out, builder_->tensor(x).dtype, where);
      op.type = kind == "flatten" ? "Flatten" : "Reshape";
      id = ops::view(*builder_, std::move(op), x, y);
    } else {
      const PointwiseOp* pw = nullptr;
      for (const PointwiseOp& p : kPointwise) {
        if (kind == p.name) pw = &p;
      }
      if (!pw) {
        t.fail("op", "unknown operator '" + kind + "'" + did_you_mean(kind, op_names()) + "; supported: " +
                         join(op_names()));
      }
      const auto in = read_inputs(t, static_cast<std::size_t>(pw->arity));
      std::vector<Shape> shapes;
      for (TensorId i : in) shapes.push_back(builder_->tensor(i).shape);
      const Shape out = ops::broadcast_shapes(shapes, where, op.name);
      const TensorId y = add_output(op.name, out, out_dtype, where);
      op.kind = OpKind::elementwise;
      op.type = pw->type;
      id = ops::elementwise(*builder_, std::move(op), in, y,
                            t.number("ops_per_element", Bounds::non_negative()).value_or(pw->ops));
    }
    // Ordering dependencies not carried by a tensor (imported layer lists).
    for (const std::string& before : t.string_list("after").value_or(std::vector<std::string>{})) {
      auto it = layer_ids_.find(before);
      if (it == layer_ids_.end()) {
        std::vector<std::string> known;
        for (const auto& [n, i] : layer_ids_) known.push_back(n);
        t.fail("after", "'" + before + "' is not an earlier layer" + did_you_mean(before, known));
      }
      builder_->op(id).after.push_back(it->second);
    }
    layer_ids_[builder_->op(id).name] = id;
    t.finish();
    if (psum > 0) {
      // Partial sums wider than the stored output (e.g. 8-bit outputs accumulated in 16 bits).
      Operator& built = builder_->op(id);
      for (Operand& o : built.operands) {
        if (o.is_output()) o.partial_sum_bits = psum;
      }
    }
    for (const Operand& o : builder_->op(id).operands) {
      if (!o.is_output()) continue;
      defined_.insert(builder_->tensor(o.tensor).name);
      last_ = o.tensor;  // the next layer's default input
      break;
    }
  }

  const TomlDocument& doc_;
  TableReader root_;
  std::int64_t batch_ = 0;
  GraphBuilder* builder_ = nullptr;
  ElementType dtype_ = ElementType::fp32;
  std::optional<ElementType> weight_dtype_;
  int partial_sum_bits_ = 0;
  TensorId last_ = kNone;
  std::set<std::string> defined_;
  std::map<std::string, OperatorId> layer_ids_;  // layers read so far, for `after`
};

class TomlFrontend final : public WorkloadFrontend {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::frontend;
    i.name = "toml";
    i.version = "2.0.0";
    i.summary = "Native layer-list workloads written in TOML (docs/workloads.md)";
    i.description =
        "Reads [[inputs]] (name, shape, dtype) and [[layers]] (name, op, input(s) and the op's attributes) and "
        "infers every shape. Ops: conv, linear/gemm, matmul, maxpool, avgpool, global_avgpool, softmax, flatten, "
        "reshape and the pointwise relu, relu6, clip, sigmoid, tanh, gelu, silu, identity, add, sub, mul, div, and "
        "loopnest (any operator spelled out). Layouts are NCHW for convolution and pooling; linear weights are "
        "[out_features, in_features]. A file whose [workload] table names a generator (generator = \"gpt\") is read "
        "by the frontend plugin of that name instead.";
    i.file_extensions = {".toml"};
    i.params = {ParamSpec::integer("batch", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("samples")
                    .with_doc("overrides the leading (batch) dimension of every input; 0 keeps the file's")};
    return i;
  }
  explicit TomlFrontend(const ParamValues& p) : batch_(p.get_int("batch")) {}

  [[nodiscard]] GraphPtr load(const std::filesystem::path& file) const override {
    return load_document(TomlDocument::parse_file(file));
  }
  [[nodiscard]] GraphPtr load_document(const TomlDocument& doc) const override {
    // A generated workload is its generator's (the kernel picks that frontend by the key): named here, refused.
    if (const auto* w = doc.root().get_as<toml::table>("workload")) {
      if (const toml::node* g = w->get("generator")) {
        const std::string name = g->value<std::string>().value_or(toml_text(*g));
        throw UserError(location_of(*g, doc.file()),
                        "workload.generator: generator = " + toml_text(*g) + ": a generated workload is read by the frontend plugin '" + name +
                            "', not by 'toml' (which reads [[layers]] lists); leave [workload] plugin out to have it "
                            "chosen by this key");
      }
    }
    return TomlWorkload(doc, batch_).build();
  }

 private:
  std::int64_t batch_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::TomlFrontend)
