// The `horowitz` estimator: energy per operation and per access, and area, of a core's arithmetic and memories
// from M. Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC 2014 (45 nm, 0.9 V), with
// the SRAM area, word-width and port rules fitted to CACTI 7 at 45 nm, flip-flop registers from Aladdin, and
// technology scaling from Stillmaker & Baas 2017. Every number and its source: docs/estimators.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "monet/plugin/entry.hpp"
#include "monet/plugin/estimator.hpp"
#include "monet/util/strings.hpp"
#include "technology_scaling.hpp"

namespace monet::plugins::horowitz {
namespace {

/// An arithmetic unit at 45 nm, 0.9 V: energy per operation and area.
struct Unit {
  double energy_pj = 0;
  double area_um2 = 0;
};
Unit operator+(Unit a, Unit b) { return {a.energy_pj + b.energy_pj, a.area_um2 + b.area_um2}; }

// Horowitz ISSCC 2014 energies, with the areas published beside them (Hennessy & Patterson, 6th ed., Fig. 1.13:
// Design Compiler, TSMC 45 nm, DesignWare floating point).
constexpr Unit kIntAdd8{0.03, 36}, kIntAdd16{0.05, 67}, kIntAdd32{0.1, 137};
constexpr Unit kIntMult8{0.2, 282}, kIntMult32{3.1, 3495};
constexpr Unit kFpAdd16{0.4, 1360}, kFpAdd32{0.9, 4184};
constexpr Unit kFpMult16{1.1, 1640}, kFpMult32{3.7, 7700};

/// A 16-bit integer multiplier: log-log interpolation between the 8- and 32-bit ones (the table has none).
Unit int_mult16() {
  auto mid = [](double a8, double a32) { return a8 * std::sqrt(a32 / a8); };  // 16 is the geometric middle
  return {mid(kIntMult8.energy_pj, kIntMult32.energy_pj), mid(kIntMult8.area_um2, kIntMult32.area_um2)};
}

// SRAM per 64-bit access (Horowitz): 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ; KB = 1024 bytes.
constexpr double kSramBytes0 = 8192, kSramPj0 = 10;
constexpr double kSramBytes1 = 32768, kSramPj1 = 20;
constexpr double kSramBytes2 = 1048576, kSramPj2 = 100;
// Fitted here to CACTI 7.0 at 45 nm (itrs-hp, scratch RAM; docs/estimators.md has the runs): energy grows as
// (word/64)^0.75, as ports^0.5, area = (0.375 um² per bit + 646 um²) x ports^1.08.
constexpr double kWidthExponent = 0.75;
constexpr double kPortEnergyExponent = 0.5;
constexpr double kSramUm2PerBit = 0.375;
constexpr double kSramFixedUm2 = 646;
constexpr double kPortAreaExponent = 1.08;
// A flip-flop register bit at 40 nm (Aladdin, Shao et al. ISCA 2014, as packaged in Accelergy's
// hwcomponents-library): 0.009 pJ per bit read or written, 5.98 um².
constexpr double kRegisterNm = 40, kRegisterPjPerBit = 0.009, kRegisterUm2PerBit = 5.98;

/// Energy of one 64-bit access of an SRAM of `bytes` at 45 nm: through Horowitz's three points on a log-log
/// scale, the first segment's slope (exactly 1/2) below 8 KB and the last segment's above 1 MB.
double sram_pj_per_64_bits(double bytes) {
  if (bytes <= kSramBytes1) return kSramPj0 * std::pow(bytes / kSramBytes0, std::log(kSramPj1 / kSramPj0) / std::log(kSramBytes1 / kSramBytes0));
  return kSramPj1 * std::pow(bytes / kSramBytes1, std::log(kSramPj2 / kSramPj1) / std::log(kSramBytes2 / kSramBytes1));
}

class Horowitz final : public Estimator {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::estimator;
    i.name = "horowitz";
    i.version = "1.0.0";
    i.summary = "energy and area of MACs, SRAMs, flip-flop registers and DRAM accesses from Horowitz's ISSCC 2014 "
                "45 nm numbers, scaled to 7-130 nm with Stillmaker & Baas 2017";
    i.description =
        "Arithmetic at 45 nm, 0.9 V (Horowitz, ISSCC 2014; areas from Hennessy & Patterson 6th ed. Fig. 1.13): "
        "integer add 8/16/32 bit 0.03/0.05/0.1 pJ, 36/67/137 um2; integer multiply 8/32 bit 0.2/3.1 pJ, "
        "282/3495 um2 (16 bit: their geometric mean, 0.79 pJ, 993 um2); FP add 16/32 bit 0.4/0.9 pJ, 1360/4184 "
        "um2; FP multiply 16/32 bit 1.1/3.7 pJ, 1640/7700 um2; bf16 uses the FP16 numbers, uint8 the int8 ones. "
        "A MAC = a multiplier of the array's precision + an adder of the accumulator's (parameter accumulator); "
        "operation \"add\" = one adder. Array area = PEs x unit area. "
        "SRAM per 64-bit access: 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ (Horowitz), log-log between the points, "
        "slope 1/2 below 8 KB and 0.464 above 1 MB; x (word bits / 64)^0.75, x ports^0.5; write = read. SRAM area "
        "(0.375 um2 per bit + 646 um2) x ports^1.08. The width, port and area rules are fitted to CACTI 7.0 at 45 "
        "nm (within 10 % for 256 B to 4 MB). Memories smaller in flip-flops than in SRAM (under ~90 bits with "
        "one port) are flip-flop registers: 0.0104 pJ per bit accessed and 7.55 um2 per bit at 45 nm (Aladdin's "
        "40 nm register, 0.009 pJ and 5.98 um2, scaled). Off-chip memory levels (offchip = true) cost "
        "dram_pj_per_bit per bit accessed, not scaled with the node, and no area. "
        "Technology: energies x Stillmaker & Baas's fitted energy of (node, vdd) / energy of (45 nm, 0.9 V), "
        "areas x their area factor from 45 nm; linear in nm between their nodes 130, 90, 65, 45, 32, 20, 16, "
        "14, 10, 7 nm. Leakage is not modelled.";
    i.params = {
        ParamSpec::number("vdd", kSourceVdd)
            .with_bounds(Bounds{0.5, 1.2, false, false})
            .with_unit("V")
            .with_doc("supply voltage at the core's technology node (Horowitz's numbers are at 0.9 V)"),
        ParamSpec::choice("accumulator", {"wide", "operand"}, std::string("wide"))
            .with_doc("adder of a MAC: wide = 32-bit integer for integer operands, FP32 for floating point "
                      "(int8 and mixed-precision practice); operand = the operands' own precision"),
        ParamSpec::number("dram_pj_per_bit", 20.0)
            .with_bounds(Bounds::positive())
            .with_unit("pJ/bit")
            .with_doc("energy per bit read or written in off-chip memory levels: Horowitz's 32-bit DRAM read, "
                      "640 pJ; not scaled with the node (DRAM is a separate process)"),
    };
    return i;
  }

