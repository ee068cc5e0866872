#include "monet/report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

#include "monet/util/strings.hpp"

namespace monet {

namespace {

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

// Distinct colours (Tableau 20): one per operator kind on core rows, one per transfer cause on link rows.
const char* kind_colour(OpKind k) {
  switch (k) {
    case OpKind::conv: return "#1f77b4";
    case OpKind::gemm: return "#2ca02c";
    case OpKind::matmul: return "#98df8a";
    case OpKind::elementwise: return "#ff7f0e";
    case OpKind::pooling: return "#9467bd";
    case OpKind::reduction: return "#8c564b";
    case OpKind::softmax: return "#e377c2";
    case OpKind::norm: return "#bcbd22";
    case OpKind::embedding: return "#17becf";
    case OpKind::loss: return "#7f7f7f";
    case OpKind::view: return "#c7c7c7";
    case OpKind::copy: return "#dbdb8d";
  }
  return "#000000";
}

const char* cause_colour(TransferCause c) {
  switch (c) {
    case TransferCause::input: return "#aec7e8";
    case TransferCause::fetch: return "#ffbb78";
    case TransferCause::writeback: return "#c5b0d5";
    case TransferCause::spill: return "#d62728";
    case TransferCause::refetch: return "#ff9896";
    case TransferCause::stream: return "#9edae5";
    case TransferCause::offload: return "#8c564b";
    case TransferCause::prefetch: return "#e7969c";
  }
  return "#000000";
}

/// Approximate width of a sans-serif text (for layout: margins, legends).
double text_width(const std::string& s, double font_size) { return 0.6 * font_size * static_cast<double>(s.size()); }

/// An x axis in cycles along the bottom of a plot area, ticks SI-formatted (50M, not 5e+07).
void x_axis(std::ostringstream& o, double x0, double y, double width, double max_cycles) {
  const double step = nice_step(max_cycles, 8);
  o << "<line x1='" << num(x0) << "' y1='" << num(y) << "' x2='" << num(x0 + width) << "' y2='" << num(y)
    << "' stroke='#333'/>\n";
  for (double t = 0; t <= max_cycles + 1e-9; t += step) {
    const double x = x0 + width * t / std::max(1.0, max_cycles);
    o << "<line x1='" << num(x) << "' y1='" << num(y) << "' x2='" << num(x) << "' y2='" << num(y + 4) << "' stroke='#333'/>"
      << "<text x='" << num(x) << "' y='" << num(y + 16) << "' font-size='10' text-anchor='middle'>"
      << si(t, "", 3) << "</text>\n";
  }
}

/// A row's activity binned by pixel column when there is too much to draw one rectangle each: per column, the
/// share of the column's time it is busy (or of the link's bandwidth in use) and the category that dominates.
class ColumnBins {
 public:
  ColumnBins(std::size_t columns, double t_max) : t_max_(t_max), load_(columns, 0), by_colour_(columns) {}

  /// Activity over [start, end) at `level` (1 = the whole row: a core busy; a link's share of bandwidth).
  void add(std::int64_t start, std::int64_t end, double level, const char* colour) {
    const auto n = static_cast<double>(load_.size());
    const double width = t_max_ / n;  // cycles per column
    const double s = static_cast<double>(start), e = static_cast<double>(end);
    auto first = static_cast<std::size_t>(std::clamp(std::floor(s / width), 0.0, n - 1));
    for (std::size_t c = first; c < load_.size(); ++c) {
      const double lo = static_cast<double>(c) * width, hi = lo + width;
      if (lo >= e) break;
      const double part = (std::min(hi, e) - std::max(lo, s)) / width * level;
      if (part <= 0) continue;
      load_[c] += part;
      by_colour_[c][colour] += part;
    }
  }

  /// Runs of columns with the same colour and height (in `levels` steps): x from, x to, height fraction, colour.
  struct Run {
    std::size_t from = 0, to = 0;
    double height = 0;
    const char* colour = nullptr;
  };
  [[nodiscard]] std::vector<Run> runs(int levels) const {
    std::vector<Run> out;
    for (std::size_t c = 0; c < load_.size(); ++c) {
      if (load_[c] <= 0) continue;
      const char* colour = nullptr;
      double most = -1;
      for (const auto& [col, v] : by_colour_[c]) {
        if (v > most) {
          most = v;
          colour = col;
        }
      }
      const double h = std::max(1.0, std::round(std::min(1.0, load_[c]) * levels)) / levels;
      if (!out.empty() && out.back().to == c && out.back().colour == colour && out.back().height == h) {
        out.back().to = c + 1;
      } else {
        out.push_back(Run{c, c + 1, h, colour});
      }
    }
    return out;
  }

