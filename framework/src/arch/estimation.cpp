#include "monet/arch/estimation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "monet/config/params.hpp"
#include "monet/config/params_toml.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"

namespace monet {

namespace {

/// The estimator a core names, created with its [estimator_params] (or the plugin's defaults).
std::shared_ptr<const Estimator> create_estimator(const Core& core, const Registry& registry) {
  const EstimatorChoice& choice = *core.estimator;
  const PluginHandle& plugin = *registry.find(PluginKind::estimator, choice.name);
  ParamValues values;
  if (choice.params) {
    const TomlDocument& doc = *choice.params;
    TableReader root(doc.root(), doc.file(), "", doc.base_dir());
    auto t = root.required_table("estimator_params");
    values = read_params(t, plugin.info.params);
    t.finish();
  } else {
    values = default_params(plugin.info.params, core.file + ": estimator '" + choice.name + "' (add [estimator_params])");
  }
  return registry.create<Estimator>(plugin, values);
}

/// Runs one estimate; a UserError without location gets the key the query came from.
template <class F>
auto located(const SourceLocation& where, const std::string& estimator, F&& estimate) {
  try {
    return estimate();
  } catch (const UserError& e) {
    if (e.where().known()) throw;
    throw UserError(where, "estimator '" + estimator + "': " + e.message());
  }
}

/// Takes an estimate for a number the file left to the estimator; a pinned number stays.
template <class V>
void fill(V& value, ValueOrigin& origin, double estimate) {
  if (origin != ValueOrigin::pending) return;
  value = estimate;
  origin = ValueOrigin::estimated;
}

void check_estimate(double value, const std::string& what, const std::string& estimator) {
  ensure(std::isfinite(value) && value >= 0,
         "estimator '" + estimator + "' returned " + std::to_string(value) + " for " + what);
}

}  // namespace

CorePtr apply_estimator(const CorePtr& core, const Registry& registry) {
  if (!core->estimator) return core;
  const EstimatorChoice& choice = *core->estimator;
  const PluginHandle& plugin = registry.require(PluginKind::estimator, choice.name, choice.name_origin);
  if (!core->estimates_pending() && choice.version == plugin.info.version) return core;
  const auto estimator = create_estimator(*core, registry);
  const auto [lo, hi] = estimator->technology_range_nm();
  if (choice.technology_nm < lo || choice.technology_nm > hi) {
    const auto nm = [](double v) { return to_string(ParamValue(v)); };
    throw UserError(choice.technology_origin, "core.technology_nm: " + nm(choice.technology_nm) +
                                                  " nm is outside the nodes estimator '" + choice.name + "' covers (" +
                                                  nm(lo) + " to " + nm(hi) + " nm)");
  }
  auto c = std::make_shared<Core>(*core);
  c->estimator->version = plugin.info.version;
  OperationalArray& array = c->array;
  if (array.unit_energy_origin == ValueOrigin::pending || array.area_origin == ValueOrigin::pending) {
    const ArrayEstimateQuery q{array.pe_count(), *array.precision, array.operation, choice.technology_nm};
    const ArrayEstimate a = located(array.precision_origin, choice.name, [&] { return estimator->array(q); });
    check_estimate(a.unit_energy_pj, "the unit energy of core '" + c->name + "'", choice.name);
    check_estimate(a.area_mm2, "the array area of core '" + c->name + "'", choice.name);
    fill(array.unit_energy_pj, array.unit_energy_origin, a.unit_energy_pj);
    fill(array.area_mm2, array.area_origin, a.area_mm2);
    array.implementation = a.implementation;
  }
  for (MemoryLevel& m : c->memories) {
    const bool pending = m.read_energy_origin == ValueOrigin::pending ||
                         m.write_energy_origin == ValueOrigin::pending || m.area_origin == ValueOrigin::pending;
    if (!pending) continue;
    const MemoryEstimateQuery q{m.size_bits, m.read_word_bits(), m.write_word_bits(), static_cast<int>(m.ports.size()),
                                m.offchip, choice.technology_nm};
    const MemoryEstimate e = located(m.origin, choice.name, [&] { return estimator->memory(q); });
    const std::string what = " of memory '" + m.name + "' of core '" + c->name + "'";
    check_estimate(e.read_energy_pj, "the read energy" + what, choice.name);
    check_estimate(e.write_energy_pj, "the write energy" + what, choice.name);
    check_estimate(e.area_mm2, "the area" + what, choice.name);
    fill(m.read_energy_pj, m.read_energy_origin, e.read_energy_pj);
    fill(m.write_energy_pj, m.write_energy_origin, e.write_energy_pj);
    fill(m.area_mm2, m.area_origin, e.area_mm2);
    m.implementation = e.implementation;
  }
  return c;
}

AcceleratorPtr apply_estimators(const AcceleratorPtr& accelerator, const Registry& registry) {
  std::map<const Core*, CorePtr> done;  // instances of one core file share its estimated core
  bool changed = false;
  for (const CoreInstance& inst : accelerator->cores) {
    if (done.contains(inst.core.get())) continue;
    CorePtr estimated = apply_estimator(inst.core, registry);
    changed = changed || estimated != inst.core;
    done.emplace(inst.core.get(), std::move(estimated));
  }
  if (!changed) return accelerator;
  auto acc = std::make_shared<Accelerator>(*accelerator);
  for (CoreInstance& inst : acc->cores) inst.core = done.at(inst.core.get());
  return acc;
}

void require_estimates(const Accelerator& accelerator) {
  for (const CoreInstance& c : accelerator.cores) {
    if (c.core->estimates_pending()) {
      throw InternalError("core '" + c.name + "' (" + c.core->file + ") still has numbers left to its estimator: " +
                          "apply_estimators() must run after the accelerator is built");
    }
  }
}

std::optional<AcceleratorArea> accelerator_area(const Accelerator& accelerator) {
  AcceleratorArea area;
  for (const CoreInstance& c : accelerator.cores) {
    const std::optional<double> a = c.core->area_mm2();
    if (!a) return std::nullopt;
    area.core_mm2.push_back(*a);
    area.total_mm2 += *a;
  }
  return area;
}

}  // namespace monet
