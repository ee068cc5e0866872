// The estimator plugin kind and the `horowitz` model: its numbers against the sources it cites (Horowitz ISSCC
// 2014 at 45 nm, Stillmaker & Baas's scaling tables) and against CACTI 7 runs at 45 nm (an independent model,
// docs/estimators.md); cores that leave energies to an estimator, pinned numbers, areas and resizing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "monet/arch/architecture_documents.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/config/params_toml.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;
using test::error_of;

std::shared_ptr<Estimator> horowitz(const std::string& accumulator = "wide") {
  const Registry& r = Registry::global();
  const PluginHandle& h = r.require(PluginKind::estimator, "horowitz", {});
  toml::table t;
  t.insert("accumulator", accumulator);
  TableReader reader(t, "test", "estimator_params", ".");
  return r.create<Estimator>(h, read_params(reader, h.info.params));
}

ArrayEstimate unit(const Estimator& e, ElementType p, const std::string& op, double nm = 45) {
  return e.array(ArrayEstimateQuery{1, p, op, nm});
}

MemoryEstimate memory(const Estimator& e, std::int64_t bits, std::int64_t word, int ports = 1, double nm = 45) {
  return e.memory(MemoryEstimateQuery{bits, word, word, ports, false, nm});
}

constexpr std::int64_t kKiB = 8 * 1024;  // bits

// Horowitz's table (45 nm, 0.9 V) and the areas Hennessy & Patterson publish with it: adders alone, and
// multipliers as a MAC with an operand-wide adder minus that adder.
TEST(Horowitz, ReproducesTheArithmeticTableAt45nm) {
  const auto e = horowitz("operand");
  struct Row {
    ElementType type;
    double add_pj, add_um2, mult_pj, mult_um2;
  };
  for (const Row& r : {Row{ElementType::int8, 0.03, 36, 0.2, 282}, Row{ElementType::int32, 0.1, 137, 3.1, 3495},
                       Row{ElementType::fp16, 0.4, 1360, 1.1, 1640}, Row{ElementType::fp32, 0.9, 4184, 3.7, 7700}}) {
    const ArrayEstimate add = unit(*e, r.type, "add");
    const ArrayEstimate mac = unit(*e, r.type, "mac");
    EXPECT_NEAR(add.unit_energy_pj, r.add_pj, 1e-12) << to_string(r.type);
    EXPECT_NEAR(add.area_mm2 * 1e6, r.add_um2, 1e-9) << to_string(r.type);
    EXPECT_NEAR(mac.unit_energy_pj - add.unit_energy_pj, r.mult_pj, 1e-12) << to_string(r.type);
    EXPECT_NEAR((mac.area_mm2 - add.area_mm2) * 1e6, r.mult_um2, 1e-9) << to_string(r.type);
  }
  EXPECT_NEAR(unit(*e, ElementType::int16, "add").unit_energy_pj, 0.05, 1e-12);
  EXPECT_NEAR(unit(*e, ElementType::int16, "add").area_mm2 * 1e6, 67, 1e-9);
  // 16-bit multiplier: the geometric mean of the 8- and 32-bit ones (the table has none).
  EXPECT_NEAR(unit(*e, ElementType::int16, "mac").unit_energy_pj - 0.05, std::sqrt(0.2 * 3.1), 1e-12);
  // bf16 is costed as fp16, uint8 as int8.
  EXPECT_DOUBLE_EQ(unit(*e, ElementType::bf16, "mac").unit_energy_pj, unit(*e, ElementType::fp16, "mac").unit_energy_pj);
  EXPECT_DOUBLE_EQ(unit(*e, ElementType::uint8, "mac").unit_energy_pj, unit(*e, ElementType::int8, "mac").unit_energy_pj);
}

