// A minimal search plugin found through MONET_PLUGIN_PATH: evaluates every core allowed for the first
// operator, to show a plugin outside the build tree's plugin folder taking part in a run.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/interfaces.hpp"

namespace {
class FirstOperatorSweep final : public monet::SearchAlgorithm {
 public:
  static monet::PluginInfo describe() {
    monet::PluginInfo i;
    i.kind = monet::PluginKind::search;
    i.name = "first_operator_sweep";
    i.version = "0.0.1";
    i.summary = "test plugin: tries every allowed core for the first operator";
    i.params = {monet::ParamSpec::integer("repeat", 1).with_bounds(monet::Bounds::at_least(1)).with_doc("times to evaluate each point")};
    return i;
  }
  explicit FirstOperatorSweep(const monet::ParamValues& p) : repeat_(p.get_int("repeat")) {}
  [[nodiscard]] std::vector<monet::Evaluation> run(monet::SearchContext& ctx) const override {
    std::vector<monet::DesignPoint> points;
    const auto& allowed = ctx.space().allowed_cores;
    for (int c : allowed.front()) {
      for (std::int64_t r = 0; r < repeat_; ++r) {
        monet::DesignPoint p;
        p.allocation.assign(allowed.size(), -1);
        p.allocation[0] = c;
        points.push_back(p);
      }
    }
    auto results = ctx.evaluate(points);
    ctx.progress(points.size(), points.size());
    return results;
  }

 private:
  std::int64_t repeat_;
};
}  // namespace

MONET_EXPORT_PLUGINS(FirstOperatorSweep)
