// `monet compare-stream TRACE RESULTS`: a monet run against Stream's per-CN trace (tests/data/stream/cn_trace_*.json.gz,
// fields in cn_trace_README.md there), computation node by computation node. CNs are matched by operator name,
// core and tile (the ranges of the loop dimensions each side cuts); CNs of an operator and core whose tiles differ
// (Stream pads ReLU tiles) are matched in order. Reports totals, per-layer runtime/energy/start differences and
// the critical path of both schedules; --json writes every number for tests and scripts.
#include "compare_stream.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "monet/util/error.hpp"

namespace monet::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;  // cut ranges, sorted: the tile's key

struct Node {
  std::string op;
  std::string core;
  double start = 0, end = 0, energy = 0;
  Ranges tile;
  int match = -1;  // index into the other side's nodes
  double runtime() const { return end - start; }
};

/// A whole file, gunzipped when it is gzip (zlib reads plain files unchanged).
std::string read_maybe_gzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw UserError(SourceLocation{path.string()}, "cannot open the file");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw UserError(SourceLocation{path.string()}, "not a readable gzip or text file");
  return out;
}

/// RFC 4180 rows (quoted fields may hold commas and doubled quotes).
std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(SourceLocation{path.string()}, "cannot open the file (is it a monet results folder?)");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

/// "op[K 0:16, OY 3:4]" -> the cut ranges.
Ranges ranges_of_name(const std::string& name) {
  Ranges r;
  const auto open = name.rfind('[');
  if (open == std::string::npos || name.back() != ']') return r;
  std::stringstream ss(name.substr(open + 1, name.size() - open - 2));
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto sp = part.rfind(' ');
    const auto colon = part.rfind(':');
    if (sp == std::string::npos || colon == std::string::npos || colon < sp) continue;
    r.emplace_back(std::stoll(part.substr(sp + 1, colon - sp - 1)), std::stoll(part.substr(colon + 1)));
  }
  std::sort(r.begin(), r.end());
  return r;
}

std::vector<Node> monet_nodes(const fs::path& results) {
  const auto rows = read_csv(results / "schedule.csv");
  if (rows.empty()) throw UserError(SourceLocation{(results / "schedule.csv").string()}, "empty table");
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  for (const char* c : {"name", "operator", "kind", "core", "start_cycle", "end_cycle", "energy_pj"}) {
    if (!col.contains(c)) {
      throw UserError(SourceLocation{(results / "schedule.csv").string(), 1, 1}, std::string("no column '") + c + "'");
    }
  }
  std::vector<Node> out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.size() < rows[0].size()) {
      throw UserError(SourceLocation{(results / "schedule.csv").string(), static_cast<std::uint32_t>(i + 1), 1}, "short row");
    }
    if (r[col["kind"]] == "view") continue;  // Stream's Flatten is no CN either
    Node n;
    n.op = r[col["operator"]];
    n.core = r[col["core"]];
    n.start = std::stod(r[col["start_cycle"]]);
    n.end = std::stod(r[col["end_cycle"]]);
    n.energy = std::stod(r[col["energy_pj"]]);
    n.tile = ranges_of_name(r[col["name"]]);
    out.push_back(std::move(n));
  }
  return out;
}

/// Stream's CNs; a tile's key is the ranges of the dimensions its layer cuts (not the derived IX/IY halos).
std::vector<Node> stream_nodes(const json& trace) {
  std::map<std::string, std::map<std::string, std::pair<std::int64_t, std::int64_t>>> extent;  // layer -> dim -> hull
  for (const json& c : trace.at("cns")) {
    for (const auto& [dim, r] : c.at("loop_ranges").items()) {
      auto [it, fresh] = extent[c.at("name").get<std::string>()].try_emplace(dim, r[0].get<std::int64_t>(), r[1].get<std::int64_t>());
      if (!fresh) {
        it->second.first = std::min(it->second.first, r[0].get<std::int64_t>());
        it->second.second = std::max(it->second.second, r[1].get<std::int64_t>());
      }
    }
  }
  std::vector<Node> out;
  for (const json& c : trace.at("cns")) {
    Node n;
    n.op = c.at("name").get<std::string>();
    n.core = "core" + std::to_string(c.at("core").get<int>());
    n.start = c.at("start").get<double>();
    n.end = c.at("end").get<double>();
    n.energy = c.at("onchip_energy").get<double>() + c.at("offchip_energy").get<double>();
    for (const auto& [dim, r] : c.at("loop_ranges").items()) {
      if (dim == "IX" || dim == "IY") continue;
      const auto hull = extent[n.op][dim];
      const std::pair<std::int64_t, std::int64_t> range{r[0].get<std::int64_t>(), r[1].get<std::int64_t>()};
      if (range != hull) n.tile.push_back(range);
    }
    std::sort(n.tile.begin(), n.tile.end());
    out.push_back(std::move(n));
  }
  return out;
}