 private:
  double t_max_;
  std::vector<double> load_;
  std::vector<std::map<const char*, double>> by_colour_;
};

/// Legend entries laid out left to right, wrapping within `width`; returns the height used.
double legend(std::ostringstream& o, const std::vector<std::pair<std::string, std::string>>& entries, double x0,
              double y0, double width) {
  double x = x0, y = y0;
  const double line = 16;
  for (const auto& [name, colour] : entries) {
    const double w = 14 + text_width(name, 10) + 14;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += line;
    }
    o << "<rect x='" << num(x) << "' y='" << num(y - 9) << "' width='10' height='10' fill='" << colour << "'/><text x='"
      << num(x + 14) << "' y='" << num(y) << "' font-size='10'>" << xml(name) << "</text>\n";
    x += w;
  }
  return entries.empty() ? 0 : y - y0 + line;
}

}  // namespace

namespace {

/// More rectangles than this in a Gantt chart (10^5 CNs is unreadable anyway, and tens of MB of SVG): rows are
/// drawn per pixel column instead, and a memory curve with more steps than twice its width as its envelope.
constexpr std::size_t kMaxRectangles = 4000;

/// A step curve over [0, t_max] in a panel: exact when it has few steps, else per pixel column its value at the
/// column's start, its range within the column (min to max: peaks stay visible) and its value at the end.
std::string step_path(const MemoryTimeline& tl, double x0, double width, double t_max, const std::function<double(double)>& y_of) {
  std::ostringstream path;
  double current = 0;
  path << "M" << num(x0) << " " << num(y_of(0));
  if (tl.steps.size() <= 2 * static_cast<std::size_t>(width)) {
    for (const auto& [t, bits] : tl.steps) {
      const double x = x0 + width * static_cast<double>(t) / t_max;
      path << " L" << num(x) << " " << num(y_of(current)) << " L" << num(x) << " " << num(y_of(static_cast<double>(bits)));
      current = static_cast<double>(bits);
    }
  } else {
    const auto columns = static_cast<std::size_t>(width);
    std::size_t k = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      const double end = t_max * static_cast<double>(c + 1) / static_cast<double>(columns);
      double lo = current, hi = current;
      for (; k < tl.steps.size() && static_cast<double>(tl.steps[k].first) < end; ++k) {
        current = static_cast<double>(tl.steps[k].second);
        lo = std::min(lo, current);
        hi = std::max(hi, current);
      }
      const double x = x0 + static_cast<double>(c);
      path << " L" << num(x) << " " << num(y_of(hi));
      if (lo != hi) path << " L" << num(x) << " " << num(y_of(lo));
      path << " L" << num(x) << " " << num(y_of(current));
    }
  }
  path << " L" << num(x0 + width) << " " << num(y_of(current));
  return path.str();
}

/// One colour per memory use, the same in memory.svg and report.html.
const char* use_colour(MemoryUse u) {
  switch (u) {
    case MemoryUse::activations: return "#aec7e8";
    case MemoryUse::recomputed: return "#ffbb78";
    case MemoryUse::weights: return "#98df8a";
    case MemoryUse::gradients: return "#ff9896";
    case MemoryUse::optimizer_states: return "#c5b0d5";
    case MemoryUse::streaming: return "#c49c94";
    case MemoryUse::other: return "#dbdb8d";
  }
  return "#cccccc";
}

/// A piece of the time axis drawn with one step's composition: exact steps when few, else per pixel column the
/// step holding the most (so the stack reaches the envelope's peaks).
struct StackSegment {
  double x0 = 0, x1 = 0;
  std::size_t step = 0;
};

