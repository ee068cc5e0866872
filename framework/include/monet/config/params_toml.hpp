#pragma once
// Plugin parameters read from a TOML table (experiment, core and architecture files). Kernel-side: plugins receive
// validated ParamValues and never parse TOML, so this stays out of the plugin SDK (monet/config/params.hpp).
#include <vector>

#include "monet/config/params.hpp"
#include "monet/config/toml_reader.hpp"

namespace monet {

/// Reads the declared parameters from a table (marking them used), fills defaults, checks types, bounds and
/// choices. Required parameters that are absent are an error. Unknown keys are left to the caller's finish().
MONET_API ParamValues read_params(TableReader& table, const std::vector<ParamSpec>& specs);
/// Only the declared parameters the table sets (validated like read_params, marked used): no defaults, nothing
/// required. Layers of settings that override each other key by key start here.
MONET_API ParamValues read_set_params(TableReader& table, const std::vector<ParamSpec>& specs);

}  // namespace monet
