#pragma once
// What a run writes. Every number carries its unit in its key (latency_cycles, energy_pj, peak_bytes ...).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "monet/experiment/runner.hpp"

namespace monet {

/// results.json, a summary whatever the run's size: totals, energy by cause, memory per core, transfers by
/// cause, workload, training memory, provenance (per-CN and per-transfer rows are in the CSV files).
/// Deterministic: the same experiment and seed give byte-identical files (no timings, no host names).
MONET_API std::string results_json(const PreparedExperiment& prepared, const RunResult& result);

/// schedule.csv: one row per computation node: id, name, operator, kind, phase, core, cycles, MACs, energy and
/// its parts (MAC, on-chip memory, off-chip), off-chip bits, bound, stack, group, streamed operands, mapping.
MONET_API std::string schedule_csv(const PreparedExperiment& prepared, const RunResult& result);

/// transfers.csv: one row per transfer (Transfer's rule): tensor, from, to, link, cause, the CN it is for (the
/// `cn` of schedule.csv), cycles, bits, bandwidth, read / link / write energy and their sum.
MONET_API std::string transfers_csv(const PreparedExperiment& prepared, const RunResult& result);

/// The files of a run's output folder, by the experiment's [output] artifacts: results.json and resolved.toml,
/// then schedule.csv and transfers.csv ("csv"), trace.json.gz ("trace"), schedule.svg and memory.svg ("plots"),
/// report.html ("report").
MONET_API std::vector<std::string> output_file_names(const Experiment& experiment);
/// Their contents, in the same order (resolved.toml with paths relative to `output_dir`).
MONET_API std::vector<std::pair<std::string, std::string>> output_files(const PreparedExperiment& prepared,
                                                                        const RunResult& result,
                                                                        const std::filesystem::path& output_dir);

/// resolved.toml: the experiment with every default filled in, paths relative to `output_dir`, and a
/// [provenance] table (monet version, git commit, plugin versions, seed). `monet run` on it reproduces
/// the same numbers.
MONET_API std::string resolved_toml(const PreparedExperiment& prepared, const std::filesystem::path& output_dir);

/// The human summary printed after a run.
MONET_API std::string summary_text(const PreparedExperiment& prepared, const RunResult& result,
                                   const std::filesystem::path& output_dir);

/// Writes one file atomically (a temporary file in the same folder, renamed into place).
MONET_API void write_file_atomically(const std::filesystem::path& file, const std::string& content);

/// Everything about an output folder that can be checked before a run: it does not exist unless `overwrite`,
/// it is not a file, and it can be created (its nearest existing ancestor is a writable folder). UserError
/// otherwise. write_folder_atomically() checks the same again.
MONET_API void check_output_folder(const std::filesystem::path& dir, bool overwrite);

/// Writes a set of files as one folder, atomically: everything goes into a hidden sibling folder that is
/// renamed into place at the end, so a failed run leaves no partial folder. An existing folder is replaced
/// only when `overwrite` is set (else UserError).
MONET_API void write_folder_atomically(const std::filesystem::path& dir, bool overwrite,
                                       const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace monet
