// The table cost model: cores characterised by measurement. A CSV lists, per operator kind (and optionally
// type) and loop-dimension sizes, the measured cycles and energy (optionally split into MAC and off-chip parts);
// a query is answered by an exact row, else by the nearest row or a linear interpolation along one declared loop
// dimension, else by a fallback model or a clear error. This is how a user adds a measured core without writing C++.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {

/// What a row measures. The parts of the energy are optional columns; without them the MAC part follows the
/// core's array (operations × unit_energy_pj) and the rest is on-chip memory.
struct Measurement {
  double cycles = 0;
  double energy_pj = 0;                       // total
  std::optional<double> mac_energy_pj;        // operational array
  std::optional<double> offchip_energy_pj;    // accesses to off-chip memory
};

struct Row {
  OpKind kind = OpKind::elementwise;
  std::string type;                            // "" = any type of that kind
  std::map<std::string, std::int64_t> sizes;   // loop dim -> size; dims absent or "*" match anything
  Measurement m;
  int line = 0;
};

/// Columns that are not loop dims.
bool is_value_column(const std::string& h) {
  return h == "kind" || h == "type" || h == "cycles" || h == "energy_pj" || h == "mac_energy_pj" || h == "offchip_energy_pj";
}

class TableModel final : public CostModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::cost_model;
    i.name = "table";
    i.version = "1.0.0";
    i.summary = "measured costs from a CSV: exact row, nearest or linear along one loop dim, or a fallback model";
    i.description =
        "The CSV's header names the columns: kind (an operator kind: conv, gemm, matmul, elementwise, pooling, "
        "...), optionally type (e.g. Conv; empty = any type), one column per loop dimension (K, C, OX, ... as the "
        "operator names them; an empty cell or * = any size), then cycles and energy_pj, optionally mac_energy_pj and "
        "offchip_energy_pj (the parts of energy_pj spent in the operational array and in off-chip memory; without "
        "them, or with an empty cell, the MAC part is the tile's operations x the core's unit_energy_pj, at most the "
        "total, and the rest is on-chip memory). Lines starting with # are "
        "comments. A tile matches a row when kind (and type, if given) agree and every loop dim of the tile the "
        "header names has the row's size; loop dims the header does not name must have size 1. Without an exact "
        "row, `interpolate` = \"nearest\" takes the row closest along `dimension` (all other dims equal; ties: the "
        "smaller), \"linear\" interpolates cycles and energy between the two rows around the tile's size along "
        "`dimension` (outside their range: a miss). A miss uses the `fallback` cost model (with its default "
        "parameters) or is an error naming the CSV and the tile.";
    i.params = {
        ParamSpec::path("file").with_doc("the CSV of measurements"),
        ParamSpec::choice("interpolate", {"none", "nearest", "linear"}, "none")
            .with_doc("what to do when no row matches exactly"),
        ParamSpec::string("dimension", "").with_doc("the loop dimension `interpolate` works along (e.g. K)"),
        ParamSpec::string("fallback", "").with_doc("cost model for tiles the table does not cover (\"\" = error)"),
    };
    return i;
  }

  explicit TableModel(const ParamValues& p)
      : file_(p.get_string("file")), interpolate_(p.get_string("interpolate")), dimension_(p.get_string("dimension")) {
    if (interpolate_ != "none" && dimension_.empty()) {
      p.fail("interpolate", "interpolate = \"" + interpolate_ + "\" needs `dimension`, the loop dimension to interpolate along");
    }
    read_csv();
    const std::string fallback = p.get_string("fallback");
    if (!fallback.empty()) {
      const Registry& r = Registry::global();
      if (fallback == "table") p.fail("fallback", "the table model cannot fall back on itself");
      const PluginHandle* h = r.find(PluginKind::cost_model, fallback);
      if (!h) {
        const auto names = r.names(PluginKind::cost_model);
        p.fail("fallback", "no cost_model plugin named '" + fallback + "'" + did_you_mean(fallback, names) +
                               "; available: " + join(names));
      }
      fallback_ = r.create<CostModel>(*h, default_params(h->info.params, "fallback " + fallback));
      fallback_name_ = fallback;
    }
  }

  void check_core(const Core& core) const override {
    if (fallback_) fallback_->check_core(core);
  }

  [[nodiscard]] Cost evaluate(const CostQuery& q) const override {
    Cost c;
    if (q.op.is_view()) return c;
    std::map<std::string, std::int64_t> tile;
    for (std::size_t d = 0; d < q.op.dims.size(); ++d) tile[q.op.dims[d].name] = q.tile[d].size();
    if (const Row* r = exact(q.op, tile)) return from_row(q, r->m, "table row " + std::to_string(r->line));
    if (interpolate_ != "none" && tile.contains(dimension_)) {
      if (auto v = interpolated(q.op, tile)) return from_row(q, v->m, v->how);
    }
    if (fallback_) {
      Cost f = fallback_->evaluate(q);
      f.mapping = "not in " + std::filesystem::path(file_).filename().string() + ": " + fallback_name_ + " (" + f.mapping + ")";
      return f;
    }
    throw UserError(SourceLocation{file_}, "no row for operator '" + q.op.name + "' (" + to_string(q.op.kind) + " " +
                                               q.op.type + ", " + describe(tile) + ") and no fallback model" +
                                               (interpolate_ == "none" ? "" : " (" + interpolate_ + " along " + dimension_ + " found nothing)"));
  }

 private:
  static std::string describe(const std::map<std::string, std::int64_t>& tile) {
    std::string s;
    for (const auto& [d, n] : tile) s += (s.empty() ? "" : " ") + d + "=" + std::to_string(n);
    return s;
  }

  [[nodiscard]] Cost from_row(const CostQuery& q, const Measurement& m, const std::string& how) const {
    Cost c;
    c.exact_cycles = m.cycles;
    c.cycles = static_cast<std::int64_t>(std::ceil(m.cycles - 1e-9));
    c.energy_pj = m.energy_pj;
    // A total alone is split as the core's array would spend it: operations × unit energy (as roofline counts
    // them), the rest in memory (docs/cost-models.md).
    std::int64_t iterations = 1;
    for (const Range& r : q.tile) iterations *= r.size();
    const double ops = is_mac_kind(q.op.kind) ? static_cast<double>(iterations)
                                              : static_cast<double>(iterations) * q.op.ops_per_iteration;
    c.compute_energy_pj = m.mac_energy_pj.value_or(std::min(m.energy_pj, ops * q.core.array.unit_energy_pj));
    c.memory_energy_pj = m.energy_pj - c.compute_energy_pj;
    c.offchip_energy_pj = m.offchip_energy_pj.value_or(0.0);
    const double pes = static_cast<double>(q.core.array.pe_count());
    c.ideal_cycles = static_cast<std::int64_t>(std::ceil(static_cast<double>(q.op.macs()) / std::max(1.0, pes)));
    c.bound = "measured";
    c.mapping = how;
    return c;
  }

  /// Does the row fit the tile on every dim, except possibly `skip`?
  [[nodiscard]] bool fits(const Row& r, const Operator& op, const std::map<std::string, std::int64_t>& tile,
                          const std::string& skip) const {
    if (r.kind != op.kind || (!r.type.empty() && r.type != op.type)) return false;
    for (const auto& [d, n] : tile) {
      if (d == skip) continue;
      if (!header_dims_.contains(d)) {
        if (n != 1) return false;
        continue;
      }
      auto it = r.sizes.find(d);
      if (it != r.sizes.end() && it->second != n) return false;
    }
    return true;
  }

  [[nodiscard]] const Row* exact(const Operator& op, const std::map<std::string, std::int64_t>& tile) const {
    for (const Row& r : rows_) {
      if (fits(r, op, tile, "")) return &r;
    }
    return nullptr;
  }

  struct Estimate {
    Measurement m;
    std::string how;
  };

  /// Linear between two measurements; a part measured in only one of them is left to the splitting rule.
  static Measurement between(const Measurement& a, const Measurement& b, double t) {
    auto lerp = [t](double x, double y) { return x + t * (y - x); };
    Measurement m{lerp(a.cycles, b.cycles), lerp(a.energy_pj, b.energy_pj), std::nullopt, std::nullopt};
    if (a.mac_energy_pj && b.mac_energy_pj) m.mac_energy_pj = lerp(*a.mac_energy_pj, *b.mac_energy_pj);
    if (a.offchip_energy_pj && b.offchip_energy_pj) m.offchip_energy_pj = lerp(*a.offchip_energy_pj, *b.offchip_energy_pj);
    return m;
  }

  [[nodiscard]] std::optional<Estimate> interpolated(const Operator& op, const std::map<std::string, std::int64_t>& tile) const {
    const double x = static_cast<double>(tile.at(dimension_));
    const Row* below = nullptr;
    const Row* above = nullptr;
    const Row* nearest = nullptr;
    double best = std::numeric_limits<double>::infinity();
    for (const Row& r : rows_) {
      auto it = r.sizes.find(dimension_);
      if (it == r.sizes.end() || !fits(r, op, tile, dimension_)) continue;
      const double v = static_cast<double>(it->second);
      const double dist = std::fabs(v - x);
      if (dist < best || (dist == best && nearest && v < static_cast<double>(nearest->sizes.at(dimension_)))) {
        best = dist;
        nearest = &r;
      }
      if (v <= x && (!below || v > static_cast<double>(below->sizes.at(dimension_)))) below = &r;
      if (v >= x && (!above || v < static_cast<double>(above->sizes.at(dimension_)))) above = &r;
    }
    if (interpolate_ == "nearest") {
      if (!nearest) return std::nullopt;
      return Estimate{nearest->m, "nearest table row " + std::to_string(nearest->line) + " along " + dimension_};
    }
    if (!below || !above) return std::nullopt;
    const double x0 = static_cast<double>(below->sizes.at(dimension_));
    const double x1 = static_cast<double>(above->sizes.at(dimension_));
    const double t = x1 == x0 ? 0.0 : (x - x0) / (x1 - x0);
    return Estimate{between(below->m, above->m, t),
                    "linear between table rows " + std::to_string(below->line) + " and " + std::to_string(above->line) +
                        " along " + dimension_};
  }

  void read_csv() {
    std::ifstream in(file_);
    if (!in) throw UserError(SourceLocation{file_}, "cannot read the table (file not found or not readable)");
    std::string line;
    int n = 0;
    std::vector<std::string> header;
    auto fail = [&](int col, const std::string& msg) {
      throw UserError(SourceLocation{file_, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(col)}, msg);
    };
    auto column_of = [&](std::size_t k) { return csv_column(line, k); };
    while (std::getline(in, line)) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::string t = trim(line);
      if (t.empty() || t[0] == '#') continue;
      const auto cells = split_csv_line(line);
      if (header.empty()) {
        header = cells;
        for (const char* need : {"kind", "cycles", "energy_pj"}) {
          if (std::find(header.begin(), header.end(), need) == header.end()) {
            fail(1, std::string("the header needs a '") + need + "' column (kind, [type,] loop dims..., cycles, energy_pj)");
          }
        }
        for (std::size_t k = 0; k < header.size(); ++k) {
          const std::string& h = header[k];
          if (h.empty()) fail(column_of(k), "empty column name in the header");
          if (std::count(header.begin(), header.end(), h) > 1) fail(column_of(k), "column '" + h + "' appears twice");
          if (!is_value_column(h)) header_dims_.insert(h);
        }
        continue;
      }
      if (cells.size() != header.size()) {
        fail(1, "expected " + std::to_string(header.size()) + " cells (" + join(header, ", ") + "), got " +
                    std::to_string(cells.size()));
      }
      Row r;
      r.line = n;
      for (std::size_t k = 0; k < cells.size(); ++k) {
        const std::string& h = header[k];
        const std::string& v = cells[k];
        const int col = column_of(k);
        if (h == "kind") {
          auto kind = parse_op_kind(v);
          if (!kind) fail(col, "unknown operator kind '" + v + "'" + did_you_mean(v, all_op_kind_names()) + "; kinds: " + join(all_op_kind_names()));
          r.kind = *kind;
        } else if (h == "type") {
          r.type = v;
        } else if (is_value_column(h)) {
          const bool part = h == "mac_energy_pj" || h == "offchip_energy_pj";
          if (part && v.empty()) continue;  // not measured: the splitting rule applies
          double x = 0;
          std::size_t used = 0;
          try {
            x = std::stod(v, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (v.empty() || used != v.size() || !(x >= 0) || !std::isfinite(x)) {
            fail(col, h + ": expected a non-negative number" + std::string(part ? " or an empty cell" : "") + ", got '" + v + "'");
          }
          if (h == "cycles") r.m.cycles = x;
          if (h == "energy_pj") r.m.energy_pj = x;
          if (h == "mac_energy_pj") r.m.mac_energy_pj = x;
          if (h == "offchip_energy_pj") r.m.offchip_energy_pj = x;
        } else if (!v.empty() && v != "*") {
          std::int64_t x = 0;
          std::size_t used = 0;
          try {
            x = std::stoll(v, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used != v.size() || x < 1) fail(col, h + ": expected a loop size (an integer >= 1, empty or * = any), got '" + v + "'");
          r.sizes[h] = x;
        }
      }
      const double parts = r.m.mac_energy_pj.value_or(0) + r.m.offchip_energy_pj.value_or(0);
      if (parts > r.m.energy_pj * (1 + 1e-12)) {
        fail(1, "mac_energy_pj + offchip_energy_pj (" + format_number(parts) + ") exceed energy_pj (" +
                    format_number(r.m.energy_pj) + "): they are parts of it");
      }
      rows_.push_back(std::move(r));
    }
    if (header.empty()) throw UserError(SourceLocation{file_}, "the table is empty (no header line)");
    if (!dimension_.empty() && !header_dims_.contains(dimension_)) {
      throw UserError(SourceLocation{file_}, "dimension '" + dimension_ + "' is not a column of the table" +
                                                 did_you_mean(dimension_, std::vector<std::string>(header_dims_.begin(), header_dims_.end())));
    }
  }

  std::string file_;
  std::string interpolate_;
  std::string dimension_;
  std::set<std::string> header_dims_;
  std::vector<Row> rows_;
  std::shared_ptr<CostModel> fallback_;
  std::string fallback_name_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::TableModel)
