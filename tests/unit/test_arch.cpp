// Accelerator and core files: what is read, and how mistakes are reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/arch/accelerator.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

const char* kCore = R"(# test core
[core]
name = "mini"
cost_model = "roofline"
op_kinds = ["conv", "gemm"]

[array]
dims = ["D1", "D2"]
sizes = [4, 2]
unit_energy_pj = 0.5

[[memories]]
name = "rf"
size_bits = 64
read_energy_pj = 0.1
write_energy_pj = 0.1
operands = ["I2"]
  [[memories.ports]]
  name = "r"
  type = "read"
  bandwidth_bits = 8
  allocation = { I2 = ["tl"] }
  [[memories.ports]]
  name = "w"
  type = "write"
  bandwidth_bits = 8
  allocation = { I2 = ["fh"] }

[[memories]]
name = "sram"
size_bits = 8192
read_energy_pj = 3.2
write_energy_pj = 6.4
operands = ["I1", "I2", "O"]
served_dims = ["D1", "D2"]
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_min_bits = 8
  bandwidth_max_bits = 32
  allocation = { I1 = ["tl"], I2 = ["tl"], O = ["fl", "tl"] }
)";

using test::error_of;

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

TEST(Core, ReadsArrayMemoriesAndPorts) {
  test::ScratchDir dir;
  const CorePtr core = load_core(dir.write("mini.toml", kCore));
  EXPECT_EQ(core->name, "mini");
  EXPECT_EQ(core->array.pe_count(), 8);
  ASSERT_EQ(core->memories.size(), 2u);
  EXPECT_EQ(core->levels_of(OperandSlot::I2), (std::vector<int>{0, 1}));
  EXPECT_EQ(core->top_level(OperandSlot::I2).name, "sram");
  const MemoryLevel& sram = core->memories[1];
  EXPECT_EQ(sram.ports[0].bandwidth_min_bits, 8);
  EXPECT_EQ(sram.read_word_bits(), 32);
  EXPECT_DOUBLE_EQ(sram.read_energy_per_bit(), 0.1);   // 3.2 pJ per 32-bit word
  EXPECT_DOUBLE_EQ(sram.write_energy_per_bit(), 0.2);  // 6.4 pJ per 32-bit word
  EXPECT_TRUE(core->runs(OpKind::gemm));
  EXPECT_FALSE(core->runs(OpKind::elementwise));
  EXPECT_EQ(core->resident_capacity_bits(), 8192);
}

TEST(Core, MistakesAreReportedWithTheirLocation) {
  test::ScratchDir dir;
  // A memory that holds an operand but has no port moving it to the array.
  EXPECT_EQ(error_of([&] { load_core(dir.write("a.toml", replace(kCore, "I2 = [\"tl\"] }", "I2 = [] }"))); }),
            (dir.path() / "a.toml").string() +
                ":12:1: error: memory 'rf' holds I2 but no port is allocated to (I2, tl); add it to a port's allocation");
  // An unknown memory operand.
  EXPECT_EQ(error_of([&] { load_core(dir.write("b.toml", replace(kCore, "operands = [\"I2\"]", "operands = [\"W\"]"))); }),
            (dir.path() / "b.toml").string() +
                ":17:12: error: memories[0].operands: 'W' is not a memory operand; expected one of 'I1', 'I2', 'O'");
  // A direction a read port cannot serve.
  EXPECT_THAT(error_of([&] { load_core(dir.write("c.toml", replace(kCore, "I2 = [\"tl\"] }", "I2 = [\"fh\"] }"))); }),
              HasSubstr("c.toml:22:23: error: memories[0].ports[0].allocation.I2: direction 'fh' writes but port 'r' "
                        "is a read port"));
  // A typo in an op kind.
  EXPECT_THAT(error_of([&] { load_core(dir.write("d.toml", replace(kCore, "\"gemm\"]", "\"gem\"]"))); }),
              HasSubstr("d.toml:5:12: error: core.op_kinds: 'gem' is not an operator kind"));
  // served_dims naming a dimension the array does not have.
  EXPECT_THAT(error_of([&] { load_core(dir.write("e.toml", replace(kCore, "[\"D1\", \"D2\"]\n  [[", "[\"D3\"]\n  [["))); }),
              HasSubstr("e.toml:35:15: error: memories[1].served_dims: 'D3' is not a dimension of the operational array"));
  // Sizes that do not match dims.
  EXPECT_EQ(error_of([&] { load_core(dir.write("f.toml", replace(kCore, "sizes = [4, 2]", "sizes = [4]"))); }),
            (dir.path() / "f.toml").string() + ":9:9: error: array.sizes: expected 2 sizes (one per dimension in 'dims'), got 1");
  // An unknown key with a suggestion.
  EXPECT_THAT(error_of([&] { load_core(dir.write("g.toml", replace(kCore, "size_bits = 64", "size_bit = 64"))); }),
              HasSubstr("g.toml:14:1: error: unknown key 'memories[0].size_bit' (did you mean 'size_bits'?); 'size_bits' (an integer) is required here"));
}

