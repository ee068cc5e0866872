#include "monet/report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace monet {

using json = nlohmann::ordered_json;

namespace {

std::string endpoint(const Accelerator& acc, int e) { return acc.endpoint_name(e); }

std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// A round step for an axis spanning [0, max]: 1, 2 or 5 times a power of ten, about `ticks` ticks.
double nice_step(double max, int ticks) {
  if (max <= 0) return 1;
  const double raw = max / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

const char* kind_colour(OpKind k) {
  switch (k) {
    case OpKind::conv: return "#4c72b0";
    case OpKind::gemm:
    case OpKind::matmul: return "#55a868";
    case OpKind::pooling: return "#8172b2";
    case OpKind::elementwise: return "#dd8452";
    case OpKind::norm: return "#937860";
    case OpKind::softmax: return "#da8bc3";
    default: return "#8c8c8c";
  }
}

const char* cause_colour(TransferCause c) {
  switch (c) {
    case TransferCause::input: return "#64b5cd";
    case TransferCause::fetch: return "#ccb974";
    case TransferCause::writeback: return "#c44e52";
    case TransferCause::spill: return "#8b0000";
    case TransferCause::refetch: return "#b8860b";
    case TransferCause::stream: return "#cccccc";
  }
  return "#8c8c8c";
}

/// An x axis in cycles along the bottom of a plot area.
void x_axis(std::ostringstream& o, double x0, double y, double width, double max_cycles) {
  const double step = nice_step(max_cycles, 8);
  o << "<line x1='" << num(x0) << "' y1='" << num(y) << "' x2='" << num(x0 + width) << "' y2='" << num(y)
    << "' stroke='#333'/>\n";
  for (double t = 0; t <= max_cycles + 1e-9; t += step) {
    const double x = x0 + width * t / std::max(1.0, max_cycles);
    o << "<line x1='" << num(x) << "' y1='" << num(y) << "' x2='" << num(x) << "' y2='" << num(y + 4) << "' stroke='#333'/>"
      << "<text x='" << num(x) << "' y='" << num(y + 16) << "' font-size='10' text-anchor='middle'>" << num(t) << "</text>\n";
  }
}

}  // namespace

std::string trace_json(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  json events = json::array();
  auto meta = [&](int pid, int tid, const std::string& what, const std::string& name) {
    events.push_back(json{{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", what}, {"args", json{{"name", name}}}});
  };
  meta(1, 0, "process_name", "cores");
  meta(2, 0, "process_name", "links");
  for (const CoreInstance& c : acc.cores) meta(1, c.id, "thread_name", c.name + " (" + c.core->name + ")");
  for (std::size_t l = 0; l < acc.links.size(); ++l) meta(2, static_cast<int>(l), "thread_name", acc.links[l].name);
  for (const ScheduledNode& n : r.best.nodes) {
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    if (n.core < 0 || n.end <= n.start) continue;
    json args{{"operator", op.name}, {"kind", to_string(op.kind)}, {"phase", to_string(op.phase)},
              {"energy_pj", n.cost.energy_pj}, {"macs", op.macs() > 0 ? [&] {
                 std::int64_t m = 1;
                 for (const Range& rg : cn.ranges) m *= rg.size();
                 return m;
               }() : 0},
              {"stack", cn.stack}};
    if (!n.cost.mapping.empty()) args["mapping"] = n.cost.mapping;
    std::vector<std::string> streamed;
    for (int s = 0; s < 3; ++s) {
      if (n.streamed.slot[s]) streamed.push_back(to_string(static_cast<OperandSlot>(s)));
    }
    if (!streamed.empty()) args["streamed_operands"] = streamed;
    std::vector<std::string> tensors;
    for (const Operand& o : op.operands) tensors.push_back(g.tensor(o.tensor).name);
    args["tensors"] = tensors;
    events.push_back(json{{"ph", "X"}, {"pid", 1}, {"tid", n.core}, {"name", cn_name(g, cn)}, {"cat", to_string(op.kind)},
                          {"ts", n.start}, {"dur", n.end - n.start}, {"args", args}});
  }
  for (const Transfer& t : r.best.transfers) {
    if (t.end <= t.start) continue;
    const std::string what = t.tensor == kNone ? to_string(t.cause) : g.tensor(t.tensor).name;
    json args{{"cause", to_string(t.cause)}, {"from", endpoint(acc, t.from)}, {"to", endpoint(acc, t.to)},
              {"bits", t.bits}, {"bandwidth_bits_per_cycle", t.bandwidth}, {"energy_pj", t.energy_pj}};
    if (t.cn >= 0) args["for"] = cn_name(g, cns.nodes[static_cast<std::size_t>(t.cn)]);
    events.push_back(json{{"ph", "X"}, {"pid", 2}, {"tid", t.link}, {"name", what}, {"cat", to_string(t.cause)},
                          {"ts", t.start}, {"dur", t.end - t.start}, {"args", args}});
  }
  json j{{"traceEvents", events},
         {"displayTimeUnit", "ns"},
         {"otherData", json{{"experiment", p.experiment.name}, {"time_unit", "cycles (shown as microseconds)"}}}};
  return j.dump() + "\n";
}

std::string memory_svg(const PreparedExperiment& p, const RunResult& r) {
  const Accelerator& acc = *p.experiment.accelerator;
  const ScheduleResult& s = r.best;
  struct Panel {
    std::string title;
    const MemoryTimeline* tl;
    double capacity_kb;  // 0: none drawn
  };
  std::vector<Panel> panels;
  for (const CoreInstance& c : acc.cores) {
    panels.push_back(Panel{c.name + " (" + c.core->name + ")", &s.memory[static_cast<std::size_t>(c.id)],
                           static_cast<double>(c.core->resident_capacity_bits()) / 8e3});
  }
  panels.push_back(Panel{acc.offchip.name + " (off chip)", &s.offchip_memory, 0});
  const double width = 900, left = 90, right = 20, panel_h = 120, gap = 45, top = 40;
  const double plot_w = width - left - right;
  const double height = top + static_cast<double>(panels.size()) * (panel_h + gap) + 20;
  const double t_max = std::max<double>(1.0, static_cast<double>(s.summary.latency_cycles));
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << num(width / 2) << "' y='22' font-size='15' text-anchor='middle'>" << xml(p.experiment.name)
    << ": data held in memory over time</text>\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Panel& pn = panels[i];
    const double y0 = top + static_cast<double>(i) * (panel_h + gap);
    double peak = 0;
    if (pn.tl) {
      for (const auto& [t, bits] : pn.tl->steps) peak = std::max(peak, static_cast<double>(bits) / 8e3);
    }
    const double y_max = std::max({peak, pn.capacity_kb > 0 && pn.capacity_kb < 4 * std::max(peak, 1e-9) ? pn.capacity_kb : 0.0, 1e-3}) * 1.05;
    o << "<text x='" << num(left) << "' y='" << num(y0 - 6) << "' font-size='12'>" << xml(pn.title) << " — peak "
      << num(peak) << " kB</text>\n";
    o << "<rect x='" << num(left) << "' y='" << num(y0) << "' width='" << num(plot_w) << "' height='" << num(panel_h)
      << "' fill='#fafafa' stroke='#999'/>\n";
    // y axis: kB
    const double ystep = nice_step(y_max, 4);
    for (double v = 0; v <= y_max + 1e-12; v += ystep) {
      const double y = y0 + panel_h - panel_h * v / y_max;
      o << "<line x1='" << num(left - 4) << "' y1='" << num(y) << "' x2='" << num(left) << "' y2='" << num(y)
        << "' stroke='#333'/><text x='" << num(left - 6) << "' y='" << num(y + 3) << "' font-size='10' text-anchor='end'>"
        << num(v) << "</text>\n";
    }
    o << "<text x='14' y='" << num(y0 + panel_h / 2) << "' font-size='10' transform='rotate(-90 14 " << num(y0 + panel_h / 2)
      << ")' text-anchor='middle'>kB</text>\n";
    if (pn.capacity_kb > 0 && pn.capacity_kb <= y_max) {
      const double y = y0 + panel_h - panel_h * pn.capacity_kb / y_max;
      o << "<line x1='" << num(left) << "' y1='" << num(y) << "' x2='" << num(left + plot_w) << "' y2='" << num(y)
        << "' stroke='#c44e52' stroke-dasharray='4 3'/><text x='" << num(left + plot_w - 4) << "' y='" << num(y - 3)
        << "' font-size='9' text-anchor='end' fill='#c44e52'>capacity</text>\n";
    }
    // step line
    std::ostringstream path;
    double last_y = y0 + panel_h;
    path << "M" << num(left) << " " << num(last_y);
    if (pn.tl) {
      for (const auto& [t, bits] : pn.tl->steps) {
        const double x = left + plot_w * static_cast<double>(t) / t_max;
        const double y = y0 + panel_h - panel_h * (static_cast<double>(bits) / 8e3) / y_max;
        path << " L" << num(x) << " " << num(last_y) << " L" << num(x) << " " << num(y);
        last_y = y;
      }
    }
    path << " L" << num(left + plot_w) << " " << num(last_y);
    o << "<path d='" << path.str() << "' fill='none' stroke='#4c72b0' stroke-width='1.2'/>\n";
    x_axis(o, left, y0 + panel_h, plot_w, t_max);
  }
  o << "<text x='" << num(left + plot_w / 2) << "' y='" << num(height - 4) << "' font-size='11' text-anchor='middle'>cycles</text>\n";
  o << "</svg>\n";
  return o.str();
}

std::string schedule_svg(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  const ScheduleResult& s = r.best;
  const double width = 1000, left = 110, right = 20, row_h = 22, top = 40;
  const double plot_w = width - left - right;
  const std::size_t rows = acc.cores.size() + acc.links.size();
  const double legend_h = 40;
  const double height = top + static_cast<double>(rows) * row_h + 40 + legend_h;
  const double t_max = std::max<double>(1.0, static_cast<double>(s.summary.latency_cycles));
  auto x_of = [&](std::int64_t t) { return left + plot_w * static_cast<double>(t) / t_max; };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << num(width / 2) << "' y='22' font-size='15' text-anchor='middle'>" << xml(p.experiment.name)
    << ": schedule (" << s.summary.latency_cycles << " cycles)</text>\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const double y = top + static_cast<double>(i) * row_h;
    const std::string label = i < acc.cores.size() ? acc.cores[i].name : acc.links[i - acc.cores.size()].name;
    o << "<rect x='" << num(left) << "' y='" << num(y) << "' width='" << num(plot_w) << "' height='" << num(row_h - 2)
      << "' fill='" << (i % 2 ? "#f4f4f4" : "#fafafa") << "'/><text x='" << num(left - 6) << "' y='" << num(y + row_h / 2 + 3)
      << "' font-size='11' text-anchor='end'>" << xml(label) << "</text>\n";
  }
  for (const ScheduledNode& n : s.nodes) {
    if (n.core < 0 || n.end <= n.start) continue;
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    const double y = top + static_cast<double>(n.core) * row_h + 1;
    o << "<rect x='" << num(x_of(n.start)) << "' y='" << num(y) << "' width='" << num(std::max(0.3, x_of(n.end) - x_of(n.start)))
      << "' height='" << num(row_h - 4) << "' fill='" << kind_colour(op.kind) << "'><title>" << xml(cn_name(g, cn)) << " ["
      << n.start << ", " << n.end << ")</title></rect>\n";
  }
  for (const Transfer& t : s.transfers) {
    if (t.end <= t.start || t.link < 0) continue;
    const double row = static_cast<double>(acc.cores.size() + static_cast<std::size_t>(t.link));
    const double y = top + row * row_h + 1;
    // Height shows the share of the link's bandwidth in use.
    const double share = std::clamp(t.bandwidth / acc.links[static_cast<std::size_t>(t.link)].bandwidth_bits_per_cycle, 0.05, 1.0);
    const double h = (row_h - 4) * share;
    o << "<rect x='" << num(x_of(t.start)) << "' y='" << num(y + (row_h - 4) - h) << "' width='"
      << num(std::max(0.3, x_of(t.end) - x_of(t.start))) << "' height='" << num(h) << "' fill='" << cause_colour(t.cause)
      << "' fill-opacity='0.8'><title>" << to_string(t.cause) << " " << t.bits << " bits " << acc.endpoint_name(t.from) << " -> "
      << acc.endpoint_name(t.to) << "</title></rect>\n";
  }
  const double axis_y = top + static_cast<double>(rows) * row_h;
  x_axis(o, left, axis_y, plot_w, t_max);
  o << "<text x='" << num(left + plot_w / 2) << "' y='" << num(axis_y + 30) << "' font-size='11' text-anchor='middle'>cycles</text>\n";
  // Legend: operator kinds present, transfer causes present.
  std::map<std::string, std::string> legend;
  for (const ScheduledNode& n : s.nodes) {
    if (n.core < 0) continue;
    const Operator& op = g.op(cns.nodes[static_cast<std::size_t>(n.cn)].op);
    legend[to_string(op.kind)] = kind_colour(op.kind);
  }
  for (const Transfer& t : s.transfers) legend[to_string(t.cause) + " (link)"] = cause_colour(t.cause);
  double x = left;
  const double ly = axis_y + 48;
  for (const auto& [name, colour] : legend) {
    o << "<rect x='" << num(x) << "' y='" << num(ly - 9) << "' width='10' height='10' fill='" << colour << "'/><text x='"
      << num(x + 14) << "' y='" << num(ly) << "' font-size='10'>" << xml(name) << "</text>\n";
    x += 16 + 6.2 * static_cast<double>(name.size()) + 10;
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace monet