std::vector<StackSegment> stack_segments(const MemoryTimeline& tl, double x0, double width, double t_max) {
  std::vector<StackSegment> out;
  const std::size_t n = tl.steps.size();
  if (n == 0) return out;
  auto x_of = [&](std::int64_t t) { return x0 + width * static_cast<double>(t) / t_max; };
  if (n <= 2 * static_cast<std::size_t>(width)) {
    for (std::size_t k = 0; k < n; ++k) {
      const double to = k + 1 < n ? x_of(tl.steps[k + 1].first) : x0 + width;
      if (to > x_of(tl.steps[k].first)) out.push_back({x_of(tl.steps[k].first), to, k});
    }
    return out;
  }
  const auto columns = static_cast<std::size_t>(width);
  std::size_t k = 0, current = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    const double end = t_max * static_cast<double>(c + 1) / static_cast<double>(columns);
    std::size_t best = current;
    for (; k < n && static_cast<double>(tl.steps[k].first) < end; ++k) {
      current = k;
      if (tl.steps[k].second > tl.steps[best].second) best = k;
    }
    out.push_back({x0 + static_cast<double>(c), x0 + static_cast<double>(c + 1), best});
  }
  return out;
}

/// The memory held by each use as stacked areas (one path per use; rectangles of equal height merged).
void stacked_uses(std::ostringstream& o, const MemoryTimeline& tl, double x0, double width, double t_max,
                                    const std::function<double(double)>& y_of) {
  if (tl.by_use.empty()) return;
  const std::vector<StackSegment> segments = stack_segments(tl, x0, width, t_max);
  for (std::size_t u = 0; u < kMemoryUses; ++u) {
    std::ostringstream path;
    bool any = false;
    StackSegment open{};
    double open_lo = 0, open_hi = 0;
    auto flush = [&] {
      if (open.x1 > open.x0 && open_hi > open_lo) {
        path << "M" << num(open.x0) << " " << num(y_of(open_lo)) << "H" << num(open.x1) << "V" << num(y_of(open_hi)) << "H"
             << num(open.x0) << "Z";
        any = true;
      }
    };
    for (const StackSegment& sg : segments) {
      const auto& at = tl.by_use[sg.step];
      double lo = 0;
      for (std::size_t v = 0; v < u; ++v) lo += static_cast<double>(at[v]);
      const double hi = lo + static_cast<double>(at[u]);
      if (lo == open_lo && hi == open_hi && sg.x0 <= open.x1 + 1e-9) {
        open.x1 = sg.x1;
        continue;
      }
      flush();
      open = sg;
      open_lo = lo;
      open_hi = hi;
    }
    flush();
    if (any) o << "<path d='" << path.str() << "' fill='" << use_colour(static_cast<MemoryUse>(u)) << "'/>\n";
  }
}

}  // namespace

