#include "monet/report/search_report.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "json_parts.hpp"
#include "monet/search/pareto.hpp"
#include "monet/util/version.hpp"
#include "svg.hpp"

namespace monet {

using json = nlohmann::ordered_json;

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/// Doubles as the shortest text that reads back to the same value.
std::string exact(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {  // whole numbers as integers: 46515700, not 4.65157e+07
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string csv_header(const DesignSpace& space) {
  std::string h = "id,batch";
  for (const Gene& g : space.genes) h += "," + csv_field(g.name);
  for (const Objective& o : space.objectives) h += "," + csv_field(o.key);
  return h + ",feasible,violation,reason\n";
}

std::string csv_row(const DesignSpace& space, const SearchResult& r, std::size_t i) {
  const Evaluation& e = r.archive[i];
  std::string row = std::to_string(i) + "," + std::to_string(r.first_batch[i]);
  for (std::size_t g = 0; g < space.genes.size(); ++g) {
    row += "," + csv_field(space.genes[g].labels[static_cast<std::size_t>(e.point.genes[g])]);
  }
  for (std::size_t k = 0; k < e.objectives.size(); ++k) row += "," + exact(space.objectives[k].value(e.objectives[k]));
  row += std::string(",") + (e.feasible() ? "true" : "false") + "," + exact(e.violation) + "," + csv_field(e.reason);
  return row + "\n";
}

/// An objective value in the unit a plot shows: pJ as J (SI prefixes then read naturally).
std::pair<double, std::string> display(double v, const std::string& unit) {
  if (unit == "pJ") return {v * 1e-12, "J"};
  return {v, unit};
}

}  // namespace

std::string evaluations_csv(const DesignSpace& space, const SearchResult& r) {
  std::string out = csv_header(space);
  for (std::size_t i = 0; i < r.archive.size(); ++i) out += csv_row(space, r, i);
  return out;
}

std::string pareto_csv(const DesignSpace& space, const SearchResult& r) {
  std::string out = csv_header(space);
  for (std::size_t i : pareto_front(r.archive)) out += csv_row(space, r, i);
  return out;
}

std::string journal_line(const SearchBatch& batch) {
  json points = json::array(), results = json::array();
  for (const Evaluation& e : batch.evaluations) {
    points.push_back(e.point.genes);
    json objectives = json::array();
    for (double v : e.objectives) objectives.push_back(exact(v));
    json result{{"objectives", objectives}, {"violation", exact(e.violation)}, {"reason", e.reason}};
    if (!e.quality.empty()) {
      json quality = json::array();
      for (double v : e.quality) quality.push_back(exact(v));
      result["quality"] = quality;
    }
    results.push_back(std::move(result));
  }
  return json{{"points", points}, {"results", results}}.dump() + "\n";
}

std::string journal_jsonl(const SearchResult& r) {
  std::string out;
  for (const SearchBatch& b : r.batches) out += journal_line(b);
  return out;
}

std::vector<SearchBatch> read_journal(const std::string& text, const std::string& file, const DesignSpace& space) {
  std::vector<SearchBatch> out;
  std::istringstream in(text);
  std::string line;
  std::uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const SourceLocation where{file, number};
    try {
      const json j = json::parse(line);
      SearchBatch batch;
      const json& points = j.at("points");
      const json& results = j.at("results");
      if (points.size() != results.size()) throw UserError(where, "points and results differ in number");
      for (std::size_t i = 0; i < points.size(); ++i) {
        Evaluation e;
        e.point.genes = points[i].get<std::vector<std::int32_t>>();
        if (e.point.genes.size() != space.genes.size()) {
          throw UserError(where, "a point has " + std::to_string(e.point.genes.size()) + " genes; the space has " +
                                     std::to_string(space.genes.size()));
        }
        for (const json& v : results[i].at("objectives")) e.objectives.push_back(std::strtod(v.get<std::string>().c_str(), nullptr));
        e.violation = std::strtod(results[i].at("violation").get<std::string>().c_str(), nullptr);
        e.reason = results[i].at("reason").get<std::string>();
        if (results[i].contains("quality")) {
          for (const json& v : results[i].at("quality")) e.quality.push_back(std::strtod(v.get<std::string>().c_str(), nullptr));
        }
        batch.evaluations.push_back(std::move(e));
      }
      out.push_back(std::move(batch));
    } catch (const json::exception& e) {
      // A line cut by a killed run ends the journal; anything else is damage.
      if (in.peek() == std::char_traits<char>::eof()) break;
      throw UserError(where, std::string("the search journal is damaged: ") + e.what());
    }
  }
  return out;
}

std::string search_json(const Experiment& e, const DesignSpace& space, const SearchResult& r,
                        const DesignEvaluator::Stats& stats, const Registry* registry) {
  json genes = json::array();
  for (const Gene& g : space.genes) {
    genes.push_back(json{{"name", g.name}, {"key", g.key}, {"group", to_string(g.group)}, {"values", g.labels},
                         {"configured", g.labels[static_cast<std::size_t>(g.configured)]}, {"ordinal", g.ordinal}});
  }
  json objectives = json::array();
  for (const Objective& o : space.objectives) objectives.push_back(json{{"key", o.key}, {"unit", o.unit}, {"maximise", o.maximise}});
  // Hypervolume per batch under one normalisation (the feasible range of the whole archive).
  const Normalisation n = normalisation(r.archive);
  const std::vector<double> hv = hypervolume_per_batch(r, n);
  std::size_t feasible = 0;
  for (const Evaluation& ev : r.archive) feasible += ev.feasible() ? 1 : 0;
  json j;
  j["schema"] = "monet.search/1";
  j["experiment"] = e.name;
  j["plugin"] = e.search.name();
  j["plugin_version"] = e.search.info().version;
  json params = json::object();
  for (const auto& [name, entry] : e.search.params.entries()) params[name] = to_string(entry.value);
  j["parameters"] = params;
  j["seed"] = e.seed;
  j["space"] = json{{"genes", genes}, {"objectives", objectives}, {"constraints", space.constraints},
                    {"size", space.size()}};
  j["stopped"] = r.stopped;
  if (!r.failure.empty()) j["failure"] = r.failure;
  j["batches"] = r.batches.size();
  j["evaluations_requested"] = r.requested;
  j["evaluations"] = r.archive.size();
  j["feasible"] = feasible;
  j["pareto_front"] = pareto_front(r.archive).size();
  j["hypervolume_normalised"] = hv.empty() ? 0.0 : hv.back();
  j["hypervolume_per_batch"] = hv;
  j["normalisation"] = json{{"ideal", n.ideal}, {"nadir", n.nadir}, {"reference", 1.1}};
  j["variants_prepared"] = stats.variants;
  j["graphs_built"] = stats.graphs;
  const double lookups = static_cast<double>(stats.cost_hits + stats.cost_misses);
  j["cost_cache"] = json{{"hits", stats.cost_hits}, {"misses", stats.cost_misses},
                         {"hit_rate", lookups > 0 ? static_cast<double>(stats.cost_hits) / lookups : 0.0}};
  // Load balance (docs/distributed.md): one entry per process that evaluated (one without mpirun).
  json ranks = json::array();
  for (const RankLoad& l : r.ranks) ranks.push_back(json{{"rank", l.rank}, {"points", l.points}, {"busy_s", l.busy_s}});
  j["ranks"] = ranks;
  j["provenance"] = detail::provenance_json(e);
  if (registry) j["provenance"]["plugins_found"] = detail::plugins_found_json(*registry);
  return j.dump(1) + "\n";
}

namespace {

struct Panel {
  double x0, y0, w, h;
};

/// One scatter panel: objective a (x) against b (y).
void scatter(std::ostringstream& out, const Panel& p, const DesignSpace& space, const SearchResult& r, std::size_t a,
             std::size_t b, const std::vector<bool>& on_front) {
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const Evaluation& e : r.archive) {
    if (!std::isfinite(e.objectives[a]) || !std::isfinite(e.objectives[b])) continue;
    const double x = display(space.objectives[a].value(e.objectives[a]), space.objectives[a].unit).first;
    const double y = display(space.objectives[b].value(e.objectives[b]), space.objectives[b].unit).first;
    xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  }
  if (!std::isfinite(xmin)) xmin = ymin = 0, xmax = ymax = 1;
  const auto xt = svg::ticks(xmin, xmax), yt = svg::ticks(ymin, ymax);
  const double xl = xt.front(), xh = xt.back(), yl = yt.front(), yh = yt.back();
  auto X = [&](double v) { return p.x0 + (xh > xl ? (v - xl) / (xh - xl) : 0.5) * p.w; };
  auto Y = [&](double v) { return p.y0 + p.h - (yh > yl ? (v - yl) / (yh - yl) : 0.5) * p.h; };
  out << "<rect x='" << p.x0 << "' y='" << p.y0 << "' width='" << p.w << "' height='" << p.h
      << "' fill='none' stroke='#999'/>\n";
  const std::string xu = display(1, space.objectives[a].unit).second, yu = display(1, space.objectives[b].unit).second;
  for (double t : xt) {
    out << "<line x1='" << X(t) << "' y1='" << p.y0 + p.h << "' x2='" << X(t) << "' y2='" << p.y0 + p.h + 4
        << "' stroke='#999'/><text x='" << X(t) << "' y='" << p.y0 + p.h + 16 << "' font-size='10' text-anchor='middle'>"
        << svg::xml(svg::tick_label(t, xu, xt)) << "</text>\n";
  }
  for (double t : yt) {
    out << "<line x1='" << p.x0 - 4 << "' y1='" << Y(t) << "' x2='" << p.x0 << "' y2='" << Y(t)
        << "' stroke='#999'/><text x='" << p.x0 - 6 << "' y='" << Y(t) + 3 << "' font-size='10' text-anchor='end'>"
        << svg::xml(svg::tick_label(t, yu, yt)) << "</text>\n";
  }
  out << "<text x='" << p.x0 + p.w / 2 << "' y='" << p.y0 + p.h + 32 << "' font-size='11' text-anchor='middle'>"
      << svg::xml(space.objectives[a].key) << "</text>\n";
  out << "<text transform='translate(" << p.x0 - 84 << "," << p.y0 + p.h / 2 << ") rotate(-90)' font-size='11' "
      << "text-anchor='middle'>" << svg::xml(space.objectives[b].key) << "</text>\n";
  // Infeasible points (that were scheduled) as crosses, feasible ones as grey dots, the front on top in colour.
  for (int layer = 0; layer < 3; ++layer) {
    for (std::size_t i = 0; i < r.archive.size(); ++i) {
      const Evaluation& e = r.archive[i];
      if (!std::isfinite(e.objectives[a]) || !std::isfinite(e.objectives[b])) continue;
      const int kind = on_front[i] ? 2 : (e.feasible() ? 1 : 0);
      if (kind != layer) continue;
      const double x = X(display(space.objectives[a].value(e.objectives[a]), space.objectives[a].unit).first);
      const double y = Y(display(space.objectives[b].value(e.objectives[b]), space.objectives[b].unit).first);
      if (kind == 0) {
        out << "<path d='M" << x - 2 << " " << y - 2 << "l4 4m0 -4l-4 4' stroke='#d62728' stroke-width='0.8'/>\n";
      } else if (kind == 1) {
        out << "<circle cx='" << x << "' cy='" << y << "' r='1.8' fill='#9a9a9a' fill-opacity='0.6'/>\n";
      } else {
        out << "<circle cx='" << x << "' cy='" << y << "' r='3.2' fill='#1f77b4' stroke='#fff' stroke-width='0.6'/>\n";
      }
    }
  }
}

}  // namespace

