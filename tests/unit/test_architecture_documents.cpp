// Accelerator files as documents: changes by path (what --set architecture.*, [architecture.set] and hardware
// genes do), copies that do not see each other's changes, arrays of cores with generated links, link globs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/arch/architecture_documents.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using test::error_of;

const char* kPe = R"([core]
name = "pe"
op_kinds = ["gemm", "elementwise"]
[array]
dims = ["D1", "D2"]
sizes = [4, 4]
unit_energy_pj = 0.5
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
  bandwidth_bits = 32
  allocation = { I1 = ["tl"], I2 = ["tl"], O = ["fl"] }
)";

const char* kGrid = R"([accelerator]
name = "grid"
[[cores]]
name = "host"
file = "pe.toml"
[[core_arrays]]
name = "pe"
file = "pe.toml"
x = 2
y = 3
link_bandwidth_bits_per_cycle = 64
link_energy_pj_per_bit = 0.2
[offchip]
size_bits = 1_000_000
read_energy_pj_per_bit = 10
write_energy_pj_per_bit = 10
bandwidth_bits_per_cycle = 64
[[links]]
name = "bus"
kind = "bus"
endpoints = ["host", "pe_*", "dram"]
bandwidth_bits_per_cycle = 128
energy_pj_per_bit = 0.5
)";

toml::table value(std::string_view text) { return toml::parse("v = " + std::string(text)); }

TEST(ArchitectureDocuments, CoreArraysMakeMeshesAndGlobsNameTheirCores) {
  test::ScratchDir dir;
  dir.write("pe.toml", kPe);
  const AcceleratorPtr acc = ArchitectureDocuments::read(dir.write("acc.toml", kGrid)).build();
  ASSERT_EQ(acc->cores.size(), 7u);
  EXPECT_EQ(acc->cores[1].name, "pe_0_0");
  EXPECT_EQ(acc->cores[6].name, "pe_1_2");
  // A 2 x 3 mesh has 2·2 + 1·3 = 7 neighbour links, plus the bus over all cores and DRAM.
  ASSERT_EQ(acc->links.size(), 8u);
  EXPECT_EQ(acc->links[0].name, "pe_0_0-pe_1_0");
  EXPECT_DOUBLE_EQ(acc->links[0].energy_pj_per_bit, 0.2);
  EXPECT_EQ(acc->links.back().endpoints.size(), 8u);
  EXPECT_TRUE(acc->link_between(acc->core_index("pe_0_1"), acc->core_index("pe_0_2")));
  // Cores of one file share one Core.
  EXPECT_EQ(acc->cores[0].core, acc->cores[6].core);

  EXPECT_THAT(error_of([&] {
                (void)ArchitectureDocuments::read(dir.write("b.toml", std::string(kGrid).replace(
                                                                          std::string(kGrid).find("\"pe_*\""), 6, "\"px_*\"")))
                    .build();
              }),
              HasSubstr("b.toml:21:13: error: links[0].endpoints: the pattern 'px_*' matches no core; endpoints: host, pe_0_0,"));
}

TEST(ArchitectureDocuments, ChangesByPathAndIndependentCopies) {
  test::ScratchDir dir;
  dir.write("pe.toml", kPe);
  const ArchitectureDocuments base = ArchitectureDocuments::read(dir.write("acc.toml", kGrid));
  ArchitectureDocuments bigger = base;
  bigger.set("core_arrays.pe.x", *value("4").get("v"), {"test"});
  bigger.set("core_arrays.pe.array.sizes[0]", *value("8").get("v"), {"test"});
  bigger.set("links.bus.energy_pj_per_bit", *value("1.5").get("v"), {"test"});
  const AcceleratorPtr b = bigger.build();
  const AcceleratorPtr a = base.build();
  EXPECT_EQ(a->cores.size(), 7u);   // the original does not see the copy's changes
  EXPECT_EQ(b->cores.size(), 13u);  // 1 + 4 x 3
  EXPECT_EQ(a->cores[1].core->array.pe_count(), 16);
  EXPECT_EQ(b->cores[1].core->array.pe_count(), 32);
  // Only the array's core file changed: the host keeps its 4 x 4 array (its entry shared the file).
  EXPECT_EQ(b->cores[0].core->array.pe_count(), 16);
  EXPECT_DOUBLE_EQ(b->links.back().energy_pj_per_bit, 1.5);

  // Successive changes to the same file all stay (each one is replayed on the original text).
  ArchitectureDocuments twice = base;
  twice.set("core_arrays.pe.array.sizes[0]", *value("8").get("v"), {"test"});
  twice.set("core_arrays.pe.array.sizes[1]", *value("2").get("v"), {"test"});
  twice.set("core_arrays.pe.x", *value("1").get("v"), {"test"});
  twice.set("core_arrays.pe.y", *value("1").get("v"), {"test"});
  const AcceleratorPtr t = twice.build();
  EXPECT_EQ(t->cores.size(), 2u);
  EXPECT_EQ(t->cores[1].core->array.pe_count(), 16);  // 8 x 2
  EXPECT_EQ(t->cores[1].core->array.dims[1].size, 2);

  // Every entry of a table, and removing a key.
  ArchitectureDocuments all = base;
  all.set("cores.*.memories.sram.size_bits", *value("4096").get("v"), {"test"});
  all.unset("offchip.bandwidth_bits_per_cycle", {"test"});
  EXPECT_THAT(error_of([&] { (void)all.build(); }),
              HasSubstr("[offchip]: missing required key 'bandwidth_bits_per_cycle'"));

  // Bad paths name what is there.
  ArchitectureDocuments bad = base;
  EXPECT_EQ(error_of([&] { bad.set("core_arrays.px.x", *value("2").get("v"), {"here", 1, 2}); }),
            "here:1:2: error: no [[core_arrays]] entry named 'px' (did you mean 'pe'?); entries: pe");
  EXPECT_THAT(error_of([&] { bad.set("offchip.size.bits", *value("2").get("v"), {"here", 1, 2}); }),
              HasSubstr("'offchip.size' does not exist (did you mean 'size_bits'?)"));
  EXPECT_THAT(error_of([&] { bad.set("core_arrays.pe.array.sizes[5]", *value("2").get("v"), {"here", 1, 2}); }),
              HasSubstr("'array.sizes' has no element 5 (it has 2)"));
  // A value's own location survives into the built accelerator's messages.
  const toml::table located = toml::parse("size = -3", std::string_view{"exp.toml"});
  bad.set("offchip.size_bits", *located.get("size"), {"exp.toml"});
  EXPECT_THAT(error_of([&] { (void)bad.build(); }), HasSubstr("exp.toml:1:8: error:"));
}

}  // namespace
}  // namespace monet