TEST(Horowitz, MacsAccumulateWideByDefault) {
  const auto e = horowitz();
  EXPECT_NEAR(unit(*e, ElementType::int8, "mac").unit_energy_pj, 0.2 + 0.1, 1e-12);  // int8 x int8 + int32
  EXPECT_NEAR(unit(*e, ElementType::fp16, "mac").unit_energy_pj, 1.1 + 0.9, 1e-12);  // fp16 x fp16 + fp32
  EXPECT_NEAR(unit(*e, ElementType::fp32, "mac").unit_energy_pj, 3.7 + 0.9, 1e-12);
  // An array is PEs x units.
  EXPECT_NEAR(e->array(ArrayEstimateQuery{256, ElementType::int8, "mac", 45}).area_mm2, 256 * (282 + 137) * 1e-6, 1e-12);
  EXPECT_THAT(error_of([&] { (void)unit(*e, ElementType::fp64, "mac"); }),
              HasSubstr("no arithmetic numbers for fp64 operands; supported: "));
}

// SRAM per 64-bit access: 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ, and the rules between and beyond them.
TEST(Horowitz, ReproducesTheSramPointsAt45nm) {
  const auto e = horowitz();
  EXPECT_NEAR(memory(*e, 8 * kKiB, 64).read_energy_pj, 10, 1e-9);
  EXPECT_NEAR(memory(*e, 32 * kKiB, 64).read_energy_pj, 20, 1e-9);
  EXPECT_NEAR(memory(*e, 1024 * kKiB, 64).read_energy_pj, 100, 1e-9);
  EXPECT_EQ(memory(*e, 8 * kKiB, 64).implementation, "sram");
  // Writes cost what reads cost (the table gives one number per access).
  EXPECT_DOUBLE_EQ(memory(*e, 8 * kKiB, 64).write_energy_pj, 10);
  // Below 8 KB the first segment's slope (energy ~ sqrt(capacity)), above 1 MB the last segment's.
  EXPECT_NEAR(memory(*e, 2 * kKiB, 64).read_energy_pj, 5, 1e-9);
  EXPECT_NEAR(memory(*e, 4096 * kKiB, 64).read_energy_pj, 100 * std::pow(4.0, std::log(5.0) / std::log(32.0)), 1e-9);
  // Word width (w/64)^0.75 and ports^0.5, fitted to CACTI 7.
  EXPECT_NEAR(memory(*e, 1024 * kKiB, 2048).read_energy_pj, 100 * std::pow(32.0, 0.75), 1e-9);
  EXPECT_NEAR(memory(*e, 1024 * kKiB, 64, 2).read_energy_pj, 100 * std::sqrt(2.0), 1e-9);
}

// CACTI 7.0 at 45 nm (itrs-hp scratch RAM, one read-write port, ED^2-optimal; the runs in docs/estimators.md):
// Horowitz's 64-bit SRAM energies are 1.5x CACTI's at 1 MB; the width rule keeps the model within 1.33x-1.60x
// of CACTI from 32- to 2048-bit words at 1 and 2 MB; the area rule is within 10.1 % of CACTI from 256 B to 4 MB.
TEST(Horowitz, AgreesWithCactiAt45nmWithinStatedFactors) {
  const auto e = horowitz();
  const std::vector<std::int64_t> widths{32, 64, 128, 256, 512, 1024, 2048};
  const std::vector<std::pair<std::int64_t, std::vector<double>>> cacti_pj{
      {1024 * kKiB, {41.294, 67.688, 115.033, 179.969, 311.132, 499.271, 880.509}},
      {2048 * kKiB, {55.899, 90.021, 152.514, 274.238, 477.329, 831.673, 1297.360}}};
  for (const auto& [bits, pj] : cacti_pj) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const double ratio = memory(*e, bits, widths[i]).read_energy_pj / pj[i];
      EXPECT_GE(ratio, 1.32) << bits << " bits, " << widths[i] << "-bit words";
      EXPECT_LE(ratio, 1.61) << bits << " bits, " << widths[i] << "-bit words";
    }
  }
  const std::vector<std::pair<std::int64_t, double>> cacti_mm2{
      {256, 0.00141},   {512, 0.00215},   {1024, 0.00360},   {2048, 0.00755},   {4096, 0.01352},
      {8192, 0.02629},  {16384, 0.05075}, {32768, 0.09492},  {65536, 0.18366},  {131072, 0.38743},
      {262144, 0.79625}, {524288, 1.57613}, {1048576, 3.16952}, {2097152, 6.24279}, {4194304, 12.39946}};
  for (const auto& [bytes, mm2] : cacti_mm2) {
    EXPECT_NEAR(memory(*e, bytes * 8, 64).area_mm2 / mm2, 1.0, 0.102) << bytes << " B";
  }
  // Ports: area ratios of CACTI's 2- and 3-port SRAMs to its 1-port ones (8 KB, 32 KB, 1 MB); the model's
  // ports^1.08 is within 7.5 % of each.
  const std::vector<std::tuple<std::int64_t, double, double>> cacti_ports{
      {8192, 0.0534 / 0.0263, 0.0911 / 0.0263}, {32768, 0.1897 / 0.0949, 0.3160 / 0.0949},
      {1048576, 6.2333 / 3.1695, 10.6219 / 3.1695}};
  for (const auto& [bytes, two, three] : cacti_ports) {
    const double one = memory(*e, bytes * 8, 64, 1).area_mm2;
    EXPECT_NEAR(memory(*e, bytes * 8, 64, 2).area_mm2 / one / two, 1.0, 0.076) << bytes << " B";
    EXPECT_NEAR(memory(*e, bytes * 8, 64, 3).area_mm2 / one / three, 1.0, 0.076) << bytes << " B";
  }
}

