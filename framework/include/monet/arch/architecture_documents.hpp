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
#include <optional>
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
  /// The TOML text of the value at `path` (the first entry a `*` selects); nullopt when it is not set.
  [[nodiscard]] std::optional<std::string> value_text(std::string_view path) const;
  /// Removes the key at `path` (its default then applies).
  void unset(std::string_view path, const SourceLocation& where);
  /// Validates the documents and builds the accelerator; errors point into the documents or at override origins.
  [[nodiscard]] AcceleratorPtr build() const;

  [[nodiscard]] const std::filesystem::path& file() const { return file_; }
  /// Whether the accelerator file has this top-level key ("accelerator", "workload"): what kind of file it is.
  [[nodiscard]] bool has_top_level(std::string_view key) const;

 private:
  /// A document as read plus the changes made to it, applied to a fresh parse when it is needed (toml++ copies
  /// lose source locations, so documents are never copied node by node). Copies share the parsed result.
  class Edited {
   public:
    Edited() = default;
    explicit Edited(std::shared_ptr<const TomlDocument> original);
    [[nodiscard]] bool empty() const { return original_ == nullptr; }
    /// The document with every change applied (parsed once per distinct list of changes).
    [[nodiscard]] const TomlDocument& get() const;
    /// Applies a change; throws (and keeps the document unchanged) when the path does not fit.
    void set(const std::vector<std::string>& segments, const toml::node& value, const SourceLocation& where);
    void unset(const std::vector<std::string>& segments, const SourceLocation& where);

   private:
    struct Change {
      std::vector<std::string> segments;
      std::shared_ptr<const toml::node> value;  // null: remove
      SourceLocation where;
    };
    void apply(Change c);
    std::shared_ptr<const TomlDocument> original_;
    std::vector<Change> changes_;
    mutable std::shared_ptr<const TomlDocument> result_;
  };
  struct Entry {
    std::string table;  // "cores" or "core_arrays"
    std::string name;   // the entry's name ("" when it has none: build() reports it)
    Edited core;        // its core file (empty when it names none: build() reports it)
  };
  void read_core(Entry& e, const toml::table& entry, const SourceLocation& where);

  std::filesystem::path file_;
  Edited doc_;
  std::vector<Entry> entries_;  // [[cores]] entries, then [[core_arrays]] entries, in file order
};

}  // namespace monet