std::string memory_svg(const PreparedExperiment& p, const RunResult& r) {
  const Accelerator& acc = *p.experiment.accelerator;
  const ScheduleResult& s = r.best;
  struct Panel {
    std::string title;
    const MemoryTimeline* tl;
    double capacity_bytes;  // 0: none drawn
    std::vector<std::pair<std::int64_t, std::int64_t>> recompute;  // when recomputation runs (checkpointing)
  };
  std::vector<Panel> panels;
  for (const CoreInstance& c : acc.cores) {
    panels.push_back(Panel{c.name + " (" + c.core->name + ")", &s.memory[static_cast<std::size_t>(c.id)],
                           static_cast<double>(c.core->resident_capacity_bits()) / 8, {}});
  }
  panels.push_back(Panel{acc.offchip.name + " (off chip)", &s.offchip_memory, static_cast<double>(acc.offchip.size_bits) / 8, {}});
  const double width = 900, left = 78, right = 20, panel_h = 120, gap = 52;
  const double plot_w = width - left - right;
  const double t_max = std::max<double>(1.0, static_cast<double>(s.summary.latency_cycles));
  // The legend: the uses held on any core (stacked under its curve, in this order), then the recompute bands;
  // wrapped into lines above the panels.
  std::vector<std::string> legend_names;
  std::vector<std::string> legend_fills;
  for (std::size_t u = 0; u < kMemoryUses; ++u) {
    const bool held = std::any_of(s.memory.begin(), s.memory.end(), [&](const MemoryTimeline& tl) {
      return std::any_of(tl.by_use.begin(), tl.by_use.end(), [&](const auto& at) { return at[u] != 0; });
    });
    if (!held) continue;
    legend_names.push_back(to_string(static_cast<MemoryUse>(u)));
    legend_fills.push_back(std::string("fill='") + use_colour(static_cast<MemoryUse>(u)) + "'");
  }
  const CNGraph& cns = p.evaluator->cns();
  const bool any_recompute = std::any_of(s.nodes.begin(), s.nodes.end(), [&](const ScheduledNode& n) {
    return p.graph->op(cns.nodes[static_cast<std::size_t>(n.cn)].op).phase == Phase::recompute && n.end > n.start;
  });
  if (any_recompute) {
    legend_names.emplace_back("recomputation running");
    legend_fills.emplace_back("fill='#ff7f0e' fill-opacity='0.25'");
  }
  std::ostringstream legend;
  double lx = left, ly = 34;
  for (std::size_t i = 0; i < legend_names.size(); ++i) {
    const double w = 24 + text_width(legend_names[i], 11);
    if (lx > left && lx + w > width - right) {
      lx = left;
      ly += 16;
    }
    legend << "<rect x='" << num(lx) << "' y='" << num(ly) << "' width='10' height='10' " << legend_fills[i] << "/><text x='"
           << num(lx + 14) << "' y='" << num(ly + 9) << "' font-size='11'>" << xml(legend_names[i]) << "</text>\n";
    lx += w;
  }
  const double top = legend_names.empty() ? 58 : ly + 38;
  const double height = top + static_cast<double>(panels.size()) * (panel_h + gap) + 10;
  // Recompute nodes of a checkpointed training step, as bands behind the curves of their core and of the off-chip
  // memory (merged when less than a pixel apart, so the file stays small).
  for (const ScheduledNode& n : s.nodes) {
    if (p.graph->op(cns.nodes[static_cast<std::size_t>(n.cn)].op).phase != Phase::recompute || n.end <= n.start) continue;
    if (n.core >= 0 && static_cast<std::size_t>(n.core) < acc.cores.size()) {
      panels[static_cast<std::size_t>(n.core)].recompute.emplace_back(n.start, n.end);
    }
    panels.back().recompute.emplace_back(n.start, n.end);
  }
  const auto pixel = static_cast<std::int64_t>(t_max / plot_w) + 1;
  for (Panel& pn : panels) {
    std::sort(pn.recompute.begin(), pn.recompute.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& iv : pn.recompute) {
      if (!merged.empty() && iv.first <= merged.back().second + pixel) merged.back().second = std::max(merged.back().second, iv.second);
      else merged.push_back(iv);
    }
    pn.recompute = std::move(merged);
  }
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << num(width / 2) << "' y='24' font-size='15' text-anchor='middle'>" << xml(p.experiment.name)
    << ": data held in memory over time</text>\n";
  o << legend.str();
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Panel& pn = panels[i];
    const double y0 = top + static_cast<double>(i) * (panel_h + gap);
    double peak = 0;
    for (const auto& [t, bits] : pn.tl->steps) peak = std::max(peak, static_cast<double>(bits) / 8);
    // The capacity line shows when it is within reach of the curve (a 10 GB DRAM would flatten a 5 kB curve), or
    // when nothing is held (an idle core's flat line then sits under its capacity).
    const bool show_capacity = pn.capacity_bytes > 0 && (peak == 0 || pn.capacity_bytes < 4 * peak);
    const double y_max = std::max({peak, show_capacity ? pn.capacity_bytes : 0.0, 8.0}) * 1.08;
    auto y_of = [&](double bits) { return y0 + panel_h - panel_h * (bits / 8) / y_max; };
    std::string title = pn.title + " — peak " + si(peak, "B");
    if (pn.capacity_bytes > 0) title += ", capacity " + si(pn.capacity_bytes, "B") + (show_capacity ? " (dashed)" : "");
    o << "<text x='" << num(left) << "' y='" << num(y0 - 8) << "' font-size='12'>" << xml(title) << "</text>\n";
    o << "<rect x='" << num(left) << "' y='" << num(y0) << "' width='" << num(plot_w) << "' height='" << num(panel_h)
      << "' fill='#fafafa' stroke='#999'/>\n";
    const double ystep = std::max(1.0, nice_step(y_max, 4));  // whole bytes
    for (double v = 0; v <= y_max + 1e-9; v += ystep) {
      const double y = y0 + panel_h - panel_h * v / y_max;
      o << "<line x1='" << num(left - 4) << "' y1='" << num(y) << "' x2='" << num(left) << "' y2='" << num(y)
        << "' stroke='#333'/><text x='" << num(left - 6) << "' y='" << num(y + 3) << "' font-size='10' text-anchor='end'>"
        << si(v, "B", 3) << "</text>\n";
    }
    for (const auto& [from, to] : pn.recompute) {
      const double x = left + plot_w * static_cast<double>(from) / t_max;
      o << "<rect x='" << num(x) << "' y='" << num(y0) << "' width='"
        << num(std::max(0.5, plot_w * static_cast<double>(to - from) / t_max)) << "' height='" << num(panel_h)
        << "' fill='#ff7f0e' fill-opacity='0.25'/>\n";
    }
    stacked_uses(o, *pn.tl, left, plot_w, t_max, y_of);
    if (show_capacity) {
      const double y = y0 + panel_h - panel_h * pn.capacity_bytes / y_max;
      o << "<line x1='" << num(left) << "' y1='" << num(y) << "' x2='" << num(left + plot_w) << "' y2='" << num(y)
        << "' stroke='#d62728' stroke-dasharray='4 3'/>\n";
    }
    o << "<path d='" << step_path(*pn.tl, left, plot_w, t_max, y_of) << "' fill='none' stroke='#1f77b4' stroke-width='1.2'/>\n";
    x_axis(o, left, y0 + panel_h, plot_w, t_max);
  }
  o << "<text x='" << num(left + plot_w / 2) << "' y='" << num(height - 8) << "' font-size='11' text-anchor='middle'>cycles</text>\n";
  o << "</svg>\n";
  return o.str();
}

