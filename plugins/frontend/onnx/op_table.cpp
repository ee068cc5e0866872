#include "op_table.hpp"

namespace monet::onnx_frontend {

const std::map<std::string, double> kPointwiseOps{
    {"Relu", 1}, {"LeakyRelu", 2}, {"Clip", 2}, {"Sigmoid", 4}, {"Tanh", 5}, {"Erf", 4}, {"Sqrt", 1},
    {"Exp", 1},  {"Log", 1},       {"Neg", 1},  {"Reciprocal", 1}, {"Abs", 1}, {"Pow", 1}, {"Add", 1},
    {"Sub", 1},  {"Mul", 1},       {"Div", 1},  {"Where", 1}, {"Equal", 1}, {"Less", 1}, {"Greater", 1},
    {"Not", 1},  {"And", 1},       {"Or", 1},   {"Cast", 1}, {"Dropout", 2}, {"Max", 1}, {"Min", 1},
    {"Gelu", 8}, {"Softplus", 3},  {"HardSigmoid", 3}, {"HardSwish", 4},
};

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

}  // namespace monet::onnx_frontend
