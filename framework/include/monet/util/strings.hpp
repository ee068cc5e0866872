#pragma once
// Small string helpers used for messages: "did you mean", joining lists.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "monet/util/export.hpp"

namespace monet {

/// Levenshtein edit distance (case-sensitive).
MONET_API std::size_t edit_distance(std::string_view a, std::string_view b);

/// Up to `max_results` candidates close to `word` (edit distance ≤ max(2, |word|/3), or sharing a prefix),
/// closest first; ties keep the order of `candidates`.
MONET_API std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates,
                                                 std::size_t max_results = 3);

/// " (did you mean 'a' or 'b'?)" or "" when nothing is close.
MONET_API std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// Joins items with a separator, each quoted with '' when `quote` is set.
/// Without leading and trailing white space.
MONET_API std::string trim(std::string_view s);
MONET_API std::string join(const std::vector<std::string>& items, std::string_view separator = ", ",
                           bool quote = false);

/// Formats a double for messages without trailing zeros ("0.5", "1e+09").
MONET_API std::string format_number(double v);
/// The cells of one CSV line (no quoting), trimmed; a trailing comma gives an empty last cell.
MONET_API std::vector<std::string> split_csv_line(const std::string& line);
/// The 1-based column where cell `cell` (0-based) of a CSV line starts, for located errors.
MONET_API int csv_column(const std::string& line, std::size_t cell);
/// Formats a number with thousands separators: 1234567 -> "1,234,567".
MONET_API std::string with_thousands(long long value);
/// Shell-style pattern matching ("pe_*", "core[0-3]"): fnmatch without flags.
MONET_API bool glob_match(const std::string& pattern, const std::string& name);
/// The pattern has glob characters (*, ?, [).
[[nodiscard]] inline bool is_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

/// A value with an SI prefix and its unit, `digits` significant digits: si(2.1e6, "B") = "2.1 MB",
/// si(3e-6, "J") = "3 uJ", si(2097152, "B", 2) = "2.1 MB"; without a unit the prefix follows the number
/// directly: si(5e7, "") = "50M".
MONET_API std::string si(double value, std::string_view unit, int digits = 4);
/// Bits as bytes with an SI prefix: "1.969 GB".
MONET_API std::string si_bytes(std::int64_t bits);

}  // namespace monet
