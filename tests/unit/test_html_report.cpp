// report.html: the data embedded in the page reads back exactly and cannot end its <script> element; the run's
// data agree with the schedule (one rectangle per CN on a core, one per transfer); a search's page embeds every
// point, the front and the point kept in best/.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "monet/report/html_report.hpp"
#include "monet/search/pareto.hpp"

namespace monet {
namespace {

using json = nlohmann::json;

/// The JSON between the data script's tags, as the browser's textContent would give it.
std::string embedded_text(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"monet-data\">";
  const std::size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  const std::size_t begin = from + open.size();
  const std::size_t end = page.find("</script>", begin);  // what an HTML parser does: the first end tag ends it
  EXPECT_NE(end, std::string::npos);
  return page.substr(begin, end - begin);
}

TEST(HtmlReport, EmbeddedDataCannotCloseTheScriptAndReadsBackExactly) {
  const std::string hostile = "</script><script>alert(1)</script> <!-- <script> </SCRIPT > \u2028 \"quoted\" \\ ]]>";
  const json data = {{"name", hostile}, {"values", {1.5, -2, 1e300}}, {"nested", {{"k</b>", "<"}}}};
  const std::string page = embed_report_data(report_template(), data.dump());
  const std::string text = embedded_text(page);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(json::parse(text), data);  // \u003c reads back as '<'
  // Everything after the data is the template's own text.
  const std::string& t = report_template();
  const std::size_t marker = t.find("/*MONET_REPORT_DATA*/");
  EXPECT_EQ(page.substr(page.size() - (t.size() - marker - 21)), t.substr(marker + 21));
}

TEST(HtmlReport, TemplateIsSelfContained) {
  const std::string& t = report_template();
  EXPECT_NE(t.find("/*MONET_REPORT_DATA*/"), std::string::npos);
  EXPECT_EQ(t.find("/*MONET_REPORT_DATA*/"), t.rfind("/*MONET_REPORT_DATA*/"));  // one marker
  // Nothing fetched: no external script, style, image or font.
  for (const char* s : {"src=", "http://", "https://", "@import", "url("}) EXPECT_EQ(t.find(s), std::string::npos) << s;
  EXPECT_THROW(embed_report_data("<html>no marker</html>", "{}"), std::logic_error);
}

TEST(HtmlReport, RunDataMatchesTheSchedule) {
  const std::filesystem::path file = std::filesystem::path(MONET_SOURCE_DIR) / "experiments/tiny_cnn_dual_core.toml";
  const PreparedExperiment p = prepare(load_experiment(file, {}, Registry::global()), Registry::global());
  const RunResult r = run(p);
  const json d = json::parse(embedded_text(run_report_html(p, r)));
  EXPECT_EQ(d.at("kind"), "run");
  EXPECT_EQ(d.at("latency_cycles"), r.best.summary.latency_cycles);
  std::size_t cns = 0, transfers = 0;
  for (const ScheduledNode& n : r.best.nodes) cns += n.core >= 0 && n.end > n.start ? 1 : 0;
  for (const Transfer& t : r.best.transfers) transfers += t.link >= 0 && t.end > t.start ? 1 : 0;
  ASSERT_GT(cns, 0U);
  EXPECT_EQ(d.at("cn_count"), cns);
  EXPECT_EQ(d.at("cns").at("start").size(), cns);
  EXPECT_EQ(d.at("transfers").at("start").size(), transfers);
  // Columns are parallel, and every CN's end is within the schedule.
  for (const char* k : {"op", "core", "dur", "energy_pj", "macs", "tile", "streamed", "bound"}) EXPECT_EQ(d["cns"][k].size(), cns) << k;
  for (std::size_t i = 0; i < cns; ++i) {
    EXPECT_LE(d["cns"]["start"][i].get<std::int64_t>() + d["cns"]["dur"][i].get<std::int64_t>(), r.best.summary.latency_cycles);
  }
  double breakdown = 0;
  for (const auto& [k, v] : d.at("energy_breakdown_pj").items()) breakdown += v.get<double>();
  EXPECT_NEAR(breakdown, r.best.summary.energy_pj(), 1e-9 * r.best.summary.energy_pj());
  ASSERT_EQ(d.at("cores").size(), p.experiment.accelerator->cores.size());
  EXPECT_EQ(d["cores"][0]["memory"]["t"].size(), r.best.memory[0].steps.size());
  EXPECT_EQ(d["offchip"]["memory"]["bytes"].size(), r.best.offchip_memory.steps.size());
}

TEST(HtmlReport, SearchDataHoldsEveryPointTheFrontAndTheBestPoint) {
  const std::filesystem::path file = std::filesystem::path(MONET_SOURCE_DIR) / "experiments/tiny_cnn_dual_core.toml";
  const Experiment e = load_experiment(file, {}, Registry::global());
  DesignSpace space;
  space.genes.push_back(Gene{"k", "size</script>", GeneGroup::hardware, {"1", "2", "\"</script>\""}, true, 0});
  space.objectives = {{"latency_cycles", "cycles"}, {"energy_pj", "pJ"}};
  SearchResult r;
  auto point = [&](int g, double a, double b, double violation) {
    Evaluation ev;
    ev.point.genes = {g};
    ev.objectives = {a, b};
    ev.violation = violation;
    ev.reason = violation > 0 ? "too big <!--" : "";
    r.archive.push_back(ev);
    r.first_batch.push_back(r.archive.size() - 1);
    r.batches.push_back(SearchBatch{{ev}});
  };
  point(0, 10, 5, 0);
  point(1, 5, 10, 0);
  point(2, 1, 1, std::numeric_limits<double>::infinity());  // infeasible: not on the front
  const DesignPoint best{{1}};
  const std::string page = search_report_html(e, space, r, best, nullptr, nullptr);
  const json d = json::parse(embedded_text(page));
  EXPECT_EQ(d.at("kind"), "search");
  EXPECT_EQ(d["points"]["genes"][0], json({0, 1, 2}));
  EXPECT_EQ(d["points"]["objectives"][1], json({5.0, 10.0, 1.0}));
  EXPECT_EQ(d["points"]["feasible"], json({1, 1, 0}));
  EXPECT_EQ(d["front"], json(pareto_front(r.archive)));
  EXPECT_EQ(d["front"].size(), 2U);
  EXPECT_EQ(d["best"], 1);
  EXPECT_FALSE(d.contains("best_run"));  // no schedule given
  EXPECT_EQ(d["genes"][0]["values"][2], "\"</script>\"");
  EXPECT_EQ(d["reasons"][d["points"]["reason"][2].get<int>()], "too big <!--");
  EXPECT_EQ(d["hypervolume_per_batch"].size(), 3U);
}

}  // namespace
}  // namespace monet