  explicit Horowitz(const ParamValues& p)
      : vdd_(p.get_number("vdd")),
        wide_accumulator_(p.get_string("accumulator") == "wide"),
        dram_pj_per_bit_(p.get_number("dram_pj_per_bit")) {}

  [[nodiscard]] std::pair<double, double> technology_range_nm() const override { return {kMinNm, kMaxNm}; }

  [[nodiscard]] ArrayEstimate array(const ArrayEstimateQuery& q) const override {
    const Unit add = adder(q.precision);
    Unit unit = add;
    std::string what = to_string(q.precision) + " adder";
    if (q.operation == "mac") {
      const ElementType acc = wide_accumulator_ ? wide(q.precision) : q.precision;
      unit = multiplier(q.precision) + adder(acc);
      what = to_string(q.precision) + " MAC (" + to_string(q.precision) + " multiplier, " + to_string(acc) + " adder)";
    }
    ArrayEstimate e;
    e.unit_energy_pj = unit.energy_pj * energy_factor(q.technology_nm, vdd_);
    e.area_mm2 = unit.area_um2 * 1e-6 * static_cast<double>(q.pe_count) * area_factor(q.technology_nm);
    e.implementation = what;
    return e;
  }

  [[nodiscard]] MemoryEstimate memory(const MemoryEstimateQuery& q) const override {
    MemoryEstimate e;
    if (q.offchip) {
      e.read_energy_pj = dram_pj_per_bit_ * static_cast<double>(q.read_word_bits);
      e.write_energy_pj = dram_pj_per_bit_ * static_cast<double>(q.write_word_bits);
      e.implementation = "dram";
      return e;
    }
    const auto bits = static_cast<double>(q.size_bits);
    const double ports = std::max(1, q.ports);
    const double sram_um2 = (kSramUm2PerBit * bits + kSramFixedUm2) * std::pow(ports, kPortAreaExponent);
    const double register_um2 = kRegisterUm2PerBit / area_factor(kRegisterNm) * bits;
    const double scale = energy_factor(q.technology_nm, vdd_);
    if (register_um2 < sram_um2) {
      const double pj_per_bit = kRegisterPjPerBit / energy_factor(kRegisterNm, kSourceVdd);
      e.read_energy_pj = pj_per_bit * static_cast<double>(q.read_word_bits) * scale;
      e.write_energy_pj = pj_per_bit * static_cast<double>(q.write_word_bits) * scale;
      e.area_mm2 = register_um2 * 1e-6 * area_factor(q.technology_nm);
      e.implementation = "flip-flops";
      return e;
    }
    const double per_64 = sram_pj_per_64_bits(bits / 8) * std::pow(ports, kPortEnergyExponent) * scale;
    auto access = [&](std::int64_t word) { return per_64 * std::pow(static_cast<double>(word) / 64, kWidthExponent); };
    e.read_energy_pj = access(q.read_word_bits);
    e.write_energy_pj = access(q.write_word_bits);
    e.area_mm2 = sram_um2 * 1e-6 * area_factor(q.technology_nm);
    e.implementation = "sram";
    return e;
  }