std::string pareto_svg(const DesignSpace& space, const SearchResult& r) {
  const std::size_t m = space.objectives.size();
  std::vector<bool> on_front(r.archive.size(), false);
  for (std::size_t i : pareto_front(r.archive)) on_front[i] = true;
  const double panel = m <= 2 ? 420 : 260;
  const std::size_t cols = m <= 2 ? 1 : m - 1;
  const double width = std::max(660.0, 40 + static_cast<double>(cols) * (panel + 120)), height = 80 + static_cast<double>(cols) * (panel + 60);
  std::ostringstream out;
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  std::size_t feasible = 0;
  for (const Evaluation& e : r.archive) feasible += e.feasible() ? 1 : 0;
  out << "<text x='20' y='24' font-size='14'>" << r.archive.size() << " points evaluated (" << feasible
      << " feasible), Pareto front of " << std::count(on_front.begin(), on_front.end(), true)
      << " in blue; crosses: infeasible</text>\n";
  if (m == 1) {
    out << "</svg>\n";
    return out.str();
  }
  // Panel (a, b) for a < b: the lower triangle of a scatter matrix.
  for (std::size_t a = 0; a + 1 < m; ++a) {
    for (std::size_t b = a + 1; b < m; ++b) {
      const Panel p{110 + static_cast<double>(a) * (panel + 120), 50 + static_cast<double>(b - 1) * (panel + 60), panel, panel};
      scatter(out, p, space, r, a, b, on_front);
    }
  }
  out << "</svg>\n";
  return out.str();
}