TEST(Horowitz, TinyMemoriesAreFlipFlopsAndOffchipIsDram) {
  const auto e = horowitz();
  // A 16-bit register with four ports: flip-flops are smaller than an SRAM macro. Aladdin's 40 nm register bit
  // (0.009 pJ, 5.98 um2) at 45 nm: x energy(45 nm)/energy(40 nm) and / area factor(40 nm).
  const MemoryEstimate r = memory(*e, 16, 16, 4);
  EXPECT_EQ(r.implementation, "flip-flops");
  const double f45 = 1.018 * 0.81 - 0.3107 * 0.9 + 0.1539, f32 = 0.8367 * 0.81 - 0.4341 * 0.9 + 0.1701;
  const double f40 = f45 + (45.0 - 40) / (45 - 32) * (f32 - f45);
  EXPECT_NEAR(r.read_energy_pj, 16 * 0.009 * f45 / f40, 1e-12);
  EXPECT_NEAR(r.area_mm2 * 1e6, 16 * 5.98 / (1 + (45.0 - 40) / (45 - 32) * (0.46 - 1)), 1e-9);
  // Off-chip: 20 pJ per bit (Horowitz's 640 pJ per 32-bit DRAM read), no area, the same at every node.
  const MemoryEstimate d = e->memory(MemoryEstimateQuery{1 << 30, 64, 64, 1, true, 7});
  EXPECT_DOUBLE_EQ(d.read_energy_pj, 64 * 20.0);
  EXPECT_DOUBLE_EQ(d.area_mm2, 0);
}

// Stillmaker & Baas: area factors from 45 nm are their table's 45 nm row; energies follow their fitted
// polynomials at the same supply; between nodes, linear in nm.
TEST(Horowitz, ScalesWithTheStillmakerBaasTables) {
  const auto e = horowitz();
  const double area45 = unit(*e, ElementType::int8, "mac").area_mm2;
  const std::vector<std::pair<double, double>> area_row{{130, 6.4}, {90, 2.8}, {65, 1.5}, {32, 0.46}, {20, 0.21},
                                                        {16, 0.19}, {14, 0.17}, {10, 0.1},  {7, 0.059}};
  for (const auto& [nm, factor] : area_row) {
    EXPECT_NEAR(unit(*e, ElementType::int8, "mac", nm).area_mm2 / area45, factor, 1e-12) << nm;
  }
  EXPECT_NEAR(unit(*e, ElementType::int8, "mac", 28).area_mm2 / area45, 0.46 + (32.0 - 28) / 12 * (0.21 - 0.46), 1e-12);
  // 45 nm -> 7 nm at 0.9 V: (0.1776 V² - 0.09097 V + 0.02447) / (1.018 V² - 0.3107 V + 0.1539) = 0.1237.
  const double v = 0.9;
  const double f7 = 0.1776 * v * v - 0.09097 * v + 0.02447, f45 = 1.018 * v * v - 0.3107 * v + 0.1539;
  EXPECT_NEAR(unit(*e, ElementType::int8, "mac", 7).unit_energy_pj, 0.3 * f7 / f45, 1e-12);
  EXPECT_NEAR(f7 / f45, 0.1237, 5e-5);
  // The SRAM points move by the same factor as the arithmetic.
  EXPECT_NEAR(memory(*e, 8 * kKiB, 64, 1, 7).read_energy_pj, 10 * f7 / f45, 1e-9);
}

