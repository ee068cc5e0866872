#pragma once
#include <string>

#include "monet/util/export.hpp"
#include "monet/util/version_config.hpp"

namespace monet {

/// Version of the monet kernel (from CMake's project version).
inline constexpr const char* kVersion = MONET_VERSION_STRING;
/// Git commit the kernel was built from ("unknown" outside a git checkout; "-dirty" with local changes).
MONET_API std::string git_commit();

}  // namespace monet
