#pragma once
// Dotted paths into a TOML document, as the experiment's `[architecture.set]` and `[workload.set]` write them
// (docs/experiments.md). A segment that reaches an array of tables selects its entries by `name` (`*` for all of
// them); `key[i]` is the i-th element of a list:
//   offchip.size_bits    links.*.energy_pj_per_bit    cores.core0.array.sizes[0]    layers.conv1.out_channels
// Every error is a UserError at `where` (the path as the experiment wrote it), with the keys there to choose from.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "monet/config/toml_reader.hpp"

namespace monet {

/// "cores.core0.file" -> {"cores", "core0", "file"}; an empty segment is an error.
MONET_API std::vector<std::string> split_toml_path(std::string_view path, const SourceLocation& where);
/// "sizes[1]" -> ("sizes", 1); "sizes" -> ("sizes", -1).
MONET_API std::pair<std::string, long> toml_path_subscript(const std::string& segment, const SourceLocation& where);
/// The `name` key of an array-of-tables entry ("" when it has none).
MONET_API std::string toml_entry_name(const toml::table& entry);

/// Calls `op` with the table holding the last key, that key, its list index (-1 for none) and the path so far,
/// once per entry the selectors name.
using TomlPathOp = std::function<void(toml::table&, const std::string& key, long index, const std::string& here)>;
MONET_API void walk_toml_path(toml::table& root, const std::vector<std::string>& segments, const SourceLocation& where,
                              const TomlPathOp& op);

/// Sets the value at the path (a missing last key is added); the copy keeps the value's own source location.
MONET_API void set_toml_path(toml::table& root, const std::vector<std::string>& segments, const toml::node& value,
                             const SourceLocation& where);
/// Removes the key at the path.
MONET_API void unset_toml_path(toml::table& root, const std::vector<std::string>& segments, const SourceLocation& where);
/// The changes a `[... .set]` table writes, each as (path, value, where): a dotted key outside quotes
/// (`a.set.cores.x.y = 1`, or `--set architecture.set.cores.x.y=1`) makes sub-tables whose leaves are the paths; an
/// inline table ({ ... }) is one value, set whole. Every key is marked used and the table finished.
using TomlSetLeaf = std::function<void(const std::string& path, const toml::node& value, const SourceLocation& where)>;
MONET_API void for_each_set_path(TableReader& set, const TomlSetLeaf& leaf);

/// The TOML text of the value at the path (the first entry a `*` selects); nullopt when nothing is there.
MONET_API std::optional<std::string> toml_path_text(const TomlDocument& doc, const std::vector<std::string>& segments);

}  // namespace monet
