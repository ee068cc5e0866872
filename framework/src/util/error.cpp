#include "monet/util/error.hpp"

namespace monet {

std::string SourceLocation::str() const {
  if (file.empty()) return {};
  std::string s = file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

namespace {
std::string format_user_error(const SourceLocation& where, const std::string& message) {
  if (!where.known()) return "error: " + message;
  return where.str() + ": error: " + message;
}
}  // namespace

UserError::UserError(SourceLocation where, const std::string& message)
    : std::runtime_error(format_user_error(where, message)), where_(std::move(where)), message_(message) {}
UserError::UserError(const std::string& message) : UserError(SourceLocation{}, message) {}
UserError::~UserError() = default;

InternalError::InternalError(const std::string& message) : std::logic_error("internal error: " + message) {}
InternalError::~InternalError() = default;

void ensure(bool condition, const std::string& message) {
  if (!condition) throw InternalError(message);
}

}  // namespace monet