/// Matches by (operator, core, tile), then the rest of each (operator, core) in start order. Returns the number
/// matched by tile.
int match(std::vector<Node>& a, std::vector<Node>& b) {
  std::map<std::pair<std::string, std::string>, std::vector<int>> by_group;
  std::map<std::tuple<std::string, std::string, Ranges>, std::vector<int>> by_tile;
  for (std::size_t j = 0; j < b.size(); ++j) by_tile[{b[j].op, b[j].core, b[j].tile}].push_back(static_cast<int>(j));
  int exact = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto it = by_tile.find({a[i].op, a[i].core, a[i].tile});
    if (it == by_tile.end() || it->second.empty()) continue;
    const int j = it->second.front();
    it->second.erase(it->second.begin());
    a[i].match = j;
    b[static_cast<std::size_t>(j)].match = static_cast<int>(i);
    ++exact;
  }
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<int>, std::vector<int>>> rest;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].match < 0) rest[{a[i].op, a[i].core}].first.push_back(static_cast<int>(i));
  }
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (b[j].match < 0) rest[{b[j].op, b[j].core}].second.push_back(static_cast<int>(j));
  }
  for (auto& [key, lists] : rest) {
    auto& [ia, ib] = lists;
    auto by_start = [](const std::vector<Node>& v) {
      return [&v](int x, int y) { return v[static_cast<std::size_t>(x)].start < v[static_cast<std::size_t>(y)].start; };
    };
    std::sort(ia.begin(), ia.end(), by_start(a));
    std::sort(ib.begin(), ib.end(), by_start(b));
    for (std::size_t k = 0; k < std::min(ia.size(), ib.size()); ++k) {
      a[static_cast<std::size_t>(ia[k])].match = ib[k];
      b[static_cast<std::size_t>(ib[k])].match = ia[k];
    }
  }
  return exact;
}

/// The chain that sets the latency: from the CN that ends last, back to the CN (any core) that ended latest
/// at or before each one's start; the gaps between them are waits (transfers, barriers). Cycles per operator.
json critical_path(const std::vector<Node>& v) {
  std::vector<int> order(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return v[static_cast<std::size_t>(x)].end < v[static_cast<std::size_t>(y)].end; });
  std::map<std::string, double> busy;
  std::vector<std::string> ops_in_order;
  double waits = 0;
  int cns = 0;
  if (order.empty()) return json::object();
  std::size_t at = order.size() - 1;
  const double length = v[static_cast<std::size_t>(order[at])].end;
  while (true) {
    const Node& n = v[static_cast<std::size_t>(order[at])];
    ++cns;
    if (!busy.contains(n.op)) ops_in_order.push_back(n.op);
    busy[n.op] += n.runtime();
    // The latest end at or before this start (ends are sorted: binary search).
    auto it = std::upper_bound(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(at), n.start,
                               [&](double s, int k) { return s < v[static_cast<std::size_t>(k)].end; });
    if (it == order.begin()) {
      waits += n.start;
      break;
    }
    const std::size_t prev = static_cast<std::size_t>(it - order.begin()) - 1;
    waits += n.start - v[static_cast<std::size_t>(order[prev])].end;
    at = prev;
  }
  json ops = json::array();
  for (auto it = ops_in_order.rbegin(); it != ops_in_order.rend(); ++it) ops.push_back({{"operator", *it}, {"cycles", busy[*it]}});
  return {{"length_cycles", length}, {"cns", cns}, {"wait_cycles", waits}, {"operators", ops}};
}

std::string fixed(double x, int digits = 0) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << x;
  return s.str();
}

std::string pct(double a, double b) { return b == 0 ? "-" : (a >= b ? "+" : "") + fixed(100.0 * (a / b - 1.0), 1) + "%"; }

}  // namespace

