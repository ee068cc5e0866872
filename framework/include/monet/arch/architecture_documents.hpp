#pragma once
// An accelerator file and the core files it uses, parsed but not yet built: what `--set architecture.…`,
// `[architecture.set]` and hardware genes change in memory before the accelerator is validated and built
// (no file is read twice). Copies are cheap and independent: a document is cloned only when a copy changes it.
//
// Paths are dotted and relative to the accelerator file. A segment that reaches an array of tables selects its
// entries by `name` (or `*` for all of them); `key[i]` is the i-th element of a list:
//   offchip.size_bits                      links.bus.energy_pj_per_bit        links.*.energy_pj_per_bit
//   cores.core0.file                       core_arrays.pe.x
// Below a [[cores]] or [[core_arrays]] entry, keys the entry does not own go into its core file; only the
// selected entries see the change (a core file shared with other entries is copied first):
//   cores.core0.memories.sram.size_bits    cores.*.array.sizes[0]             core_arrays.pe.array.sizes[1]
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "monet/arch/accelerator.hpp"
#include "monet/config/toml_reader.hpp"

namespace monet {

class MONET_API ArchitectureDocuments {
 public:
  /// Parses the accelerator file and every core file its entries name (relative to it).
  static ArchitectureDocuments read(const std::filesystem::path& file);

  /// Sets the value at `path`. The value keeps its own source location for later messages; `where` locates the
  /// path itself (an unknown entry or key is reported there).
  void set(std::string_view path, const toml::node& value, const SourceLocation& where);
  /// Removes the key at `path` (its default then applies).
  void unset(std::string_view path, const SourceLocation& where);
  /// Validates the documents and builds the accelerator; errors point into the documents or at override origins.
  [[nodiscard]] AcceleratorPtr build() const;

  [[nodiscard]] const std::filesystem::path& file() const { return file_; }

 private:
  struct Entry {
    std::string table;  // "cores" or "core_arrays"
    std::string name;   // the entry's name ("" when it has none: build() reports it)
    std::shared_ptr<const TomlDocument> core;  // its core file (nullptr when it names none: build() reports it)
  };
  /// The accelerator document, cloned first if another copy shares it.
  toml::table& own_root();
  void read_core(Entry& e, const toml::table& entry, const SourceLocation& where);

  std::filesystem::path file_;
  std::shared_ptr<const TomlDocument> doc_;
  std::vector<Entry> entries_;  // [[cores]] entries, then [[core_arrays]] entries, in file order
};

}  // namespace monet