// ------------------------------------------------------------------------------------ cores and estimation

const char* kCore = R"([core]
name = "est"
estimator = "horowitz"
technology_nm = 45

[array]
dims = ["D1", "D2"]
sizes = [4, 2]
precision = "int8"

[[memories]]
name = "rf"
size_bits = 64
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
size_bits = 65536
operands = ["I1", "I2", "O"]
served_dims = ["D1", "D2"]
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["tl"], I2 = ["tl", "fh"], O = ["fl", "tl"] }
)";

using test::replace_first;

CorePtr estimated(const std::filesystem::path& file) { return apply_estimator(load_core(file), Registry::global()); }

TEST(Estimation, OmittedEnergiesComeFromTheEstimator) {
  test::ScratchDir dir;
  const CorePtr pending = load_core(dir.write("c.toml", kCore));
  EXPECT_TRUE(pending->estimates_pending());
  const CorePtr core = apply_estimator(pending, Registry::global());
  EXPECT_FALSE(core->estimates_pending());
  EXPECT_NEAR(core->array.unit_energy_pj, 0.3, 1e-12);
  EXPECT_EQ(core->array.unit_energy_origin, ValueOrigin::estimated);
  const MemoryLevel& sram = core->memories[1];
  EXPECT_EQ(sram.implementation, "sram");
  EXPECT_NEAR(sram.read_energy_pj, 10, 1e-9);  // 8 KB, one 64-bit port: Horowitz's point
  EXPECT_NEAR(sram.write_energy_pj, 10, 1e-9);
  EXPECT_EQ(sram.read_energy_origin, ValueOrigin::estimated);
  EXPECT_EQ(core->estimator->version, "1.0.0");
  // Nothing is pending any more: applying again is a no-op.
  EXPECT_EQ(apply_estimator(core, Registry::global()), core);
}

TEST(Estimation, PinnedNumbersWin) {
  test::ScratchDir dir;
  const auto file = dir.write("c.toml", replace_first(replace_first(kCore, "size_bits = 65536\n", "size_bits = 65536\nread_energy_pj = 3.2\narea_mm2 = 0.5\n"),
                                                "precision = \"int8\"\n", "precision = \"int8\"\nunit_energy_pj = 0.04\n"));
  const CorePtr core = estimated(file);
  EXPECT_DOUBLE_EQ(core->array.unit_energy_pj, 0.04);
  EXPECT_EQ(core->array.unit_energy_origin, ValueOrigin::pinned);
  EXPECT_EQ(core->array.area_origin, ValueOrigin::estimated);
  const MemoryLevel& sram = core->memories[1];
  EXPECT_DOUBLE_EQ(sram.read_energy_pj, 3.2);
  EXPECT_EQ(sram.read_energy_origin, ValueOrigin::pinned);
  EXPECT_NEAR(sram.write_energy_pj, 10, 1e-9);
  EXPECT_EQ(sram.write_energy_origin, ValueOrigin::estimated);
  EXPECT_DOUBLE_EQ(*sram.area_mm2, 0.5);
  EXPECT_EQ(sram.area_origin, ValueOrigin::pinned);
}