std::string schedule_svg(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  const ScheduleResult& s = r.best;
  std::vector<std::string> labels;
  for (const CoreInstance& c : acc.cores) labels.push_back(c.name + " (" + c.core->name + ")");
  for (const Link& l : acc.links) labels.push_back(l.name);
  double label_w = 0;
  for (const std::string& l : labels) label_w = std::max(label_w, text_width(l, 11));
  const double width = 1000, left = label_w + 16, right = 20, row_h = 22;
  const double plot_w = width - left - right;
  const double t_max = std::max<double>(1.0, static_cast<double>(s.summary.latency_cycles));
  auto x_of = [&](std::int64_t t) { return left + plot_w * static_cast<double>(t) / t_max; };
  auto drawn = [](std::int64_t start, std::int64_t end, int row) { return row >= 0 && end > start; };

  std::size_t rectangles = 0;
  std::map<std::string, std::string> kinds, causes;  // legend: what is drawn
  for (const ScheduledNode& n : s.nodes) {
    if (!drawn(n.start, n.end, n.core)) continue;
    ++rectangles;
    const OpKind k = g.op(cns.nodes[static_cast<std::size_t>(n.cn)].op).kind;
    kinds[to_string(k)] = kind_colour(k);
  }
  for (const Transfer& t : s.transfers) {
    if (!drawn(t.start, t.end, t.link)) continue;
    ++rectangles;
    causes[to_string(t.cause) + " (link)"] = cause_colour(t.cause);
  }
  const bool aggregated = rectangles > kMaxRectangles;
  const double top = aggregated ? 56 : 40;  // room for the subtitle saying how it is drawn

  std::ostringstream body;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double y = top + static_cast<double>(i) * row_h;
    body << "<rect x='" << num(left) << "' y='" << num(y) << "' width='" << num(plot_w) << "' height='" << num(row_h - 2)
         << "' fill='" << (i % 2 ? "#f4f4f4" : "#fafafa") << "'/><text x='" << num(left - 6) << "' y='" << num(y + row_h / 2 + 3)
         << "' font-size='11' text-anchor='end'>" << xml(labels[i]) << "</text>\n";
  }
  const double bar = row_h - 4;
  auto link_share = [&](const Transfer& t) {
    return std::clamp(t.bandwidth / acc.links[static_cast<std::size_t>(t.link)].bandwidth_bits_per_cycle, 0.0, 1.0);
  };
  if (aggregated) {
    // Per pixel column: a core's bar is as high as the share of the column it is busy, coloured by the kind that
    // dominates; a link's as high as its average share of bandwidth in use, coloured by the dominant cause.
    const auto columns = static_cast<std::size_t>(plot_w);
    std::vector<ColumnBins> rows(labels.size(), ColumnBins(columns, t_max));
    for (const ScheduledNode& n : s.nodes) {
      if (!drawn(n.start, n.end, n.core)) continue;
      rows[static_cast<std::size_t>(n.core)].add(n.start, n.end, 1.0, kind_colour(g.op(cns.nodes[static_cast<std::size_t>(n.cn)].op).kind));
    }
    for (const Transfer& t : s.transfers) {
      if (!drawn(t.start, t.end, t.link)) continue;
      rows[acc.cores.size() + static_cast<std::size_t>(t.link)].add(t.start, t.end, link_share(t), cause_colour(t.cause));
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double y = top + static_cast<double>(i) * row_h + 1;
      for (const ColumnBins::Run& run : rows[i].runs(static_cast<int>(bar))) {
        const double h = bar * run.height;
        body << "<rect x='" << num(left + static_cast<double>(run.from)) << "' y='" << num(y + bar - h) << "' width='"
             << num(static_cast<double>(run.to - run.from)) << "' height='" << num(h) << "' fill='" << run.colour << "'/>\n";
      }
    }
  } else {
    for (const ScheduledNode& n : s.nodes) {
      if (!drawn(n.start, n.end, n.core)) continue;
      const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
      const Operator& op = g.op(cn.op);
      const double y = top + static_cast<double>(n.core) * row_h + 1;
      body << "<rect x='" << num(x_of(n.start)) << "' y='" << num(y) << "' width='" << num(std::max(0.3, x_of(n.end) - x_of(n.start)))
           << "' height='" << num(bar) << "' fill='" << kind_colour(op.kind) << "'><title>" << xml(cn_name(g, cn)) << " ["
           << n.start << ", " << n.end << ")</title></rect>\n";
    }
    for (const Transfer& t : s.transfers) {
      if (!drawn(t.start, t.end, t.link)) continue;
      const double row = static_cast<double>(acc.cores.size() + static_cast<std::size_t>(t.link));
      const double y = top + row * row_h + 1;
      const double h = bar * std::max(0.05, link_share(t));  // height: the share of the link's bandwidth in use
      body << "<rect x='" << num(x_of(t.start)) << "' y='" << num(y + bar - h) << "' width='"
           << num(std::max(0.3, x_of(t.end) - x_of(t.start))) << "' height='" << num(h) << "' fill='" << cause_colour(t.cause)
           << "' fill-opacity='0.85'><title>" << to_string(t.cause) << " "
           << xml(t.tensor == kNone ? std::string() : g.tensor(t.tensor).name) << " " << t.bits << " bits "
           << acc.endpoint_name(t.from) << " -> " << acc.endpoint_name(t.to) << "</title></rect>\n";
    }
  }
  const double axis_y = top + static_cast<double>(labels.size()) * row_h;
  x_axis(body, left, axis_y, plot_w, t_max);
  body << "<text x='" << num(left + plot_w / 2) << "' y='" << num(axis_y + 32) << "' font-size='11' text-anchor='middle'>cycles</text>\n";
  std::vector<std::pair<std::string, std::string>> entries(kinds.begin(), kinds.end());
  entries.insert(entries.end(), causes.begin(), causes.end());
  const double legend_h = legend(body, entries, left, axis_y + 52, plot_w);
  const double height = axis_y + 52 + legend_h + 4;

  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << num(width / 2) << "' y='24' font-size='15' text-anchor='middle'>" << xml(p.experiment.name)
    << ": schedule (" << with_thousands(s.summary.latency_cycles) << " cycles)</text>\n";
  if (aggregated) {
    o << "<text x='" << num(width / 2) << "' y='42' font-size='11' text-anchor='middle' fill='#555'>"
      << with_thousands(static_cast<long long>(rectangles))
      << " CNs and transfers, drawn per pixel column: height = share busy (cores) or of bandwidth (links), "
         "colour = the dominant kind or cause</text>\n";
  }
  o << body.str() << "</svg>\n";
  return o.str();
}

}  // namespace monet
