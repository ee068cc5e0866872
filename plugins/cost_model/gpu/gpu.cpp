// The GPU cost model: the whole GPU is one core that runs one kernel per operator, one after the other.
// A matrix product (conv, gemm, matmul) is the GEMM a library runs for it (gemm_shape.hpp) on the tensor cores,
// with tile and wave quantization over a few tile shapes (wave_quantization.hpp; the best one, as cuBLAS's
// heuristics pick one) and an efficiency by size and datatype from the chip's calibration table
// (calibration.hpp); everything else runs on the vector units. Either way the kernel takes at least its
// compulsory HBM traffic at the bandwidth the calibration gives a transfer of that size (roofline), plus a
// launch overhead. Why this shape of model: it is what Calculon, and NVIDIA's own performance guide, use for a
// data-center GPU, and it needs only published numbers and a measured table — no mapping search.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "calibration.hpp"
#include "gemm_shape.hpp"
#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/util/strings.hpp"
#include "wave_quantization.hpp"

namespace monet::plugins {
namespace {

using gpu::Table;

/// Bits per cycle of a memory level: its widest port, every instance.
double bandwidth_bits(const Core& core, const MemoryLevel& m) {
  std::int64_t widest = 0;
  for (const Port& p : m.ports) widest = std::max(widest, p.bandwidth_max_bits);
  return static_cast<double>(widest) * static_cast<double>(core.memory_instances(m));
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * fraction);
  return buf;
}

class GpuModel final : public CostModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::cost_model;
    i.name = "gpu";
    i.version = "1.1.0";
    i.summary = "a whole GPU as one core: tensor-core GEMMs with tile and wave quantization and a calibrated "
                "efficiency, other operators at the achievable HBM bandwidth, plus a launch overhead";
    i.description =
        "Per operator (one kernel): cycles = launch_cycles + max(compute, HBM bytes x 8 / (HBM bits/cycle x "
        "eta_hbm(bytes))), or their sum with overlap_memory = false. Matrix products (conv, gemm, matmul) are GEMMs: M = loop dims of the output and the "
        "first input only, N = of the output and the second input only, K = reduced dims, batch = dims of all "
        "(a convolution is an implicit GEMM; a fused kernel such as FlashAttention names its M, N and K dims in "
        "the attributes gemm_m, gemm_n, gemm_k). For each tile shape in `tiles`: tiles = batch x ceil(M/Tm) x "
        "ceil(N/Tn) x split, waves = ceil(tiles / (sms x blocks_per_sm)), tensor cycles = waves x sms x "
        "blocks_per_sm x Tm Tn ceil(K/split) / (sms x tensor_macs_per_sm[dtype]) (NVIDIA's tile and wave "
        "quantization; split from `split_k`), at least the operand panels the tiles read out of the L2 (tiles x "
        "(Tm + Tn) x ceil(K/split) x element bits, plus 2 x split x M N x 32 bits of split-K partial sums) over "
        "the L2's bandwidth; the fastest (tile, split) wins. compute = that / eta_matrix(dtype, 2 MNK batch FLOP) "
        "(eta_fused_matrix for a kernel that names its GEMM), or the vector units' time if shorter (a depthwise convolution). Other operators: compute = iterations x "
        "ops_per_iteration / (sms x vector_ops_per_sm[dtype] x eta_vector(ops)). dtype = the first input's "
        "element type for matrix products (or the type the precision pass narrowed them to: [precision] "
        "weight_matmul, Operator::matmul_type), the output's otherwise; types without a vector rate use fp32's. HBM "
        "bytes = every operand's region once (perfect reuse inside the kernel, none between kernels). The eta "
        "are step tables by size in the `calibration` CSV. The core's top level for every operand must be its "
        "off-chip HBM (offchip = true: its widest port is the HBM bandwidth, its energies the HBM's); the "
        "highest on-chip level is the L2 (its widest port is the L2 bandwidth). Energy: MACs x the array's "
        "unit_energy_pj x tensor_macs_per_sm[the array's precision] / tensor_macs_per_sm[dtype] (tensor cores: the "
        "same power at every datatype's peak) or vector ops x vector_op_energy_pj; HBM bits at the off-chip level's "
        "energies; the L2's reads (operands out to the SMs) and writes (fills from HBM and outputs) at its "
        "energies. bound: tensor_core, l2, vector, hbm or launch.";
    i.params = {
        ParamSpec::integer("sms", std::nullopt)
            .with_bounds(Bounds::at_least(1))
            .with_unit("SMs")
            .with_doc("streaming multiprocessors (compute units) that run thread blocks"),
        ParamSpec::integer_table("tensor_macs_per_sm", std::nullopt)
            .with_unit("MACs/cycle/SM")
            .with_doc("dense tensor-core multiply-accumulates per cycle and SM, by operand datatype ({ bf16 = 1024, "
                      "fp32 = 512 } -- fp32 products run as TF32 where the chip does that); a datatype not listed "
                      "has no tensor-core path"),
        ParamSpec::integer_table("vector_ops_per_sm", std::nullopt)
            .with_unit("ops/cycle/SM")
            .with_doc("vector (CUDA-core) operations per cycle and SM by datatype (an FMA is one operation, as "
                      "monet counts ops_per_iteration); must list fp32, the rate of datatypes not listed"),
        ParamSpec::integer("blocks_per_sm", 1)
            .with_bounds(Bounds::at_least(1))
            .with_unit("thread blocks")
            .with_doc("thread blocks (one output tile each) an SM runs at once: a wave is sms x blocks_per_sm tiles"),
        ParamSpec::string_list("tiles", std::nullopt)
            .with_doc("candidate output tile shapes \"MxN\" of the GEMM kernels (e.g. [\"256x128\", \"128x128\"]); "
                      "each product takes the fastest"),
        ParamSpec::integer_list("split_k", std::vector<std::int64_t>{1})
            .with_bounds(Bounds::at_least(1))
            .with_doc("split-K factors the GEMM kernels may use (K cut into that many slices, each its own tile; the "
                      "fp32 partial sums go through the L2 and back); [1] = no split-K"),
        ParamSpec::number("launch_cycles", std::nullopt)
            .with_bounds(Bounds::non_negative())
            .with_unit("cycles")
            .with_doc("kernel launch overhead added to every operator except views"),
        ParamSpec::boolean("overlap_memory", true)
            .with_doc("true: a kernel takes the longer of its compute and its HBM traffic (a roofline); false: their "
                      "sum (Calculon's processing_mode = \"no_overlap\", the form its calibrated tables were fitted "
                      "with)"),
        ParamSpec::number("vector_op_energy_pj", std::nullopt)
            .with_bounds(Bounds::non_negative())
            .with_unit("pJ")
            .with_doc("energy of one vector (CUDA-core) operation"),
        ParamSpec::path("calibration").with_doc(
            "CSV of efficiency step tables: header table,type,at_least,efficiency; table = matrix (by FLOP, per "
            "datatype), fused_matrix (optional, by FLOP, per datatype: kernels that name their GEMM in gemm_m/"
            "gemm_n/gemm_k, FlashAttention; without its rows they read matrix's), vector (by ops) or hbm (by "
            "bytes, type *); type = a datatype or * (any); a row applies from at_least up to the next row; each "
            "(table, type) needs an at_least = 0 row"),
    };
    return i;
  }

  explicit GpuModel(const ParamValues& p)
      : params_(p),
        sms_(p.get_int("sms")),
        tensor_(p.get_integer_table("tensor_macs_per_sm")),
        vector_(p.get_integer_table("vector_ops_per_sm")),
        blocks_per_sm_(p.get_int("blocks_per_sm")),
        splits_(p.get_ints("split_k")),
        launch_(p.get_number("launch_cycles")),
        overlap_(p.get_bool("overlap_memory")),
        vector_energy_(p.get_number("vector_op_energy_pj")),
        calibration_(read_calibration(p)) {
    for (const std::string& t : p.get_strings("tiles")) {
      auto tile = gpu::parse_tile(t);
      if (!tile) p.fail("tiles", "tile '" + t + "': expected \"MxN\" with M, N >= 1 (e.g. \"128x256\")");
      tiles_.push_back(*tile);
    }
    if (tiles_.empty()) p.fail("tiles", "needs at least one tile shape");
    check_rates("tensor_macs_per_sm", tensor_, Table::matrix);
    check_rates("vector_ops_per_sm", vector_, Table::vector);
    if (!vector_.contains("fp32")) p.fail("vector_ops_per_sm", "needs an fp32 entry (the rate of datatypes not listed)");
  }

  void check_core(const Core& core) const override {
    const SourceLocation where{core.file};
    for (int s = 0; s < kSlotCount; ++s) {
      const auto slot = static_cast<OperandSlot>(s);
      if (!core.lives_offchip(slot)) {
        throw UserError(where, "core '" + core.name + "': the gpu model needs the off-chip HBM (offchip = true) as the top "
                                                      "memory of every operand; " + to_string(slot) + "'s top is '" +
                                   core.top_level(slot).name + "'");
      }
    }
    const int l2 = core.top_onchip_index(OperandSlot::I1);
    if (l2 < 0) throw UserError(where, "core '" + core.name + "': the gpu model needs an on-chip memory (the L2) below the HBM");
    if (bandwidth_bits(core, core.memories[static_cast<std::size_t>(l2)]) <= 0 ||
        bandwidth_bits(core, core.top_level(OperandSlot::I1)) <= 0) {
      throw UserError(where, "core '" + core.name + "': the L2 and HBM levels need ports with a bandwidth");
    }
    // The array is the tensor cores of all SMs, so utilisation reports stay right.
    if (core.array.precision) {
      const std::string type = to_string(*core.array.precision);
      auto it = tensor_.find(type);
      if (it == tensor_.end()) params_.fail("tensor_macs_per_sm", "no rate for the array's precision " + type);
      if (core.array.pe_count() != sms_ * it->second) {
        params_.fail("tensor_macs_per_sm", "sms x tensor_macs_per_sm." + type + " = " + std::to_string(sms_ * it->second) +
                                               " but the core's array has " + std::to_string(core.array.pe_count()) +
                                               " MACs: they must agree");
      }
    }
  }

  [[nodiscard]] Cost evaluate(const CostQuery& q) const override {
    const Operator& op = q.op;
    const Core& core = q.core;
    Cost c;
    if (op.is_view()) return c;
    const MemoryLevel& hbm = core.top_level(OperandSlot::I1);
    const MemoryLevel& l2 = core.memories[static_cast<std::size_t>(std::max(0, core.top_onchip_index(OperandSlot::I1)))];

    // Compulsory HBM traffic: every operand region once.
    double read_bits = 0;
    double write_bits = 0;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      const std::int64_t bits = region_elements(op.operand_region(k, q.tile, q.graph.tensor(o.tensor))) * o.precision_bits;
      const auto s = static_cast<std::size_t>(o.slot);
      if (o.is_output()) {
        c.offchip_write_bits_by_slot[s] += bits;
        write_bits += static_cast<double>(bits);
      } else {
        c.offchip_read_bits_by_slot[s] += bits;
        read_bits += static_cast<double>(bits);
      }
    }
    for (int s = 0; s < kSlotCount; ++s) {
      c.offchip_read_bits += c.offchip_read_bits_by_slot[s];
      c.offchip_write_bits += c.offchip_write_bits_by_slot[s];
    }
    const double bytes = (read_bits + write_bits) / 8;
    const double eta_hbm = calibration_.efficiency(Table::hbm, "*", bytes);
    const double hbm_cycles = (read_bits + write_bits) / (bandwidth_bits(core, hbm) * eta_hbm);

    std::int64_t iterations = 1;
    for (const Range& r : q.tile) iterations *= r.size();
    Compute k = is_mac_kind(op.kind) ? matrix(q, static_cast<double>(iterations), read_bits)
                                     : vector(q, op.kind == OpKind::copy ? 0.0 : static_cast<double>(iterations) * op.ops_per_iteration);
    const double body = overlap_ ? std::max(k.cycles, hbm_cycles) : k.cycles + hbm_cycles;
    c.exact_cycles = launch_ + body;
    c.cycles = static_cast<std::int64_t>(std::ceil(c.exact_cycles - 1e-9));
    c.ideal_cycles = static_cast<std::int64_t>(std::ceil(k.ideal_cycles));
    c.spatial_utilization = k.utilization;
    c.bound = launch_ >= body ? "launch" : k.cycles >= hbm_cycles ? k.bound : "hbm";

    c.compute_energy_pj = k.energy_pj;
    c.offchip_energy_pj = read_bits * hbm.read_energy_per_bit() + write_bits * hbm.write_energy_per_bit();
    // The L2: operands read out to the SMs, HBM fills and outputs written into it.
    const double l2_energy = k.l2_read_bits * l2.read_energy_per_bit() + (read_bits + write_bits) * l2.write_energy_per_bit();
    c.memory_energy_pj = c.offchip_energy_pj + l2_energy;
    c.energy_pj = c.compute_energy_pj + c.memory_energy_pj;
    c.mapping = k.mapping + "; HBM " + format_number(bytes) + " B at eta " + format_number(eta_hbm) + " = " +
                format_number(std::ceil(hbm_cycles)) + " cycles; launch " + format_number(launch_) + " cycles";
    c.spatial_mapping = k.tile;
    return c;
  }

 private:
  struct Compute {
    double cycles = 0;
    double ideal_cycles = 0;
    double energy_pj = 0;
    double l2_read_bits = 0;  // operand bits the SMs read out of the L2
    double utilization = 0;
    std::string bound;
    std::string mapping;
    std::string tile;
  };

  /// A missing file is an error at the core file's `calibration` key; a bad row, at the row.
  static gpu::Calibration read_calibration(const ParamValues& p) {
    const std::string& file = p.get_string("calibration");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) p.fail("calibration", "no calibration table at " + file);
    return gpu::Calibration::read(file);
  }

  /// Every rate needs a calibration table for its datatype.
  void check_rates(const std::string& name, const IntegerTable& rates, Table table) const {
    for (const auto& [type, rate] : rates) {
      if (!parse_element_type(type)) params_.fail(name, "'" + type + "' is not a datatype (" + join(all_element_type_names()) + ")");
      if (rate < 1) params_.fail(name, type + ": expected a rate >= 1, got " + std::to_string(rate));
      if (!calibration_.has(table, type)) {
        params_.fail(name, type + " has no " + std::string(table == Table::matrix ? "matrix" : "vector") +
                               " rows in the calibration table " + calibration_.file());
      }
    }
  }

  [[nodiscard]] static std::string dtype_of(const CostQuery& q, bool input) {
    const Operator& op = q.op;
    if (input && op.matmul_type()) return to_string(*op.matmul_type());  // narrowed by the precision pass (FP8)
    for (const Operand& o : op.operands) {
      if (input ? o.slot == OperandSlot::I1 : o.is_output()) return to_string(q.graph.tensor(o.tensor).dtype);
    }
    return op.operands.empty() ? "fp32" : to_string(q.graph.tensor(op.operands.front().tensor).dtype);
  }

  [[nodiscard]] double vector_rate(const std::string& type) const {
    auto it = vector_.find(type);
    return static_cast<double>(sms_ * (it != vector_.end() ? it->second : vector_.at("fp32")));
  }

  [[nodiscard]] Compute vector(const CostQuery& q, double ops) const {
    const std::string type = dtype_of(q, false);
    const double peak = vector_rate(type);
    const double eta = calibration_.efficiency(Table::vector, vector_.contains(type) ? type : "fp32", ops);
    Compute k;
    k.ideal_cycles = ops / peak;
    k.cycles = k.ideal_cycles / eta;
    k.energy_pj = ops * vector_energy_;
    k.bound = "vector";
    k.mapping = "vector units: " + format_number(ops) + " ops (" + type + ") at eta " + format_number(eta) + " = " +
                format_number(std::ceil(k.cycles)) + " cycles";
    return k;
  }

  /// unit_energy_pj is the whole chip's energy per MAC of the array's precision, calibrated at the power limit.
  /// A datatype the tensor cores run at another rate draws the same power at its peak (the chip is power-limited
  /// either way): its MAC costs unit_energy_pj x the array precision's rate / its rate (an fp8 MAC half a bf16's).
  [[nodiscard]] double mac_energy_scale(const Core& core, std::int64_t rate) const {
    if (!core.array.precision) return 1.0;
    const auto calibrated = tensor_.find(to_string(*core.array.precision));
    return calibrated == tensor_.end() ? 1.0 : static_cast<double>(calibrated->second) / static_cast<double>(rate);
  }

  [[nodiscard]] Compute matrix(const CostQuery& q, double macs, double read_bits) const {
    const std::string type = dtype_of(q, true);
    const gpu::GemmShape g = gpu::gemm_shape(q.op, q.tile);
    Compute on_vector = vector(q, macs);
    on_vector.l2_read_bits = read_bits;
    auto rate = tensor_.find(type);
    if (rate == tensor_.end()) return on_vector;  // no tensor-core path for this datatype: CUDA cores

    const double per_cycle = static_cast<double>(sms_ * rate->second);
    int in_bits = 0;
    for (const Operand& o : q.op.operands) {
      if (o.slot == OperandSlot::I1) in_bits = o.precision_bits;
    }
    const double l2_bandwidth = bandwidth_bits(q.core, q.core.memories[static_cast<std::size_t>(
                                                           std::max(0, q.core.top_onchip_index(OperandSlot::I1)))]);
    gpu::TilePlan best;
    double best_cycles = std::numeric_limits<double>::infinity();
    double best_l2_bits = 0;
    bool l2_bound = false;
    for (const gpu::TileShape& t : tiles_) {
      for (const std::int64_t split : splits_) {
        if (split > g.k) continue;
        const gpu::TilePlan p = gpu::plan_tiles(g, t, split, sms_, blocks_per_sm_);
        const double tensor = p.quantized_macs / per_cycle;
        // Each tile reads its Tm x K/split and K/split x Tn panels out of the L2; split-K partial sums (fp32)
        // are written to it and read back once more.
        double l2_bits = static_cast<double>(p.tiles) * static_cast<double>(t.m + t.n) *
                         std::ceil(static_cast<double>(g.k) / static_cast<double>(split)) * in_bits;
        if (split > 1) l2_bits += 2.0 * static_cast<double>(split * g.batch * g.m * g.n) * 32;
        const double l2 = l2_bits / l2_bandwidth;
        if (std::max(tensor, l2) < best_cycles) {
          best_cycles = std::max(tensor, l2);
          best = p;
          best_l2_bits = l2_bits;
          l2_bound = l2 > tensor;
        }
      }
    }
    const double flops = 2 * macs;
    const double eta = calibration_.efficiency(g.fused ? Table::fused_matrix : Table::matrix, type, flops);
    Compute k;
    k.cycles = best_cycles / eta;
    if (on_vector.cycles < k.cycles) return on_vector;  // the vector units win (depthwise convolutions)
    k.ideal_cycles = macs / per_cycle;
    k.energy_pj = macs * q.core.array.unit_energy_pj * mac_energy_scale(q.core, rate->second);
    k.l2_read_bits = best_l2_bits;
    k.utilization = best.tile_efficiency * best.wave_efficiency;
    k.bound = l2_bound ? "l2" : "tensor_core";
    k.tile = std::to_string(best.tile.m) + "x" + std::to_string(best.tile.n);
    k.mapping = "GEMM M=" + std::to_string(g.m) + " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k) +
                " batch=" + std::to_string(g.batch) + " (" + type + "): tile " + k.tile +
                (best.split > 1 ? ", split-K " + std::to_string(best.split) : "") + ", " +
                std::to_string(best.tiles) + " tiles in " + std::to_string(best.waves) + " waves of " +
                std::to_string(sms_ * blocks_per_sm_) + " (tile " + percent(best.tile_efficiency) + ", wave " +
                percent(best.wave_efficiency) + ")" + (l2_bound ? ", L2-bound" : "") + "; eta " + format_number(eta) +
                " at " + format_number(flops) + " FLOP = " + format_number(std::ceil(k.cycles)) + " cycles";
    return k;
  }

  ParamValues params_;
  std::int64_t sms_;
  IntegerTable tensor_;
  IntegerTable vector_;
  std::int64_t blocks_per_sm_;
  std::vector<std::int64_t> splits_;
  double launch_;
  bool overlap_;
  double vector_energy_;
  gpu::Calibration calibration_;
  std::vector<gpu::TileShape> tiles_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::GpuModel)