std::string convergence_svg(const DesignSpace& space, const SearchResult& r) {
  // Hypervolume per batch (normalised by the whole archive) and each objective's best feasible value per batch,
  // scaled to [0, 1] of its range.
  const Normalisation n = normalisation(r.archive);
  const std::size_t batches = r.batches.size(), m = space.objectives.size();
  const std::vector<double> hv = hypervolume_per_batch(r, n);
  std::vector<std::vector<double>> best(m);
  std::vector<double> running(m, std::numeric_limits<double>::infinity());
  std::size_t next = 0;
  for (std::size_t b = 0; b < batches; ++b) {
    while (next < r.archive.size() && r.first_batch[next] <= b) {
      const Evaluation& e = r.archive[next++];
      if (!e.feasible()) continue;
      for (std::size_t k = 0; k < m; ++k) running[k] = std::min(running[k], e.objectives[k]);
    }
    for (std::size_t k = 0; k < m; ++k) {
      best[k].push_back(std::isfinite(running[k]) && !n.ideal.empty() ? n.apply(running)[k] : std::nan(""));
    }
  }
  const double W = 640, H = 220, x0 = 70, gap = 70;
  std::ostringstream out;
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W + 180 << "' height='" << 2 * H + 3 * gap
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  // Returns the axis top (the last tick), which the lines are scaled to.
  auto axes = [&](double y0, const std::string& title, double ymax, const std::string& ylabel) {
    const std::vector<double> yt = svg::ticks(0, ymax);
    ymax = yt.back();
    out << "<text x='" << x0 << "' y='" << y0 - 12 << "' font-size='13'>" << svg::xml(title) << "</text>\n";
    out << "<rect x='" << x0 << "' y='" << y0 << "' width='" << W << "' height='" << H << "' fill='none' stroke='#999'/>\n";
    for (double t : svg::ticks(0, std::max<double>(1, static_cast<double>(batches)))) {
      const double x = x0 + t / std::max<double>(1, static_cast<double>(batches)) * W;
      out << "<text x='" << x << "' y='" << y0 + H + 16 << "' font-size='10' text-anchor='middle'>" << svg::num(t) << "</text>\n";
    }
    for (double t : yt) {
      const double y = y0 + H - t / ymax * H;
      out << "<text x='" << x0 - 6 << "' y='" << y + 3 << "' font-size='10' text-anchor='end'>" << svg::num(t) << "</text>\n";
    }
    out << "<text x='" << x0 + W / 2 << "' y='" << y0 + H + 32 << "' font-size='11' text-anchor='middle'>batch (generation)</text>\n";
    out << "<text transform='translate(" << x0 - 44 << "," << y0 + H / 2 << ") rotate(-90)' font-size='11' text-anchor='middle'>"
        << svg::xml(ylabel) << "</text>\n";
    return ymax;
  };
  auto line = [&](double y0, const std::vector<double>& v, double ymax, const char* colour) {
    std::string d;
    for (std::size_t b = 0; b < v.size(); ++b) {
      if (!std::isfinite(v[b])) continue;
      const double x = x0 + static_cast<double>(b + 1) / std::max<double>(1, static_cast<double>(batches)) * W;
      const double y = y0 + H - std::clamp(v[b] / ymax, 0.0, 1.0) * H;
      d += (d.empty() ? "M" : "L") + svg::num(x) + " " + svg::num(y);
    }
    if (!d.empty()) out << "<path d='" << d << "' fill='none' stroke='" << colour << "' stroke-width='1.6'/>\n";
  };
  const double hv_max = axes(gap, "Hypervolume of the feasible front (objectives normalised by the archive's range, "
                                  "reference 1.1)", std::pow(1.1, static_cast<double>(m)), "hypervolume");
  line(gap, hv, hv_max, "#1f77b4");
  (void)axes(2 * gap + H, "Best value so far of each objective (0 = best in the archive, 1 = worst)", 1.0, "normalised");
  static const char* colours[] = {"#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
  for (std::size_t k = 0; k < m; ++k) {
    const char* c = colours[k % 6];
    line(2 * gap + H, best[k], 1.0, c);
    out << "<rect x='" << x0 + W + 14 << "' y='" << 2 * gap + H + 8 + 18.0 * static_cast<double>(k) << "' width='12' height='4' fill='"
        << c << "'/><text x='" << x0 + W + 30 << "' y='" << 2 * gap + H + 14 + 18.0 * static_cast<double>(k)
        << "' font-size='10'>" << svg::xml(space.objectives[k].key) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace monet
