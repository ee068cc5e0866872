// The ZigZag and Stream YAML importers (`monet import`), every one on each input: a ZigZag core, mapping and layer
// list, a Stream accelerator (its core files resolve to tests/data/stream/hardware/cores) and mapping. Seeds:
// tests/data/zigzag/inputs/, tests/data/stream/hardware/, tests/data/stream/mapping/.
#include "fuzz_support.hpp"
#include "import_stream.hpp"
#include "import_zigzag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace monet;
  const fuzz::fs::path dir = fuzz::scratch({{"cores", "tests/data/stream/hardware/cores"}});
  const fuzz::fs::path file = fuzz::write(dir / "fuzz.yaml", data, size);
  fuzz::expect_user_error_only("zigzag-core", [&] { (void)cli::zigzag_core_to_toml(file, std::nullopt, "loopnest"); });
  fuzz::expect_user_error_only("zigzag-mapping", [&] { (void)cli::zigzag_mapping_to_toml(file); });
  fuzz::expect_user_error_only("zigzag-workload", [&] { (void)cli::zigzag_workload_to_toml(file); });
  fuzz::expect_user_error_only("stream-accelerator", [&] {
    (void)cli::stream_accelerator_to_toml(file, dir / "out" / "acc.toml", dir / "out" / "cores", "loopnest");
  });
  fuzz::expect_user_error_only("stream-mapping", [&] { (void)cli::stream_mapping_to_toml(file, "fused_stacks"); });
  return 0;
}