// Array: 8 int8 MACs x (282 + 137) um2. rf: 64 bits with two ports is smaller in flip-flops (64 x 7.5476 um2)
// than in SRAM ((0.375 x 64 + 646) x 2^1.08 um2), one per PE (8). sram: 65,536 bits x 0.375 + 646 um2.
TEST(Estimation, CoreAreaIsTheArrayPlusEveryMemoryInstance) {
  test::ScratchDir dir;
  const CorePtr core = estimated(dir.write("c.toml", kCore));
  EXPECT_EQ(core->memories[0].implementation, "flip-flops");
  const double array_um2 = 8 * (282.0 + 137.0);
  const double rf_um2 = 8 * 64 * 5.98 / (1 + (45.0 - 40) / 13 * (0.46 - 1));
  const double sram_um2 = 0.375 * 65536 + 646;
  ASSERT_TRUE(core->area_mm2());
  EXPECT_NEAR(*core->area_mm2(), (array_um2 + rf_um2 + sram_um2) * 1e-6, 1e-12);
  EXPECT_NEAR(*core->area_mm2(), 0.03244, 5e-6);
  // A core without an estimator and without pinned areas has no area.
  const CorePtr plain = load_core(test::source_dir() / "architectures/cores/systolic_8x8.toml");
  EXPECT_FALSE(plain->area_mm2());
}

