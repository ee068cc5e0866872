#pragma once
// The numbers a core file leaves to its estimator plugin (energies per access and per operation, areas) are
// filled here: after a core or accelerator is built — from files or from documents a search changed — and
// before anything costs it. Numbers written in the files always win. See docs/estimators.md.
#include <optional>
#include <vector>

#include "monet/arch/accelerator.hpp"

namespace monet {

class Registry;

/// The core with every number it leaves to its estimator filled (and the estimator's version recorded); the same
/// pointer when it names no estimator or this has been done.
/// Errors point into the core file: an unknown estimator at its `estimator` key, a node the model does not
/// cover at `technology_nm`, an array it cannot estimate at `[array] precision`, a memory at its table.
MONET_API CorePtr apply_estimator(const CorePtr& core, const Registry& registry);
/// The accelerator with apply_estimator applied to every core (instances sharing a core share the result);
/// the same pointer when no core has numbers pending.
MONET_API AcceleratorPtr apply_estimators(const AcceleratorPtr& accelerator, const Registry& registry);
/// Throws an InternalError naming the core when it still has estimates pending (apply_estimators was not
/// called on it): nothing may cost a core whose energies are not known.
MONET_API void require_estimates(const Accelerator& accelerator);

/// Area of one core instance of the accelerator and in total. Counted: every core's array and on-chip memories
/// (all instances). Not counted: links (their repeaters are below 0.1 % of a core, docs/estimators.md) and the
/// off-chip memory.
struct AcceleratorArea {
  std::vector<double> core_mm2;  // per core instance, in accelerator order
  double total_mm2 = 0;
};
/// nullopt when a core's area is unknown (its file pins no area and names no estimator).
MONET_API std::optional<AcceleratorArea> accelerator_area(const Accelerator& accelerator);

}  // namespace monet