 private:
  static const std::map<ElementType, ElementType>& supported() {
    // precision -> the table entry it uses
    static const std::map<ElementType, ElementType> m{
        {ElementType::int8, ElementType::int8},   {ElementType::uint8, ElementType::int8},
        {ElementType::int16, ElementType::int16}, {ElementType::int32, ElementType::int32},
        {ElementType::fp16, ElementType::fp16},   {ElementType::bf16, ElementType::fp16},
        {ElementType::fp32, ElementType::fp32}};
    return m;
  }

  static ElementType table_entry(ElementType t) {
    auto it = supported().find(t);
    if (it == supported().end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : supported()) names.push_back(to_string(k));
      throw UserError("no arithmetic numbers for " + to_string(t) + " operands; supported: " + join(names));
    }
    return it->second;
  }

  static ElementType wide(ElementType t) {
    const ElementType e = table_entry(t);
    return e == ElementType::fp16 || e == ElementType::fp32 ? ElementType::fp32 : ElementType::int32;
  }

  static Unit adder(ElementType t) {
    switch (table_entry(t)) {
      case ElementType::int8: return kIntAdd8;
      case ElementType::int16: return kIntAdd16;
      case ElementType::int32: return kIntAdd32;
      case ElementType::fp16: return kFpAdd16;
      default: return kFpAdd32;
    }
  }

  static Unit multiplier(ElementType t) {
    switch (table_entry(t)) {
      case ElementType::int8: return kIntMult8;
      case ElementType::int16: return int_mult16();
      case ElementType::int32: return kIntMult32;
      case ElementType::fp16: return kFpMult16;
      default: return kFpMult32;
    }
  }

  double vdd_;
  bool wide_accumulator_;
  double dram_pj_per_bit_;
};

}  // namespace
}  // namespace monet::plugins::horowitz

MONET_EXPORT_PLUGINS(monet::plugins::horowitz::Horowitz)