const char* kAccelerator = R"([accelerator]
name = "duo"
frequency_hz = 1e9

[[cores]]
name = "a"
file = "mini.toml"

[[cores]]
name = "b"
file = "mini.toml"

[offchip]
size_bits = 1_000_000
read_energy_pj_per_bit = 10
write_energy_pj_per_bit = 12
bandwidth_bits_per_cycle = 64

[[links]]
endpoints = ["a", "b"]
bandwidth_bits_per_cycle = 32

[[links]]
name = "bus"
kind = "bus"
endpoints = ["a", "b", "dram"]
bandwidth_bits_per_cycle = 16
energy_pj_per_bit = 1
)";

TEST(Accelerator, ReadsCoresOffchipAndLinks) {
  test::ScratchDir dir;
  dir.write("mini.toml", kCore);
  const AcceleratorPtr acc = load_accelerator(dir.write("duo.toml", kAccelerator));
  EXPECT_EQ(acc->name, "duo");
  ASSERT_EQ(acc->cores.size(), 2u);
  EXPECT_EQ(acc->cores[0].core, acc->cores[1].core);  // one core file, read once
  EXPECT_EQ(acc->offchip.name, "dram");
  EXPECT_DOUBLE_EQ(acc->offchip.write_energy_pj_per_bit, 12);
  ASSERT_EQ(acc->links.size(), 2u);
  EXPECT_EQ(acc->links[0].name, "link0");
  // a <-> b: the point-to-point link is wider than the bus.
  EXPECT_EQ(acc->link_between(0, 1)->name, "link0");
  EXPECT_EQ(acc->link_between(1, Accelerator::kOffChip)->name, "bus");
  EXPECT_EQ(acc->core_index("b"), 1);
  EXPECT_EQ(acc->endpoint_name(Accelerator::kOffChip), "dram");
}

TEST(Accelerator, MistakesAreReportedWithTheirLocation) {
  test::ScratchDir dir;
  dir.write("mini.toml", kCore);
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x1.toml", replace(kAccelerator, "[\"a\", \"b\", \"dram\"]", "[\"a\", \"bb\", \"dram\"]"))); }),
            (dir.path() / "x1.toml").string() +
                ":26:13: error: links[1].endpoints: 'bb' is neither a core nor the off-chip memory (did you mean 'b'?)");
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x2.toml", replace(kAccelerator, "[\"a\", \"b\", \"dram\"]", "[\"a\", \"dram\"]"))); }),
            (dir.path() / "x2.toml").string() +
                ":9:1: error: core 'b' has no link to the off-chip memory 'dram': add a [[links]] entry whose endpoints "
                "include both");
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x3.toml", replace(kAccelerator, "file = \"mini.toml\"\n\n[[cores]]\nname = \"b\"", "file = \"mini.toml\"\n\n[[cores]]\nname = \"a\""))); }),
            (dir.path() / "x3.toml").string() + ":10:8: error: cores[1].name: core 'a' is defined twice");
  EXPECT_THAT(error_of([&] { load_accelerator(dir.write("x4.toml", replace(kAccelerator, "file = \"mini.toml\"\n\n[[cores]]\nname = \"b\"", "file = \"missing.toml\"\n\n[[cores]]\nname = \"b\""))); }),
              HasSubstr("x4.toml:7:8: error: cores[0].file: file not found: "));
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x5.toml", replace(kAccelerator, "endpoints = [\"a\", \"b\"]\n", "endpoints = [\"a\", \"b\", \"dram\"]\n"))); }),
            (dir.path() / "x5.toml").string() +
                ":20:13: error: links[0].endpoints: a point_to_point link joins exactly 2 endpoints, got 3");
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x6.toml", replace(kAccelerator, "bandwidth_bits_per_cycle = 64", "bandwidth_bits_per_cycle = 0"))); }),
            (dir.path() / "x6.toml").string() + ":17:28: error: offchip.bandwidth_bits_per_cycle: expected a value > 0, got 0");
  // An error inside a referenced core file names that file.
  dir.write("broken.toml", replace(kCore, "unit_energy_pj = 0.5", "unit_energy_pj = -1"));
  EXPECT_EQ(error_of([&] { load_accelerator(dir.write("x7.toml", replace(kAccelerator, "file = \"mini.toml\"\n\n[[cores]]\nname = \"b\"", "file = \"broken.toml\"\n\n[[cores]]\nname = \"b\""))); }),
            (dir.path() / "broken.toml").string() + ":10:18: error: array.unit_energy_pj: expected a value >= 0, got -1");
}

TEST(Accelerator, ProjectArchitecturesLoad) {
  const AcceleratorPtr acc = load_accelerator(test::source_dir() / "architectures/dual_core.toml");
  EXPECT_EQ(acc->cores.size(), 2u);
  EXPECT_EQ(acc->cores[0].core->array.pe_count(), 64);
  EXPECT_EQ(acc->cores[1].core->array.pe_count(), 16);
  EXPECT_DOUBLE_EQ(acc->frequency_hz, 500e6);
}

}  // namespace
}  // namespace monet
