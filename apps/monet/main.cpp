// monet — model and optimize the training of neural networks on multi-core dataflow accelerators.
// Exit codes: 0 success, 2 bad input (the message says where), 1 internal error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "compare_stream.hpp"
#include "monet/distributed/ranks.hpp"
#include "monet/plugin/abi_layout.hpp"
#include "monet/plugin/entry.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/util/error.hpp"
#include "monet/util/version.hpp"

namespace {

/// A number >= min (inclusive) or > min. CLI11's NonNegativeNumber and PositiveNumber would print their upper
/// bound, the largest double, written out in 309 digits.
CLI::Validator number_above(double min, bool inclusive) {
  const std::string bound = (inclusive ? ">= " : "> ") + std::to_string(static_cast<long long>(min));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double x = 0;
        try {
          std::size_t used = 0;
          x = std::stod(text, &used);
          if (used != text.size()) return "expected a number " + bound + ", got '" + text + "'";
        } catch (const std::exception&) {
          return "expected a number " + bound + ", got '" + text + "'";
        }
        if (!std::isfinite(x) || (inclusive ? x < min : x <= min)) return "expected a number " + bound + ", got " + text;
        return "";
      },
      inclusive ? "NONNEGATIVE" : "POSITIVE");
}

/// --threads of run and cost: a cap on TBB's worker threads; 0 leaves TBB's default.
constexpr const char* kThreadsHelp =
    "worker threads: 1 to 4096 (at most that many), or 0 (the default) for one per hardware thread this process may "
    "use";

