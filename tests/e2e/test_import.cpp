// `monet import`: ZigZag's reference accelerators, mappings and layer lists (tests/data/zigzag/inputs, copied
// from ZigZag 3.8.5) convert to the files committed under architectures/ and workloads/, and bad YAML gets a
// located error with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::q;
fs::path inputs() { return test::source_dir() / "tests/data/zigzag/inputs"; }

struct Accel {
  const char* name;
  const char* mapping;
};

TEST(Import, ReferenceAcceleratorsGiveTheCommittedCores) {
  test::ScratchDir dir;
  for (const Accel a : {Accel{"tpu_like", "tpu_like"}, Accel{"edge_tpu_like", "edge_tpu_like"},
                        Accel{"meta_prototype", "meta_prototype_like"}, Accel{"ascend_like", "ascend_like"},
                        Accel{"tesla_npu_like", "tesla_npu_like"}, Accel{"gemm_l1", "gemm_l1"}, Accel{"gemm_l1_l3", "gemm_l1_l3"}}) {
    const fs::path out = dir.path() / (std::string(a.name) + ".toml");
    const auto r = test::monet("import zigzag-core " + q(inputs() / "hardware" / (std::string(a.name) + ".yaml")) +
                               " --mapping " + q(inputs() / "mapping" / (std::string(a.mapping) + ".yaml")) + " -o " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(test::read_file(out), test::read_file(test::source_dir() / "architectures/cores" / (std::string(a.name) + ".toml")))
        << a.name;
  }
  for (const char* m : {"tpu_like_mixed", "edge_tpu_like_mixed", "meta_prototype_like_mixed", "ascend_like_mixed",
                        "tesla_npu_like_mixed"}) {
    const fs::path out = dir.path() / (std::string(m) + ".toml");
    ASSERT_EQ(test::monet("import zigzag-mapping " + q(inputs() / "mapping" / (std::string(m) + ".yaml")) + " -o " + q(out)).exit_code, 0);
    EXPECT_EQ(test::read_file(out), test::read_file(test::source_dir() / "architectures/cores/mappings" / (std::string(m) + ".toml")));
  }
}

TEST(Import, ReferenceLayerListsGiveTheCommittedWorkloads) {
  test::ScratchDir dir;
  for (const auto& [yaml, toml] : {std::pair{"resnet18.yaml", "resnet18_layers.toml"}, std::pair{"gemm_layer.yaml", "gemm_layer.toml"}}) {
    const fs::path out = dir.path() / toml;
    const auto r = test::monet("import zigzag-workload " + q(inputs() / "workload" / yaml) + " -o " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(test::read_file(out), test::read_file(test::source_dir() / "workloads/reference" / toml)) << yaml;
  }
}

TEST(Import, BadYamlIsALocatedErrorAndWritesNothing) {
  test::ScratchDir dir;
  std::string hw = test::read_file(inputs() / "hardware/gemm_l1.yaml");
  const auto out = dir.path() / "core.toml";
  auto run = [&](const std::string& text) {
    const auto f = dir.write("hw.yaml", text);
    return std::make_pair(test::monet("import zigzag-core " + q(f) + " -o " + q(out)), f);
  };
  std::string typo = hw;
  typo.replace(typo.find("r_cost"), 6, "r_cots");
  auto [r1, f1] = run(typo);
  EXPECT_EQ(r1.exit_code, 2);
  EXPECT_THAT(r1.out, HasSubstr(f1.string() + ":"));
  EXPECT_THAT(r1.out, HasSubstr("unknown key 'r_cots' in memory"));
  EXPECT_THAT(r1.out, HasSubstr("(did you mean 'r_cost'?)"));
  EXPECT_FALSE(fs::exists(out));
  auto [r2, f2] = run("name: x\noperational_array: {dimensions: [D1], sizes: [4], unit_energy: 1}\nmemories: [\n");
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_THAT(r2.out, HasSubstr("YAML syntax"));
  const auto r3 = test::monet("import zigzag-core " + q(dir.path() / "nope.yaml") + " -o " + q(out));
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_THAT(r3.out, HasSubstr("nope.yaml: error: file not found"));
  std::string cacti = hw;
  cacti.replace(cacti.find("r_cost"), 0, "auto_cost_extraction: true\n    ");
  auto [r4, f4] = run(cacti);
  EXPECT_EQ(r4.exit_code, 2);
  EXPECT_THAT(r4.out, HasSubstr("CACTI cost extraction is not available"));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace monet
