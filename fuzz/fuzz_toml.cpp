// The TOML readers, dispatched as `monet validate` does: an accelerator (with its core files), a core, a workload
// (the toml frontend, or the generator a [workload] table names) or an experiment (read and validated against the
// plugins' declarations, as `monet run` does before any work). Seeds: architectures/, architectures/cores/, workloads/*.toml, experiments/.
#include "fuzz_support.hpp"
#include "monet/arch/estimation.hpp"
#include "monet/experiment/experiment.hpp"
#include "monet/plugin/registry.hpp"

// The plugins are loaded before fuzzing starts: libFuzzer registers their coverage counters only then.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)monet::Registry::global();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace monet;
  // The input sits where the repository's experiments do, so that their relative paths resolve.
  const fuzz::fs::path dir = fuzz::scratch({{"workloads", "workloads"}, {"architectures", "architectures"},
                                           {"experiments/cores", "architectures/cores"}});
  const fuzz::fs::path file = fuzz::write(dir / "experiments" / "fuzz.toml", data, size);
  const Registry& registry = Registry::global();
  fuzz::expect_user_error_only("toml", [&] {
    const TomlDocument doc = TomlDocument::parse_file(file);
    const toml::table& root = doc.root();
    if (root.contains("accelerator")) {
      (void)apply_estimators(load_accelerator(file), registry);
    } else if (root.contains("core")) {
      (void)apply_estimator(load_core(file), registry);
    } else if (const auto* w = root.get_as<toml::table>("workload");
               root.contains("layers") || root.contains("inputs") ||
               (w && w->contains("generator") && !root.contains("experiment") && !root.contains("architecture"))) {
      // A layer list (toml) or a generated workload ([workload] generator: the frontend of that name).
      const PluginHandle* found = registry.frontend_for(file);
      const PluginHandle& h = found ? *found : registry.require(PluginKind::frontend, "toml", SourceLocation{file.string()});
      (void)registry.create<WorkloadFrontend>(h, default_params(h.info.params, file.string()))->load(file);
    } else {
      (void)load_experiment(file, {}, registry);
    }
  });
  return 0;
}
