#pragma once
// ONNX graph -> monet forward graph.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "monet/ir/graph.hpp"

namespace monet::onnx_frontend {

struct ConvertOptions {
  std::int64_t batch = 0;           // > 0: rewrite the leading (batch) dimension of every graph input
  std::map<std::string, std::int64_t> dims;  // sizes of symbolic input dimensions, by name
  SourceLocation dims_where;
  bool passthrough_unknown = false; // unknown ops become zero-cost views (with a warning) instead of an error
  std::vector<std::string> frozen;     // globs: matching parameters get no gradient
  std::vector<std::string> trainable;  // globs: matching buffers or frozen parameters become trainable
  SourceLocation frozen_where;
  SourceLocation trainable_where;
};

/// Converts a model. Errors name the file, the node and its op type.
GraphPtr convert(const onnx::ModelProto& model, const std::string& file, const ConvertOptions& options);

/// Op types the converter understands (for messages and docs).
const std::vector<std::string>& supported_op_types();

}  // namespace monet::onnx_frontend