// The search's flow: a gene changes a memory's size in the documents, build() + apply_estimators() re-derive
// its energy and area. Below 32 KB the SRAM energy grows as sqrt(capacity).
TEST(Estimation, ResizingAMemoryChangesItsEnergyAndAreaConsistently) {
  test::ScratchDir dir;
  dir.write("c.toml", kCore);
  const auto acc_file = dir.write("a.toml", R"([accelerator]
name = "one"
[[cores]]
name = "c0"
file = "c.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 20
write_energy_pj_per_bit = 20
bandwidth_bits_per_cycle = 64
[[links]]
endpoints = ["c0", "dram"]
bandwidth_bits_per_cycle = 64
)");
  ArchitectureDocuments docs = ArchitectureDocuments::read(acc_file);
  const AcceleratorPtr before = apply_estimators(docs.build(), Registry::global());
  toml::value<std::int64_t> doubled(2 * 65536);
  docs.set("cores.c0.memories.sram.size_bits", doubled, SourceLocation{"gene"});
  const AcceleratorPtr after = apply_estimators(docs.build(), Registry::global());
  const MemoryLevel& m0 = before->cores[0].core->memories[1];
  const MemoryLevel& m1 = after->cores[0].core->memories[1];
  EXPECT_NEAR(m1.read_energy_pj / m0.read_energy_pj, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(m1.write_energy_pj / m0.write_energy_pj, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(*m1.area_mm2 / *m0.area_mm2, (0.375 * 131072 + 646) / (0.375 * 65536 + 646), 1e-12);
  const auto a0 = accelerator_area(*before);
  const auto a1 = accelerator_area(*after);
  ASSERT_TRUE(a0 && a1);
  EXPECT_NEAR(a1->total_mm2 - a0->total_mm2, *m1.area_mm2 - *m0.area_mm2, 1e-12);
  // The array is unchanged; doubling it doubles the array's area and keeps its energy per MAC.
  EXPECT_DOUBLE_EQ(after->cores[0].core->array.unit_energy_pj, before->cores[0].core->array.unit_energy_pj);
  require_estimates(*after);
  EXPECT_THROW(require_estimates(*docs.build()), InternalError);
}

// An off-chip level (ZigZag's DRAM) is the accelerator's off-chip memory: inside an accelerator it takes
// [offchip]'s numbers; costed alone (monet cost --core) the estimator's.
TEST(Estimation, OffchipLevelsTakeTheAcceleratorsNumbers) {
  test::ScratchDir dir;
  const std::string sram_below_dram = replace_first(kCore, R"(I1 = ["tl"], I2 = ["tl", "fh"], O = ["fl", "tl"])",
                                                    R"(I1 = ["tl", "fh"], I2 = ["tl", "fh"], O = ["fl", "tl", "th"])");
  const auto core_file = dir.write("c.toml", sram_below_dram + R"(
[[memories]]
name = "dram"
size_bits = 1_000_000_000
operands = ["I1", "I2", "O"]
served_dims = ["D1", "D2"]
offchip = true
  [[memories.ports]]
  name = "rw"
  type = "read_write"
  bandwidth_bits = 64
  allocation = { I1 = ["fh", "tl"], I2 = ["fh", "tl"], O = ["fh", "tl", "fl", "th"] }
)");
  const auto acc_file = dir.write("a.toml", R"([accelerator]
name = "one"
[[cores]]
name = "c0"
file = "c.toml"
[offchip]
size_bits = 1_000_000_000
read_energy_pj_per_bit = 15
write_energy_pj_per_bit = 17
bandwidth_bits_per_cycle = 64
[[links]]
endpoints = ["c0", "dram"]
bandwidth_bits_per_cycle = 64
)");
  const AcceleratorPtr acc = apply_estimators(load_accelerator(acc_file), Registry::global());
  const MemoryLevel& in_acc = acc->cores[0].core->memories[2];
  EXPECT_DOUBLE_EQ(in_acc.read_energy_pj, 15.0 * 64);
  EXPECT_DOUBLE_EQ(in_acc.write_energy_pj, 17.0 * 64);
  EXPECT_EQ(in_acc.read_energy_origin, ValueOrigin::pinned);
  const CorePtr alone_core = estimated(core_file);  // keep it alive: the reference below points into it
  const MemoryLevel& alone = alone_core->memories[2];
  EXPECT_DOUBLE_EQ(alone.read_energy_pj, 20.0 * 64);
  EXPECT_EQ(alone.read_energy_origin, ValueOrigin::estimated);
}

TEST(Estimation, MistakesAreLocatedInTheCoreFile) {
  test::ScratchDir dir;
  const auto where = [&](const std::string& name) { return (dir.path() / name).string(); };
  // An unknown estimator, at its key.
  EXPECT_THAT(error_of([&] { estimated(dir.write("a.toml", replace_first(kCore, "\"horowitz\"", "\"horowitz45\""))); }),
              HasSubstr(where("a.toml") + ":3:13: error: no estimator plugin named 'horowitz45'"));
  // A node the model does not cover, at technology_nm.
  EXPECT_EQ(error_of([&] { estimated(dir.write("b.toml", replace_first(kCore, "technology_nm = 45", "technology_nm = 3"))); }),
            where("b.toml") + ":4:17: error: core.technology_nm: 3.0 nm is outside the nodes estimator 'horowitz' covers (7.0 to 130.0 nm)");
  // A precision it has no numbers for, at the precision key.
  EXPECT_THAT(error_of([&] { estimated(dir.write("c.toml", replace_first(kCore, "\"int8\"", "\"fp64\""))); }),
              HasSubstr(where("c.toml") + ":9:13: error: estimator 'horowitz': no arithmetic numbers for fp64"));
  // Energies left out without an estimator.
  const std::string plain = replace_first(replace_first(kCore, "estimator = \"horowitz\"\n", ""), "technology_nm = 45\n", "");
  EXPECT_THAT(error_of([&] { load_core(dir.write("d.toml", plain)); }),
              HasSubstr("missing required key 'unit_energy_pj' (a number, or name an estimator in [core] to have it estimated)"));
  // A node without an estimator, an estimator without a node, parameters without an estimator.
  EXPECT_THAT(error_of([&] { load_core(dir.write("e.toml", replace_first(kCore, "estimator = \"horowitz\"\n", ""))); }),
              HasSubstr("e.toml:3:17: error: core.technology_nm: a technology node is for an estimator"));
  EXPECT_THAT(error_of([&] { load_core(dir.write("f.toml", replace_first(kCore, "technology_nm = 45\n", ""))); }),
              HasSubstr("missing required key 'technology_nm'"));
  // The estimator's parameters are checked where they are written.
  EXPECT_THAT(error_of([&] { estimated(dir.write("g.toml", std::string(kCore) + "[estimator_params]\nvdd = 2.0\n")); }),
              HasSubstr(where("g.toml") + ":37:7: error: estimator_params.vdd: expected a value in [0.5, 1.2], got 2"));
  // The estimator needs the array's precision.
  EXPECT_THAT(error_of([&] { load_core(dir.write("h.toml", replace_first(kCore, "precision = \"int8\"\n", ""))); }),
              HasSubstr("missing required key 'precision'"));
}

}  // namespace
}  // namespace monet
