// The ONNX frontend: a model file (protobuf) to a forward graph, with shape inference and constant folding. Seeds:
// workloads/onnx/ (the small exports) and tests/data/pytorch_ops/ (one operator each).
#include "fuzz_support.hpp"
#include "monet/plugin/frontend.hpp"
#include "monet/plugin/registry.hpp"

// The plugins are loaded before fuzzing starts: libFuzzer registers their coverage counters only then.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)monet::Registry::global();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace monet;
  const fuzz::fs::path file = fuzz::write(fuzz::scratch({}) / "fuzz.onnx", data, size);
  const Registry& registry = Registry::global();
  fuzz::expect_user_error_only("onnx", [&] {
    const PluginHandle& h = registry.require(PluginKind::frontend, "onnx", SourceLocation{file.string()});
    (void)registry.create<WorkloadFrontend>(h, default_params(h.info.params, file.string()))->load(file);
  });
  return 0;
}
