#pragma once
// What the onnx frontend does with each ONNX operator type (docs/workloads.md lists the same table).
#include <map>
#include <set>
#include <string>
#include <vector>

namespace monet::onnx_frontend {

/// Arithmetic operations per element of pointwise ONNX ops (docs/workloads.md).
extern const std::map<std::string, double> kPointwiseOps;
/// GELU through erf: divide, erf (4, a polynomial), add, multiply, multiply.
inline constexpr double kGeluOps = 8;

extern const std::set<std::string> kViewOps;
extern const std::set<std::string> kConstantOnlyOps;
extern const std::set<std::string> kBooleanOps;

/// Every op type the converter understands, sorted.
std::vector<std::string> make_supported();

}  // namespace monet::onnx_frontend
