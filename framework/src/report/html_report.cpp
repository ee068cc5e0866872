// report.html: the page template (report_template.html with report.css and report.js, compiled in) with the run's or
// search's data embedded.
#include "monet/report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "json_parts.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/search/pareto.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/version.hpp"

namespace monet {

using json = nlohmann::ordered_json;

namespace detail {
extern const char* const kReportTemplate;  // report_template.cpp, generated from report_template.html
extern const char* const kReportStyle;     // report_css.cpp, from report.css
extern const char* const kReportScript;    // report_js.cpp, from report.js
extern const char* const kReportSearchScript;  // report_search_js.cpp, from report_search.js
}

namespace {

constexpr const char* kDataMarker = "/*MONET_REPORT_DATA*/";
// The lines of report_template.html where report.css and report.js go.
constexpr const char* kStyleMarker = "/*MONET_REPORT_STYLE*/\n";
constexpr const char* kScriptMarker = "/*MONET_REPORT_SCRIPT*/\n";
constexpr const char* kSearchScriptMarker = "/*MONET_REPORT_SEARCH_SCRIPT*/\n";  // in report.js

/// A part of the page as the page holds it: without the file's header comment (what it starts with, up to the
/// first "*/" and its line end), which says what the file holds.
std::string_view without_header(std::string_view part) {
  if (part.substr(0, 2) != "/*") return part;
  const std::size_t end = part.find("*/\n");
  if (end == std::string_view::npos) throw std::logic_error("a report page part's header comment has no end");
  return part.substr(end + 3);
}

/// `page` with its `marker` line replaced by `part`.
std::string insert_part(std::string page, const std::string& marker, std::string_view part) {
  const std::size_t at = page.find(marker);
  if (at == std::string::npos) throw std::logic_error("the report template has no marker " + marker);
  page.replace(at, marker.size(), part);
  return page;
}

/// Index of each distinct string of a column (tables of names instead of repeating them per row).
class Interner {
 public:
  int operator()(const std::string& s) {
    auto [it, added] = index_.try_emplace(s, static_cast<int>(names_.size()));
    if (added) names_.push_back(s);
    return it->second;
  }
  [[nodiscard]] json names() const { return names_; }

