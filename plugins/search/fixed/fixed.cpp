// The trivial search: evaluates the one configured design point (the [allocation] of the experiment, with
// the scheduler choosing among allowed cores where several are allowed).
#include "monet/plugin/entry.hpp"
#include "monet/plugin/search_algorithm.hpp"

namespace monet::plugins {
namespace {

class Fixed final : public SearchAlgorithm {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::search;
    i.name = "fixed";
    i.version = "1.0.0";
    i.summary = "Evaluates the configured design point once";
    i.description = "No exploration: the allocation is the experiment's [allocation] (cores allowed per operator "
                    "kind or name); where several cores are allowed, the scheduler picks the one that finishes "
                    "the operator first.";
    return i;
  }
  explicit Fixed(const ParamValues& /*params*/) {}

  [[nodiscard]] std::vector<Evaluation> run(SearchContext& context) const override {
    context.plan(1);
    return context.evaluate({context.space().configured()});
  }
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::Fixed)
