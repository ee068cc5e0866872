#pragma once
// The subcommands of the monet CLI. Each returns the process exit code; user errors are thrown as
// monet::UserError and turned into exit code 2 by main().
#include <cstdint>
#include <string>
#include <vector>

#include "monet/report/inspect_workload.hpp"

namespace monet::cli {

struct RunOptions {
  std::string experiment;
  std::string out;  // "" = [output] dir
  std::vector<std::string> sets;
  std::vector<std::string> unsets;  // keys removed before the --set values apply
  int threads = 0;  // 0 = all cores
  bool resume = false;  // continue the stopped search in the output folder
  std::string cost_cache;  // folder of the persistent cost cache ("" = none)
  double checkpoint_every = 0;  // seconds between resumable checkpoints of a search (0 = none; docs/distributed.md)
};
int run_command(const RunOptions& options);
/// Under MPI every rank prepares the same experiment; before the work starts they agree on whether one failed.
/// A rank whose preparation threw calls this from its error handler (failed = true), the others reach it in
/// run_command: returns the lowest failing rank, which alone reports the error (all ranks then end normally
/// with exit code 2, no MPI_Abort), or -1 when no agreement is pending (the error came later: abort).
int agree_on_setup(bool failed);

int validate_command(const std::string& file);

/// The workload and its training step (monet/report/inspect_workload.hpp), and how to show them.
struct InspectOptions : InspectRequest {
  bool json = false;
  std::string emit_toml;  // write the workload in the native TOML format
};
int inspect_command(const InspectOptions& options);

struct PluginsOptions {
  std::string describe;  // plugin name, "" = list all
  std::string kind;      // restrict to one kind
};
int plugins_command(const PluginsOptions& options);

struct CostOptions {
  std::string workload;
  std::string core;
  std::string model;    // "" = the core's cost model
  std::string mapping;  // a mapping file overriding the core's mappings (.toml or ZigZag .yaml)
  std::string objective;
  std::string compat;   // "" or "zigzag"
  std::vector<std::string> sets;  // cost-model parameters, key=value
  bool json = false;
  bool data_locality = false;  // keep data on chip between layers where it fits (ZigZag's exploit_data_locality)
  std::string precision;       // a precision preset applied to the workload (fp32, mixed_bf16, int8_stream)
  std::string emit_table;      // write the layers' costs as a CSV for the `table` cost model
  int threads = 0;
};
int cost_command(const CostOptions& options);

struct ImportOptions {
  std::string format;   // zigzag-core, zigzag-mapping, zigzag-workload, stream-accelerator, stream-mapping
  std::string input;
  std::string mapping;  // zigzag-core: the mapping file
  std::string output;
  std::string cost_model = "loopnest";
  std::string cores_dir;  // stream-accelerator: where the core files go (default cores/<output name>/ beside it)
  std::string fusion = "fused_stacks";  // stream-mapping: the fusion plugin the tiling rules are written for
  double link_energy = -1;  // stream-accelerator: pJ/bit of point-to-point links instead of Stream's (< 0: keep)
  double bus_energy = -1;   // stream-accelerator: pJ/bit of buses instead of Stream's (< 0: keep)
};
int import_command(const ImportOptions& options);

}  // namespace monet::cli
