// The onnx frontend plugin: reads unmodified PyTorch ONNX exports (shapes only; weight data not needed).
#include <google/protobuf/stubs/logging.h>

#include <fstream>
#include <mutex>

#include "converter.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/frontend.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

class OnnxFrontend final : public WorkloadFrontend {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::frontend;
    i.name = "onnx";
    i.version = "1.0.0";
    i.summary = "ONNX models as exported by PyTorch, unmodified (shapes only; weight data not needed)";
    i.description =
        "Every node becomes a loop-nest operator (exact MACs for convolutions, matrix products and einsum), an "
        "elementwise, reduction or copy pass, or a zero-cost view, as docs/workloads.md tabulates; shape "
        "subgraphs and constant masks are folded; multi-node idioms (GELU, SiLU, Mish, HardSwish, rsqrt, "
        "GroupNorm, LayerNorm before opset 17, MatMul + bias Add, masked softmax, transposed weights, embedding "
        "lookups) become one semantic operator each, keeping the original node names; reshapes PyTorch copies "
        "are copies. Initializers read by operators are trainable parameters, except batch-norm running "
        "statistics, integer tensors and attention masks (buffers). Supported ops: " +
        join(onnx_frontend::supported_op_types()) + ".";
    i.file_extensions = {".onnx"};
    i.params = {
        ParamSpec::integer("batch", 0)
            .with_bounds(Bounds::non_negative())
            .with_unit("samples")
            .with_doc("overrides the leading (batch) dimension of every graph input; 0 keeps the file's"),
        ParamSpec::integer_table("dims", IntegerTable{})
            .with_bounds(Bounds::positive())
            .with_doc("sizes of the symbolic (dynamic) dimensions of the graph inputs, by name: dims.batch = 8, "
                      "dims.sequence = 512 (--set workload.dims.sequence=512)"),
        ParamSpec::choice("unknown_ops", {"error", "passthrough"}, "error")
            .with_doc("an operator the frontend does not model: stop with an error naming the node, or warn once "
                      "per op type and treat it as a zero-cost view of its first input (listed by inspect and in "
                      "results.json)"),
        ParamSpec::string_list("frozen", std::vector<std::string>{})
            .with_doc("globs of parameter names that receive no gradient (e.g. [\"layer1.*\"])"),
        ParamSpec::string_list("trainable", std::vector<std::string>{})
            .with_doc("globs of stored tensors to train although classified as buffers or frozen"),
    };
    return i;
  }

  explicit OnnxFrontend(const ParamValues& p) {
    options_.batch = p.get_int("batch");
    options_.dims = p.get_integer_table("dims");
    options_.dims_where = p.where("dims");
    options_.passthrough_unknown = p.get_string("unknown_ops") == "passthrough";
    options_.frozen = p.get_strings("frozen");
    options_.trainable = p.get_strings("trainable");
    options_.frozen_where = p.where("frozen");
    options_.trainable_where = p.where("trainable");
  }

  [[nodiscard]] GraphPtr load(const std::filesystem::path& file) const override {
    // Protobuf prints its failed checks ("[libprotobuf FATAL ...]") before throwing; the converter turns them into
    // one located error, so its own line is dropped.
    static std::once_flag quiet;
    std::call_once(quiet, [] { google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int, const std::string&) {}); });
    const std::string name = file.string();
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UserError(SourceLocation{name}, "cannot read the file");
    onnx::ModelProto model;
    if (!model.ParseFromIstream(&in)) {
      throw UserError(SourceLocation{name}, "not an ONNX model (the protobuf could not be parsed)");
    }
    if (model.graph().node_size() == 0) throw UserError(SourceLocation{name}, "the ONNX graph has no nodes");
    return onnx_frontend::convert(model, name, options_);
  }

 private:
  onnx_frontend::ConvertOptions options_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::OnnxFrontend)