 private:
  std::map<std::string, int> index_;
  std::vector<std::string> names_;
};

/// Doubles rounded to 6 significant digits: what a tooltip shows; exact values are in the CSV files.
double shown(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

/// Steps of a memory timeline; for cores also the bytes of each use held anywhere in the run, per step.
json memory_steps(const MemoryTimeline& tl) {
  json t = json::array(), bytes = json::array();
  for (const auto& [time, bits] : tl.steps) {
    t.push_back(time);
    bytes.push_back((bits + 7) / 8);
  }
  json m{{"t", t}, {"bytes", bytes}};
  if (tl.by_use.empty()) return m;
  json by_use = json::object();
  for (std::size_t u = 0; u < kMemoryUses; ++u) {
    bool held = false;
    json series = json::array();
    for (const auto& step : tl.by_use) {
      held = held || step[u] != 0;
      series.push_back((step[u] + 7) / 8);
    }
    if (held) by_use[to_string(static_cast<MemoryUse>(u))] = std::move(series);
  }
  m["by_use"] = std::move(by_use);
  return m;
}

json run_data(const PreparedExperiment& p, const RunResult& r) {
  const Experiment& e = p.experiment;
  const Graph& g = *p.graph;
  const Accelerator& acc = *e.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  const ScheduleResult& s = r.best;
  const ScheduleSummary& sum = s.summary;

  json d;
  d["kind"] = "run";
  d["experiment"] = e.name;
  d["seed"] = e.seed;
  d["mode"] = e.training_mode;
  d["workload"] = json{{"name", g.name()}, {"operators", g.operators().size()}, {"macs", g.total_macs()},
                       {"parameters", g.parameter_count()}};
  d["architecture"] = acc.name;
  d["frequency_hz"] = acc.frequency_hz;
  d["latency_cycles"] = sum.latency_cycles;
  d["energy_pj"] = sum.energy_pj();
  d["energy_breakdown_pj"] = json{{"MAC", sum.energy.mac_pj},
                                  {"on-chip memory", sum.energy.onchip_memory_pj},
                                  {"off-chip memory", sum.energy.offchip_pj},
                                  {"links", sum.energy.link_pj},
                                  {"spills", sum.energy.spill_pj},
                                  {"idle", sum.energy.idle_pj}};
  d["offchip_read_bytes"] = sum.offchip_read_bits / 8;
  d["offchip_write_bytes"] = sum.offchip_write_bits / 8;
  d["spilled_bytes"] = sum.spilled_bits / 8;
  d["feasible"] = sum.capacity_violation == 0;
  d["infeasible_reason"] = sum.capacity_reason;
  const std::optional<AcceleratorArea> area = accelerator_area(acc);
  d["area_mm2"] = area ? json(area->total_mm2) : json(nullptr);

  // Rows of the Gantt chart: the cores, then the links. Memory panels: the cores, then off-chip memory.
  json cores = json::array(), links = json::array();
  for (const CoreInstance& c : acc.cores) {
    const auto id = static_cast<std::size_t>(c.id);
    json core{{"name", c.name},
              {"type", c.core->name},
              {"capacity_bytes", c.core->resident_capacity_bits() / 8},
              {"peak_bytes", (sum.peak_memory_bits[id] + 7) / 8},
              {"memory", memory_steps(s.memory[id])}};
    if (id < s.peak_composition.size()) {
      const PeakComposition& pc = s.peak_composition[id];
      core["peak_composition_bytes"] = json{{"time_cycle", pc.time},
                                            {"activations", (pc.activations + 7) / 8},
                                            {"recomputed activations", (pc.recomputed + 7) / 8},
                                            {"weights", (pc.weights + 7) / 8},
                                            {"gradients", (pc.gradients + 7) / 8},
                                            {"optimizer states", (pc.optimizer_states + 7) / 8},
                                            {"streaming", (pc.streaming + 7) / 8},
                                            {"other", (pc.other + 7) / 8}};
    }
    cores.push_back(std::move(core));
  }
  for (const Link& l : acc.links) links.push_back(json{{"name", l.name}, {"bandwidth_bits_per_cycle", l.bandwidth_bits_per_cycle}});
  d["cores"] = cores;
  d["links"] = links;
  d["offchip"] = json{{"name", acc.offchip.name},
                      {"capacity_bytes", acc.offchip.size_bits / 8},
                      {"peak_bytes", (sum.peak_offchip_bits + 7) / 8},
                      {"memory", memory_steps(s.offchip_memory)}};

  // Operators (a table the CNs point into), then one column per CN field and per transfer field.
  Interner kinds, phases, tensors, causes;
  json ops_name = json::array(), ops_kind = json::array(), ops_phase = json::array(), ops_operands = json::array();
  for (const Operator& op : g.operators()) {
    ops_name.push_back(op.name);
    ops_kind.push_back(kinds(to_string(op.kind)));
    ops_phase.push_back(phases(to_string(op.phase)));
    json operands = json::array();
    for (const Operand& o : op.operands) operands.push_back(tensors(g.tensor(o.tensor).name));
    ops_operands.push_back(std::move(operands));
  }
  json op = json::array(), core = json::array(), start = json::array(), dur = json::array(), energy = json::array(),
       macs = json::array(), tile = json::array(), streamed = json::array(), bound = json::array();
  Interner bounds;
  std::vector<int> drawn_index(s.nodes.size(), -1);  // by CN id: its column index (-1: not drawn)
  int drawn = 0;
  for (const ScheduledNode& n : s.nodes) {
    if (n.core < 0 || n.end <= n.start) continue;  // views of off-chip data take no time on a core
    if (n.cn >= 0 && static_cast<std::size_t>(n.cn) < drawn_index.size()) drawn_index[static_cast<std::size_t>(n.cn)] = drawn;
    ++drawn;
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& o = g.op(cn.op);
    std::int64_t m = is_mac_kind(o.kind) ? 1 : 0;
    for (const Range& rg : cn.ranges) m *= rg.size();
    const std::string name = cn_name(g, cn);
    op.push_back(cn.op);
    core.push_back(n.core);
    start.push_back(n.start);
    dur.push_back(n.end - n.start);
    energy.push_back(shown(n.cost.energy_pj));
    macs.push_back(m);
    tile.push_back(name.size() > o.name.size() ? name.substr(o.name.size()) : std::string());
    streamed.push_back(n.streamed.mask());
    bound.push_back(bounds(n.cost.bound));
  }
  d["kinds"] = kinds.names();
  d["phases"] = phases.names();
  d["ops"] = json{{"name", ops_name}, {"kind", ops_kind}, {"phase", ops_phase}, {"operands", ops_operands}};
  d["bounds"] = bounds.names();
  d["cns"] = json{{"op", op}, {"core", core}, {"start", start}, {"dur", dur}, {"energy_pj", energy},
                  {"macs", macs}, {"tile", tile}, {"streamed", streamed}, {"bound", bound}};
  d["cn_count"] = drawn;

  json tt = json::array(), from = json::array(), to = json::array(), link = json::array(), tcause = json::array(),
       tcn = json::array(), tstart = json::array(), tdur = json::array(), bits = json::array(), share = json::array(),
       tenergy = json::array();
  Interner endpoints;
  for (const Transfer& t : s.transfers) {
    if (t.link < 0 || t.end <= t.start) continue;
    tt.push_back(t.tensor == kNone ? -1 : tensors(g.tensor(t.tensor).name));
    from.push_back(endpoints(acc.endpoint_name(t.from)));
    to.push_back(endpoints(acc.endpoint_name(t.to)));
    link.push_back(t.link);
    tcause.push_back(causes(to_string(t.cause)));
    tcn.push_back(t.cn >= 0 && static_cast<std::size_t>(t.cn) < drawn_index.size() ? drawn_index[static_cast<std::size_t>(t.cn)] : -1);
    tstart.push_back(t.start);
    tdur.push_back(t.end - t.start);
    bits.push_back(t.bits);
    const double bw = acc.links[static_cast<std::size_t>(t.link)].bandwidth_bits_per_cycle;
    share.push_back(shown(bw > 0 ? std::clamp(t.bandwidth / bw, 0.0, 1.0) : 1.0));
    tenergy.push_back(shown(t.energy_pj));
  }
  d["tensors"] = tensors.names();
  d["endpoints"] = endpoints.names();
  d["causes"] = causes.names();
  d["transfers"] = json{{"tensor", tt}, {"from", from}, {"to", to}, {"link", link}, {"cause", tcause}, {"cn", tcn},
                        {"start", tstart}, {"dur", tdur}, {"bits", bits}, {"share", share}, {"energy_pj", tenergy}};
  if (e.training_mode == "training") d["training"] = detail::training_json(g, training_summary(g));
  d["provenance"] = json{{"monet_version", kVersion}, {"git_commit", git_commit()}};
  return d;
}

std::string page(const json& data) {
  return embed_report_data(report_template(), data.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

const std::string& report_template() {
  static const std::string t =
      insert_part(insert_part(detail::kReportTemplate, kStyleMarker, without_header(detail::kReportStyle)), kScriptMarker,
                  insert_part(std::string(without_header(detail::kReportScript)), kSearchScriptMarker,
                              without_header(detail::kReportSearchScript)));
  return t;
}

std::string embed_report_data(const std::string& page_template, const std::string& data_json) {
  const std::size_t at = page_template.find(kDataMarker);
  if (at == std::string::npos) throw std::logic_error("the report template has no data marker");
  // '<' appears in JSON only inside strings, where \u003c reads back the same: "</script>" and "<!--" cannot occur.
  std::string escaped;
  escaped.reserve(data_json.size() + 64);
  for (char c : data_json) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  std::string out = page_template.substr(0, at);
  out += escaped;
  out += page_template.substr(at + std::string(kDataMarker).size());
  return out;
}

std::string run_report_data(const PreparedExperiment& p, const RunResult& r) {
  return run_data(p, r).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string run_report_html(const PreparedExperiment& p, const RunResult& r) { return page(run_data(p, r)); }

std::string search_report_html(const Experiment& e, const DesignSpace& space, const SearchResult& r,
                               const std::optional<DesignPoint>& best_point, const PreparedExperiment* best_prepared,
                               const RunResult* best, const std::map<std::size_t, std::string>& kept) {
  json d;
  d["kind"] = "search";
  d["experiment"] = e.name;
  d["plugin"] = e.search.name();
  d["seed"] = e.seed;
  d["stopped"] = r.stopped;
  d["space_size"] = space.size();
  json genes = json::array();
  for (const Gene& g : space.genes) genes.push_back(json{{"name", g.name}, {"values", g.labels}});
  json objectives = json::array();
  for (const Objective& o : space.objectives) objectives.push_back(json{{"key", o.key}, {"unit", o.unit}, {"maximise", o.maximise}});
  d["genes"] = genes;
  d["objectives"] = objectives;
  d["constraints"] = space.constraints;

  // Columns: per gene the value index of every point, per objective its value (null: not scheduled).
  std::vector<json> gene_cols(space.genes.size(), json::array()), obj_cols(space.objectives.size(), json::array());
  json feasible = json::array(), violation = json::array(), reason = json::array(), batch = json::array();
  Interner reasons;
  std::optional<std::size_t> best_index;
  for (std::size_t i = 0; i < r.archive.size(); ++i) {
    const Evaluation& ev = r.archive[i];
    for (std::size_t g = 0; g < gene_cols.size(); ++g) gene_cols[g].push_back(ev.point.genes[g]);
    for (std::size_t k = 0; k < obj_cols.size(); ++k) {
      const double v = k < ev.objectives.size() ? space.objectives[k].value(ev.objectives[k]) : std::nan("");
      obj_cols[k].push_back(std::isfinite(v) ? json(v) : json(nullptr));
    }
    feasible.push_back(ev.feasible() ? 1 : 0);
    violation.push_back(shown(ev.violation));
    reason.push_back(reasons(ev.reason));
    batch.push_back(r.first_batch[i]);
    if (best_point && !best_index && ev.point.genes == best_point->genes) best_index = i;
  }
  d["points"] = json{{"genes", gene_cols}, {"objectives", obj_cols}, {"feasible", feasible}, {"violation", violation},
                     {"reason", reason}, {"batch", batch}};
  d["reasons"] = reasons.names();
  d["front"] = pareto_front(r.archive);
  // Hypervolume per batch under one normalisation (as search.json).
  d["hypervolume_per_batch"] = hypervolume_per_batch(r, normalisation(r.archive));
  d["best"] = best_index ? json(*best_index) : json(nullptr);
  if (best_index && best_prepared && best) d["best_run"] = run_data(*best_prepared, *best);
  json kept_dirs = json::object();
  for (const auto& [index, dir] : kept) kept_dirs[std::to_string(index)] = dir;
  d["kept"] = kept_dirs;
  d["provenance"] = json{{"monet_version", kVersion}, {"git_commit", git_commit()}};
  return page(d);
}

}  // namespace monet
