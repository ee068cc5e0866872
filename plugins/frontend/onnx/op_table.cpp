#include "op_table.hpp"

#include <algorithm>

namespace monet::onnx_frontend {

namespace {
using T = Treatment;

// Sorted by type. Operation counts are per element; a MAC loop nest counts MACs instead.
const std::vector<OpRule> kRules{
    {"Abs", T::elementwise, 1, ""},
    {"Acos", T::unsupported, 0, "inverse trigonometry is not in the models monet targets; file an issue with the model"},
    {"Add", T::elementwise, 1, "broadcast; a 1-D stored bias after MatMul becomes the linear layer's bias"},
    {"And", T::elementwise, 1, "boolean"},
    {"ArgMax", T::reduction, 1, "int64 result; no gradient"},
    {"ArgMin", T::reduction, 1, "int64 result; no gradient"},
    {"Asin", T::unsupported, 0, "inverse trigonometry is not in the models monet targets; file an issue with the model"},
    {"Atan", T::unsupported, 0, "inverse trigonometry is not in the models monet targets; file an issue with the model"},
    {"AveragePool", T::loop_nest, 1, "1-, 2- and 3-D windows: B K, output positions, taps"},
    {"BatchNormalization", T::loop_nest, 6, "training mode 6 operations per element (statistics, normalise, affine), inference 2"},
    {"Bernoulli", T::elementwise, 1, "random; no gradient"},
    {"Cast", T::elementwise, 1, ""},
    {"CastLike", T::elementwise, 1, ""},
    {"Ceil", T::elementwise, 1, "no gradient"},
    {"Celu", T::elementwise, 4, ""},
    {"Clip", T::elementwise, 2, "ReLU6 / hardtanh"},
    {"Compress", T::unsupported, 0, "its output size depends on the data; monet needs static shapes"},
    {"Concat", T::view, 0, "a new storage holding its inputs side by side (no arithmetic)"},
    {"Constant", T::folded, 0, ""},
    {"ConstantOfShape", T::folded, 0, ""},
    {"Conv", T::loop_nest, 1, "1-, 2-, 3-D, groups, depthwise, stride, dilation, pads, auto_pad: exact MACs"},
    {"ConvTranspose", T::loop_nest, 1, "1-, 2-, 3-D, groups, output_padding, output_shape: exact MACs (every input element meets every tap)"},
    {"Cos", T::elementwise, 4, "folded on constants (rotary tables)"},
    {"CumSum", T::elementwise, 1, "a running sum along an axis"},
    {"DepthToSpace", T::copy, 0, "a permutation into a new tensor"},
    {"DequantizeLinear", T::unsupported, 0, "quantized graphs are inference exports; train the float model"},
    {"Div", T::elementwise, 1, ""},
    {"Dropout", T::elementwise, 2, "mask and scale; ratio 0 or training_mode false: a view"},
    {"Einsum", T::loop_nest, 1, "one or two operands: a matrix-product loop nest with exact MACs (one operand: a reduction)"},
    {"Elu", T::elementwise, 3, ""},
    {"Equal", T::elementwise, 1, "boolean"},
    {"Erf", T::elementwise, 4, "the erf formula of GELU becomes one Gelu operator"},
    {"Exp", T::elementwise, 1, ""},
    {"Expand", T::view, 0, "a broadcast view"},
    {"EyeLike", T::folded, 0, ""},
    {"Flatten", T::view, 0, ""},
    {"Floor", T::elementwise, 1, "no gradient"},
    {"GRU", T::unsupported, 0, "recurrent layers are not loop nests yet; export the unrolled cell"},
    {"Gather", T::view, 0, "a stored 2-D table read at indices is an embedding; a scalar index is a view, an index tensor a copy"},
    {"GatherElements", T::copy, 0, "an indexed copy"},
    {"GatherND", T::copy, 0, "an indexed copy"},
    {"Gelu", T::elementwise, 8, ""},
    {"Gemm", T::loop_nest, 1, "exact MACs; alpha/beta scale nothing that changes the work"},
    {"GlobalAveragePool", T::loop_nest, 1, "a window over all positions"},
    {"GlobalMaxPool", T::loop_nest, 1, "a window over all positions"},
    {"Greater", T::elementwise, 1, "boolean"},
    {"GreaterOrEqual", T::elementwise, 1, "boolean"},
    {"GroupNormalization", T::loop_nest, 6, "statistics per (sample, group)"},
    {"HardSigmoid", T::elementwise, 3, ""},
    {"HardSwish", T::elementwise, 4, ""},
    {"Hardmax", T::unsupported, 0, "a one-hot argmax has no gradient and no place in a training graph"},
    {"Identity", T::view, 0, ""},
    {"If", T::unsupported, 0, "control flow: export with fixed shapes so the branch is resolved"},
    {"InstanceNormalization", T::loop_nest, 6, "statistics per (sample, channel); with the exporter's reshapes around it, GroupNorm"},
    {"IsInf", T::elementwise, 1, "boolean"},
    {"IsNaN", T::elementwise, 1, "boolean"},
    {"LSTM", T::unsupported, 0, "recurrent layers are not loop nests yet; export the unrolled cell"},
    {"LayerNormalization", T::loop_nest, 6, "statistics per row"},
    {"LeakyRelu", T::elementwise, 2, ""},
    {"Less", T::elementwise, 1, "boolean"},
    {"LessOrEqual", T::elementwise, 1, "boolean"},
    {"Log", T::elementwise, 1, ""},
    {"LogSoftmax", T::loop_nest, 5, "max, subtract, exp, sum, log per row"},
    {"Loop", T::unsupported, 0, "control flow: export with fixed shapes so the loop is unrolled"},
    {"MatMul", T::loop_nest, 1, "batched, broadcast: gemm with a stored weight, matmul of two activations: exact MACs"},
    {"Max", T::elementwise, 1, "n − 1 operations for n inputs"},
    {"MaxPool", T::loop_nest, 1, "1-, 2- and 3-D windows; training saves int64 indices"},
    {"MaxUnpool", T::unsupported, 0, "not in the models monet targets; file an issue with the model"},
    {"Mean", T::elementwise, 1, "n operations for n inputs"},
    {"Min", T::elementwise, 1, "n − 1 operations for n inputs"},
    {"Mish", T::elementwise, 9, ""},
    {"Mod", T::elementwise, 1, "usually folded (window indices)"},
    {"Mul", T::elementwise, 1, ""},
    {"Neg", T::elementwise, 1, ""},
    {"NonMaxSuppression", T::unsupported, 0, "its output size depends on the data; monet needs static shapes"},
    {"NonZero", T::unsupported, 0, "its output size depends on the data; monet needs static shapes"},
    {"Not", T::elementwise, 1, "boolean"},
    {"OneHot", T::copy, 0, "a new tensor of the depth's size"},
    {"Or", T::elementwise, 1, "boolean"},
    {"PRelu", T::elementwise, 2, "the slope is a parameter"},
    {"Pad", T::copy, 0, "constant, reflect, edge: the output reads the input shifted by the begin pads"},
    {"Pow", T::elementwise, 1, "x² of RMSNorm, x³ of the tanh GELU"},
    {"QuantizeLinear", T::unsupported, 0, "quantized graphs are inference exports; train the float model"},
    {"RNN", T::unsupported, 0, "recurrent layers are not loop nests yet; export the unrolled cell"},
    {"RandomNormal", T::elementwise, 1, "random; no gradient"},
    {"RandomNormalLike", T::elementwise, 1, "random; reads only its input's shape; no gradient"},
    {"RandomUniform", T::elementwise, 1, "random; no gradient"},
    {"RandomUniformLike", T::elementwise, 1, "random (stochastic depth); reads only its input's shape; no gradient"},
    {"Range", T::folded, 0, ""},
    {"Reciprocal", T::elementwise, 1, "Reciprocal(Sqrt(x)) becomes one Rsqrt"},
    {"ReduceL1", T::reduction, 2, ""},
    {"ReduceL2", T::reduction, 2, ""},
    {"ReduceLogSum", T::reduction, 1, ""},
    {"ReduceLogSumExp", T::reduction, 3, ""},
    {"ReduceMax", T::reduction, 1, ""},
    {"ReduceMean", T::reduction, 1, "axes as attribute (opset < 18) or input (opset 18)"},
    {"ReduceMin", T::reduction, 1, ""},
    {"ReduceProd", T::reduction, 1, ""},
    {"ReduceSum", T::reduction, 1, ""},
    {"ReduceSumSquare", T::reduction, 2, ""},
    {"Relu", T::elementwise, 1, ""},
    {"Reshape", T::view, 0, "of a non-contiguous view: a copy, as PyTorch's contiguous()/reshape makes"},
    {"Resize", T::copy, 7, "nearest: a copy; linear: a weighted sum of 2 taps per resized axis (bilinear: 4 taps, 7 operations); cubic: 4 taps per axis"},
    {"RoiAlign", T::unsupported, 0, "detection heads are not in the models monet targets; file an issue with the model"},
    {"Round", T::elementwise, 1, "no gradient"},
    {"Scan", T::unsupported, 0, "control flow: export with fixed shapes so the loop is unrolled"},
    {"ScatterElements", T::copy, 0, "a copy of the data with updates written at indices"},
    {"ScatterND", T::copy, 0, "a copy of the data with updates written at indices (usually folded: Swin's masks)"},
    {"Selu", T::elementwise, 4, ""},
    {"Shape", T::folded, 0, ""},
    {"Sigmoid", T::elementwise, 4, "x·Sigmoid(x) becomes one SiLU"},
    {"Sign", T::elementwise, 1, "no gradient"},
    {"Sin", T::elementwise, 4, "folded on constants (rotary tables)"},
    {"Size", T::folded, 0, ""},
    {"Slice", T::view, 0, "open ends (INT64_MAX) clamp to the axis"},
    {"Softmax", T::loop_nest, 5, "max, subtract, exp, sum, divide per row; +1 with a mask"},
    {"Softplus", T::elementwise, 3, ""},
    {"Softsign", T::elementwise, 3, ""},
    {"SpaceToDepth", T::copy, 0, "a permutation into a new tensor"},
    {"Split", T::view, 0, "one view per output; split sizes as attribute, input or num_outputs (opset 18)"},
    {"Sqrt", T::elementwise, 1, ""},
    {"Squeeze", T::view, 0, ""},
    {"Sub", T::elementwise, 1, ""},
    {"Sum", T::elementwise, 1, "n − 1 operations for n inputs"},
    {"Tan", T::unsupported, 0, "not in the models monet targets; file an issue with the model"},
    {"Tanh", T::elementwise, 5, ""},
    {"Tile", T::copy, 0, "the input repeated into a new tensor"},
    {"TopK", T::unsupported, 0, "selection by value is not modelled; file an issue with the model"},
    {"Transpose", T::view, 0, ""},
    {"Trilu", T::elementwise, 1, "folded on constants (causal masks)"},
    {"Unique", T::unsupported, 0, "its output size depends on the data; monet needs static shapes"},
    {"Unsqueeze", T::view, 0, ""},
    {"Upsample", T::copy, 7, "as Resize"},
    {"Where", T::elementwise, 1, "Where(mask, -inf, scores) before Softmax becomes a masked softmax"},
    {"Xor", T::elementwise, 1, "boolean"},
};
}  // namespace

const char* treatment_name(Treatment t) {
  switch (t) {
    case T::loop_nest: return "loop nest";
    case T::elementwise: return "elementwise";
    case T::reduction: return "reduction";
    case T::copy: return "copy";
    case T::view: return "view";
    case T::folded: return "folded";
    case T::unsupported: return "unsupported";
  }
  return "?";
}

const std::vector<OpRule>& op_rules() { return kRules; }

const OpRule* op_rule(std::string_view type) {
  auto it = std::lower_bound(kRules.begin(), kRules.end(), type,
                             [](const OpRule& r, std::string_view t) { return r.type < t; });
  return it != kRules.end() && it->type == type ? &*it : nullptr;
}

bool is_boolean_op(std::string_view type) {
  static const char* const kBoolean[] = {"And", "Equal", "Greater", "GreaterOrEqual", "IsInf", "IsNaN",
                                         "Less", "LessOrEqual", "Not", "Or", "Xor"};
  return std::find(std::begin(kBoolean), std::end(kBoolean), type) != std::end(kBoolean);
}

}  // namespace monet::onnx_frontend
