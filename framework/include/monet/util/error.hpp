#pragma once
// Errors. A UserError is bad input the user can fix (exit code 2): it carries the place in the user's file.
// Anything else that escapes is an internal error (exit code 1).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "monet/util/export.hpp"

namespace monet {

/// A place in a user file; line/column are 1-based, 0 = unknown.
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  /// "file:line:col", "file:line", "file" or "" depending on what is known.
  [[nodiscard]] MONET_API std::string str() const;
  [[nodiscard]] bool known() const { return !file.empty(); }
};

/// Bad input: an experiment, architecture, core or workload file, a command-line value, or a plugin library
/// that cannot be used. what() is the complete one-line message: "file:line:col: error: message".
class MONET_API UserError : public std::runtime_error {
 public:
  UserError(SourceLocation where, const std::string& message);
  explicit UserError(const std::string& message);
  ~UserError() override;  // key function: typeinfo lives in the kernel, shared by all plugins

  [[nodiscard]] const SourceLocation& where() const { return where_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

/// A broken invariant inside monet or a plugin (a bug, not bad input).
class MONET_API InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message);
  ~InternalError() override;
};

/// Throws InternalError with the message when the condition is false.
MONET_API void ensure(bool condition, const std::string& message);

}  // namespace monet
