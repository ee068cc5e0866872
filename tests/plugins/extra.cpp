// A minimal search plugin found through MONET_PLUGIN_PATH: evaluates every value of the first gene (the
// configured point when the space has none), to show a plugin outside the build tree's plugin folder taking
// part in a run.
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
    i.summary = "test plugin: tries every value of the first gene";
    i.params = {monet::ParamSpec::integer("repeat", 1).with_bounds(monet::Bounds::at_least(1)).with_doc("times to evaluate each point")};
    return i;
  }
  explicit FirstOperatorSweep(const monet::ParamValues& p) : repeat_(p.get_int("repeat")) {}
  [[nodiscard]] std::vector<monet::Evaluation> run(monet::SearchContext& ctx) const override {
    std::vector<monet::DesignPoint> points;
    const monet::DesignPoint configured = ctx.space().configured();
    const std::int32_t values = configured.genes.empty() ? 1 : ctx.space().genes.front().size();
    for (std::int32_t v = 0; v < values; ++v) {
      for (std::int64_t r = 0; r < repeat_; ++r) {
        monet::DesignPoint p = configured;
        if (!p.genes.empty()) p.genes[0] = v;
        points.push_back(p);
      }
    }
    ctx.plan(points.size());
    return ctx.evaluate(points);
  }

 private:
  std::int64_t repeat_;
};
}  // namespace

MONET_EXPORT_PLUGINS(FirstOperatorSweep)
