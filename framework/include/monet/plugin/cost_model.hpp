#pragma once
// The core cost-model plugin kind (`cost_model`): cycles, energy and mapping of an operator tile on a core.
// What a plugin library of this kind includes (with monet/plugin/entry.hpp): its contract and the types it
// passes, nothing of the kernel's file readers or scheduler (docs/plugins.md#the-sdk-surface).
#include "monet/arch/core.hpp"
#include "monet/cost/cost.hpp"
#include "monet/plugin/plugin.hpp"

namespace monet {

/// Cost of an operator tile on a core. Results are cached by the kernel per (tile signature, core).
class MONET_API CostModel : public Plugin {
 public:
  ~CostModel() override;
  /// Rejects a core this model cannot cost (UserError naming the core file). Called once per core.
  virtual void check_core(const Core& core) const;
  [[nodiscard]] virtual Cost evaluate(const CostQuery& query) const = 0;
  /// Bits of each operand (per slot) the query's tile keeps in memory, as this model counts them; used to
  /// decide which memory can hold a layer's data between layers. Default: elements × precision bits.
  [[nodiscard]] virtual OperandTraffic footprint_bits(const CostQuery& query) const;
};

}  // namespace monet