int real_main(int argc, char** argv) {
  CLI::App app{"monet: model and optimize neural-network training on multi-core dataflow accelerators"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  monet::cli::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "run an experiment file and write its results");
  run_cmd->add_option("experiment", run.experiment, "experiment TOML file")->required();
  run_cmd->add_option("--out", run.out, "output folder (default: [output] dir of the experiment)");
  run_cmd->add_option("--set", run.sets, "override a value: section.key=value, or architecture.PATH=value for the accelerator file (repeatable)")->allow_extra_args(false);
  run_cmd->add_option("--unset", run.unsets, "remove a key (its default applies): section.key or architecture.PATH (repeatable; before --set)")->allow_extra_args(false);
  run_cmd->add_option("--threads", run.threads, kThreadsHelp)->check(CLI::Range(0, 4096));
  run_cmd->add_flag("--resume", run.resume, "continue the search that was stopped (Ctrl-C) in the output folder");
  run_cmd->add_option("--cost-cache", run.cost_cache,
                      "folder that keeps cost-model results across runs (created if missing; shared safely by "
                      "concurrent runs)");
  run_cmd->add_option("--checkpoint-every", run.checkpoint_every,
                      "seconds: write a resumable checkpoint of the search (journal.jsonl, search.json) to the output "
                      "folder after a batch once this long has passed since the last (for runs a node failure may kill)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  std::string validate_file;
  CLI::App* validate_cmd =
      app.add_subcommand("validate", "check an experiment, accelerator, core or workload file without running it");
  validate_cmd->add_option("file", validate_file, "TOML file")->required();

  monet::cli::InspectOptions inspect;
  CLI::App* inspect_cmd = app.add_subcommand("inspect", "show a workload operator by operator, with totals");
  inspect_cmd->add_option("workload", inspect.workload, "workload file (.onnx, .toml)")->required();
  inspect_cmd->add_flag("--json", inspect.json, "print JSON instead of a table");
  inspect_cmd->add_option("--batch", inspect.batch, "override the batch size")->check(number_above(0, true));
  inspect_cmd->add_option("--set", inspect.sets, "a frontend parameter: key=value or workload.key=value (repeatable)");
  inspect_cmd->add_option("--plugin", inspect.plugin, "frontend plugin (default: from the file extension)");
  inspect_cmd->add_option("--emit-toml", inspect.emit_toml, "also write the workload in monet's TOML format");
  CLI::Option* training_flag =
      inspect_cmd->add_flag("--training", inspect.training, "show one training step: forward, loss, backward, optimizer");
  inspect_cmd->add_option("--optimizer", inspect.optimizer, "optimizer plugin for --training")->capture_default_str();
  inspect_cmd->add_option("--loss", inspect.loss, "loss for --training, as [training] loss")
      ->check(CLI::IsMember({"cross_entropy", "binary_cross_entropy"}))
      ->needs(training_flag)
      ->capture_default_str();
  inspect_cmd->add_option("--precision", inspect.precision, "precision preset for --training (fp32, mixed_bf16, int8_stream)");
  inspect_cmd->add_option("--checkpoint", inspect.checkpoint,
                          "activation checkpointing for --training: none, segments=K, modules=GLOB[,GLOB], every_k=K, "
                          "every_k=sqrt, optimal=BUDGET_BYTES (least recomputed MACs with the backward activation peak within it), "
                          "blocks=NAME[,NAME] (as in [training.checkpoint])");
  inspect_cmd->add_option("--checkpoint-semantics", inspect.checkpoint_semantics,
                          "what a checkpointed region runs again: pytorch (the whole region, as torch.utils.checkpoint; "
                          "default) or minimal (only what backward reads); as [training.checkpoint] semantics")
      ->check(CLI::IsMember({"pytorch", "minimal"}));
  inspect_cmd->add_option("--checkpoint-solver", inspect.checkpoint_solver,
                          "how --checkpoint optimal=BUDGET is solved: dp (the chain DP, default), segments (the DP over Rotor's runs "
                          "of blocks), rotor (Rotor's DP with nested recomputation) or milp[,SECONDS[,NODES]] "
                          "(the MILP with CBC, with a time limit, default 10 s, and a branch-and-bound node limit; as "
                          "[training.checkpoint] solver, time_limit_s and node_limit)");
  inspect_cmd->add_option("--offload", inspect.offload,
                          "activation offloading for --training: GLOB[,GLOB] (modules whose saved activations are paged "
                          "out to off-chip memory, as [training.checkpoint] offload)");
  inspect_cmd->add_option("--micro-batches", inspect.micro_batches, "gradient accumulation steps for --training")
      ->check(number_above(0, false));

  monet::cli::CostOptions cost;
  CLI::App* cost_cmd = app.add_subcommand("cost", "cost every operator of a workload on one core, layer by layer");
  cost_cmd->add_option("workload", cost.workload, "workload file (.onnx, .toml)")->required();
  cost_cmd->add_option("--core", cost.core, "core file")->required();
  cost_cmd->add_option("--model", cost.model, "cost-model plugin (default: the core's)");
  cost_cmd->add_option("--mapping", cost.mapping, "mapping file replacing the core's mapping entries (.toml, or ZigZag .yaml)");
  cost_cmd->add_option("--opt", cost.objective, "latency, energy or edp")->check(CLI::IsMember({"latency", "energy", "edp"}));
  cost_cmd->add_option("--compat", cost.compat, "zigzag: ZigZag 3.8.5's conventions (parity runs)")
      ->check(CLI::IsMember({"zigzag"}));
  cost_cmd->add_option("--set", cost.sets, "a cost-model parameter: key=value (repeatable)");
  cost_cmd->add_flag("--json", cost.json, "print JSON");
  cost_cmd->add_option("--precision", cost.precision, "precision preset applied to the workload (fp32, mixed_bf16, int8_stream)");
  cost_cmd->add_option("--emit-table", cost.emit_table, "write every layer's cycles and energy as a CSV for the 'table' cost model");
  cost_cmd->add_flag("--data-locality", cost.data_locality,
                     "keep a layer's output (and the weights) in the lowest memory that fits them between layers");
  cost_cmd->add_option("--threads", cost.threads, kThreadsHelp)->check(CLI::Range(0, 4096));

  monet::cli::ImportOptions import;
  CLI::App* import_cmd = app.add_subcommand("import", "convert ZigZag and Stream files (accelerators, mappings, layer lists) to monet's TOML");
  import_cmd->add_option("format", import.format, "zigzag-core, zigzag-mapping, zigzag-workload, stream-accelerator or stream-mapping")
      ->required()
      ->check(CLI::IsMember({"zigzag-core", "zigzag-mapping", "zigzag-workload", "stream-accelerator", "stream-mapping"}));
  import_cmd->add_option("input", import.input, "the YAML file")->required();
  import_cmd->add_option("--mapping", import.mapping, "zigzag-core: the mapping file (becomes the core's mappings)");
  import_cmd->add_option("-o,--output", import.output, "the TOML file to write")->required();
  import_cmd->add_option("--cores-dir", import.cores_dir, "stream-accelerator: folder for the core files (default cores/<name>/ beside the output)");
  import_cmd->add_option("--fusion", import.fusion, "stream-mapping: fusion plugin the tiling is written for")
      ->capture_default_str()
      ->check(CLI::IsMember({"fused_stacks", "layer_by_layer"}));
  import_cmd->add_option("--cost-model", import.cost_model, "zigzag-core: the core's cost model")->capture_default_str();
  import_cmd->add_option("--link-energy", import.link_energy,
                         "stream-accelerator: pJ per bit of point-to-point links instead of Stream's (its examples model 0)")
      ->check(number_above(0, true));
  import_cmd->add_option("--bus-energy", import.bus_energy, "stream-accelerator: pJ per bit of buses instead of Stream's")
      ->check(number_above(0, true));

  monet::cli::PluginsOptions plugins;
  CLI::App* plugins_cmd = app.add_subcommand("plugins", "list the plugins found, or describe one");
  plugins_cmd->add_option("--describe", plugins.describe, "plugin name: print its parameters and documentation");
  plugins_cmd->add_option("--kind", plugins.kind, "only plugins of this kind");

  monet::cli::CompareStreamOptions compare;
  CLI::App* compare_cmd =
      app.add_subcommand("compare-stream", "compare a run with Stream's per-CN trace, CN by CN (docs/scheduling.md)");
  compare_cmd->add_option("trace", compare.trace, "Stream's CN trace (.json or .json.gz, tests/data/stream/cn_trace_README.md)")->required();
  compare_cmd->add_option("results", compare.results, "the run's results folder (schedule.csv, results.json)")->required();
  compare_cmd->add_option("--json", compare.json_out, "also write every number to this JSON file");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << ("error: " + std::string(e.what()) + " (run 'monet --help' for usage)\n");  // one line, like every error
    return 2;
  }

  auto logger = spdlog::stderr_color_mt("monet");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(spdlog::level::from_str(log_level));

  if (version) {
    std::cout << "monet " << monet::kVersion << " (git " << monet::git_commit() << ", plugin API "
              << monet::kPluginApiVersion << ", ABI tag " << monet::abi_tag_hex(monet::kPluginAbiTag) << ")\n";
    return 0;
  }
  if (*run_cmd) return monet::cli::run_command(run);
  if (*validate_cmd) return monet::cli::validate_command(validate_file);
  if (*plugins_cmd) return monet::cli::plugins_command(plugins);
  if (*inspect_cmd) return monet::cli::inspect_command(inspect);
  if (*import_cmd) return monet::cli::import_command(import);
  if (*cost_cmd) return monet::cli::cost_command(cost);
  if (*compare_cmd) return monet::cli::compare_stream_command(compare);
  std::cout << app.help();
  return 0;
}

}  // namespace

/// "rank 2: " before a message of a serving MPI rank (rank 0's messages are the run's own).
std::string rank_prefix() {
  const int rank = monet::current_rank();
  return rank > 0 ? "rank " + std::to_string(rank) + ": " : "";
}

int main(int argc, char** argv) {
  // MPI ends with the process: a failing serving rank ends every rank (docs/distributed.md).
  try {
    const int code = real_main(argc, argv);
    monet::end_ranks(false);
    return code;
  } catch (const monet::UserError& e) {
    // Bad input seen while every rank prepares the experiment: the lowest failing rank reports it, once.
    const int first = monet::cli::agree_on_setup(true);
    if (first < 0 || first == monet::current_rank()) std::cerr << (rank_prefix() + e.what() + "\n");  // one write
    monet::end_ranks(first < 0, 2);
    return 2;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << (rank_prefix() + (what.rfind("internal error", 0) == 0 ? what : "internal error: " + what) + "\n");
    monet::end_ranks(true);
    return 1;
  }
}