int compare_stream_command(const CompareStreamOptions& o) {
  json trace;
  try {
    trace = json::parse(read_maybe_gzip(o.trace));
  } catch (const json::exception& e) {
    throw UserError(SourceLocation{o.trace}, std::string("not a Stream CN trace: ") + e.what());
  }
  if (!trace.contains("cns") || !trace.contains("meta")) throw UserError(SourceLocation{o.trace}, "not a Stream CN trace: no 'cns'/'meta'");
  const fs::path results = o.results;
  std::ifstream rin(results / "results.json");
  if (!rin) throw UserError(SourceLocation{(results / "results.json").string()}, "cannot open the file (is it a monet results folder?)");
  const json run = json::parse(rin);

  std::vector<Node> m = monet_nodes(results);
  std::vector<Node> s = stream_nodes(trace);
  const int by_tile = match(m, s);

  // Per operator, in Stream's order of first start.
  struct Layer {
    std::string op;
    int cns_m = 0, cns_s = 0, matched = 0, within = 0;
    double run_m = 0, run_s = 0, e_m = 0, e_s = 0;
    double first_m = INFINITY, first_s = INFINITY, last_m = 0, last_s = 0;
  };
  std::map<std::string, Layer> layers;
  std::vector<std::string> order;
  for (const Node& n : s) {
    if (!layers.contains(n.op)) order.push_back(n.op);
    Layer& l = layers[n.op];
    l.op = n.op;
    ++l.cns_s;
    l.run_s += n.runtime();
    l.e_s += n.energy;
    l.first_s = std::min(l.first_s, n.start);
    l.last_s = std::max(l.last_s, n.end);
  }
  int matched = 0, within = 0;
  for (const Node& n : m) {
    if (!layers.contains(n.op)) order.push_back(n.op);
    Layer& l = layers[n.op];
    l.op = n.op;
    ++l.cns_m;
    l.run_m += n.runtime();
    l.e_m += n.energy;
    l.first_m = std::min(l.first_m, n.start);
    l.last_m = std::max(l.last_m, n.end);
    if (n.match < 0) continue;
    ++l.matched;
    ++matched;
    const double rs = s[static_cast<std::size_t>(n.match)].runtime();
    if (std::abs(n.runtime() - rs) <= 0.01 * rs) {
      ++l.within;
      ++within;
    }
  }

  const double lat_m = run.at("latency_cycles").get<double>(), lat_s = trace["meta"]["latency_cycles"].get<double>();
  const double e_m = run.at("energy_pj").get<double>(), e_s = trace["meta"]["energy_pJ"].get<double>();
  json out;
  out["trace"] = o.trace;
  out["results"] = o.results;
  out["totals"] = {{"latency_cycles", {{"monet", lat_m}, {"stream", lat_s}}}, {"energy_pj", {{"monet", e_m}, {"stream", e_s}}}};
  out["cns"] = {{"monet", m.size()}, {"stream", s.size()}, {"matched", matched}, {"matched_by_tile", by_tile},
                {"runtime_within_1pct", within}};
  json per = json::array();
  for (const std::string& name : order) {
    const Layer& l = layers[name];
    per.push_back({{"operator", l.op}, {"cns_monet", l.cns_m}, {"cns_stream", l.cns_s}, {"matched", l.matched},
                   {"runtime_within_1pct", l.within}, {"runtime_monet", l.run_m}, {"runtime_stream", l.run_s},
                   {"energy_monet_pj", l.e_m}, {"energy_stream_pj", l.e_s},
                   {"first_start_monet", l.cns_m ? l.first_m : 0.0}, {"first_start_stream", l.cns_s ? l.first_s : 0.0},
                   {"last_end_monet", l.last_m}, {"last_end_stream", l.last_s}});
  }
  out["layers"] = per;
  out["critical_path"] = {{"monet", critical_path(m)}, {"stream", critical_path(s)}};

  if (!o.json_out.empty()) {
    std::ofstream f(o.json_out);
    if (!f) throw UserError(SourceLocation{o.json_out}, "cannot write the file");
    f << out.dump(1) << "\n";
  }

  std::ostream& w = std::cout;
  w << "latency  monet " << fixed(lat_m, 1) << " / Stream " << fixed(lat_s, 1) << " cycles (" << pct(lat_m, lat_s) << ")\n";
  w << "energy   monet " << e_m << " / Stream " << e_s << " pJ (" << pct(e_m, e_s) << ")\n";
  w << "CNs      monet " << m.size() << ", Stream " << s.size() << "; matched " << matched << " (" << by_tile
    << " by tile, the rest in start order per operator and core); runtime within 1%: " << within << " ("
    << fixed(matched ? 100.0 * within / matched : 0.0, 1) << "% of matched)\n\n";
  w << "operator | CNs monet/Stream | within 1% | runtime monet / Stream (sum) | energy monet / Stream (pJ) | first start "
       "monet / Stream | last end monet / Stream\n";
  for (const std::string& name : order) {
    const Layer& l = layers[name];
    w << l.op << " | " << l.cns_m << "/" << l.cns_s << " | " << l.within << "/" << l.matched << " | " << fixed(l.run_m, 1)
      << " / " << fixed(l.run_s, 1) << " (" << pct(l.run_m, l.run_s) << ") | " << l.e_m << " / " << l.e_s << " ("
      << pct(l.e_m, l.e_s) << ") | " << fixed(l.cns_m ? l.first_m : 0) << " / " << fixed(l.cns_s ? l.first_s : 0) << " | "
      << fixed(l.last_m) << " / " << fixed(l.last_s) << "\n";
  }
  for (const char* side : {"monet", "stream"}) {
    const json& cp = out["critical_path"][side];
    w << "\ncritical path (" << side << "): " << fixed(cp.value("length_cycles", 0.0), 1) << " cycles, "
      << cp.value("cns", 0) << " CNs, waits " << fixed(cp.value("wait_cycles", 0.0)) << " cycles\n";
    for (const json& op : cp.value("operators", json::array())) {
      w << "  " << op["operator"].get<std::string>() << "  " << fixed(op["cycles"].get<double>(), 1) << "\n";
    }
  }
  return 0;
}

}  // namespace monet::cli
