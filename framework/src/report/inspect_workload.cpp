#include "monet/report/inspect_workload.hpp"

#include <filesystem>

#include "monet/config/params_toml.hpp"
#include "monet/config/toml_reader.hpp"
#include "monet/experiment/experiment.hpp"
#include "monet/plugin/interfaces.hpp"
#include "monet/training/checkpoint_rotor.hpp"
#include "monet/training/offload.hpp"
#include "monet/training/precision.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace fs = std::filesystem;

InspectedWorkload inspect_workload(const InspectRequest& o, const Registry& registry) {
  InspectedWorkload out;
  const fs::path file = o.workload;
  std::error_code ec;
  if (!fs::exists(file, ec)) throw UserError(SourceLocation{o.workload}, "file not found");
  const PluginHandle* frontend = nullptr;
  if (!o.plugin.empty()) {
    frontend = &registry.require(PluginKind::frontend, o.plugin, SourceLocation{"--plugin"});
  } else {
    frontend = registry.frontend_for(file);
    if (!frontend) {
      throw UserError(SourceLocation{o.workload}, "no workload frontend reads '" + file.extension().string() +
                                                      "' files; frontends: " + registry.frontend_extensions());
    }
  }
  // Frontend parameters from the command line, validated like an experiment's [workload] section.
  toml::table params;
  for (const std::string& s : o.sets) {
    // Frontend parameters as in an experiment: "workload.dims.seq=128" and "dims.seq=128" are the same.
    apply_override(params, s.rfind("workload.", 0) == 0 ? s.substr(9) : s);
  }
  if (o.batch > 0) params.insert_or_assign("batch", o.batch);
  TableReader reader(params, "<command line>", "workload", fs::current_path());
  const ParamValues values = read_params(reader, frontend->info.params);
  reader.finish();
  GraphPtr graph = registry.create<WorkloadFrontend>(*frontend, values)->load(file);
  std::vector<CheckpointRegion>& regions = out.regions;
  std::optional<CheckpointSolve>& checkpoint_solve = out.solve;  // how optimal=BUDGET was solved
  GraphPtr rotor_step;                               // solver rotor: the step with its nested recomputation
  if (!o.checkpoint.empty() && !o.training) throw UserError(SourceLocation{"--checkpoint"}, "needs --training");
  if (!o.checkpoint_semantics.empty() && o.checkpoint.empty()) {
    throw UserError(SourceLocation{"--checkpoint-semantics"}, "says what --checkpoint recomputes; there is none");
  }
  if (!o.checkpoint_solver.empty() && o.checkpoint.rfind("optimal=", 0) != 0) {
    throw UserError(SourceLocation{"--checkpoint-solver"}, "solves --checkpoint optimal=BUDGET; there is none");
  }
  if (o.training) {
    TrainingSettings settings;
    settings.micro_batches = o.micro_batches;
    settings.loss = o.loss;
    if (!o.precision.empty()) {
      settings.precision = Precision::preset_named(o.precision);
      if (!settings.precision) {
        throw UserError("--precision '" + o.precision + "' is not a preset; presets: " + join(Precision::preset_names()) +
                        did_you_mean(o.precision, Precision::preset_names()));
      }
    }
    const PluginHandle& bw = registry.require(PluginKind::backward, "autodiff", SourceLocation{"--training"});
    graph = registry.create<BackwardGenerator>(bw, default_params(bw.info.params, "autodiff"))->generate(*graph, settings);
    const PluginHandle& opt = registry.require(PluginKind::optimizer, o.optimizer, SourceLocation{"--optimizer"});
    graph = registry.create<OptimizerModel>(opt, default_params(opt.info.params, o.optimizer))->apply(*graph, settings);
    if (!o.checkpoint.empty()) {
      CheckpointPolicy policy = parse_checkpoint_policy(o.checkpoint, SourceLocation{"--checkpoint"});
      if (!o.checkpoint_semantics.empty()) policy.semantics = *parse_recompute_semantics(o.checkpoint_semantics);
      if (policy.kind == CheckpointPolicy::Kind::optimal) {
        // Memory as reported: after mixed precision. Costs: recomputed MACs (no accelerator here).
        GraphFinish finish;
        if (settings.precision) finish = [&](const GraphPtr& g) { return apply_precision(*g, *settings.precision); };
        CheckpointSolver solver;
        solver.where = SourceLocation{"--checkpoint-solver"};
        if (!o.checkpoint_solver.empty()) solver = parse_checkpoint_solver(o.checkpoint_solver, solver.where);
        checkpoint_solve.emplace();
        if (solver.name == "rotor") {  // nested recomputation: a step of its own, its top-level runs as regions
          regions = rotor_regions(graph, policy, {}, finish, &*checkpoint_solve, &rotor_step);
        } else {
          regions = optimal_regions(graph, policy, {}, finish, solver, &*checkpoint_solve);
        }
      } else {
        regions = checkpoint_regions(*graph, policy);
      }
      const GraphPtr before = graph;
      graph = rotor_step ? rotor_step : apply_checkpointing(*graph, regions);
      for (CheckpointRegion& r : regions) {  // the same regions, by the operator ids of the new graph
        for (OperatorId& op : r.operators) op = graph->find_operator(before->op(op).name)->id;
      }
    }
    if (settings.precision) graph = apply_precision(*graph, *settings.precision);
  }
  // Offloading: which saved activations the scheduler would page out, and the backward activation peak then.
  std::string& offload_json = out.offload_json;
  std::string& offload_text = out.offload_text;
  if (!o.offload.empty()) {
    if (!o.training) throw UserError(SourceLocation{"--offload"}, "needs --training");
    OffloadPolicy policy;
    policy.where = SourceLocation{"--offload"};
    for (std::size_t start = 0; start <= o.offload.size();) {
      const auto comma = o.offload.find(',', start);
      const std::string g = o.offload.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!g.empty()) policy.modules.push_back(g);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    const std::vector<TensorId> tensors = offloaded_tensors(*graph, policy);
    std::int64_t bytes = 0;
    std::string names;
    for (TensorId t : tensors) {
      bytes += graph->tensor(t).bytes();
      names += std::string(names.empty() ? "" : ", ") + "\"" + graph->tensor(t).name + "\"";
    }
    const std::int64_t peak = offloaded_peak_activation_bytes(*graph, tensors);
    offload_json = "\"offload\": {\"modules\": \"" + policy.text() + "\", \"tensors\": [" + names +
                   "], \"saved_bytes\": " + std::to_string(bytes) + ", \"peak_activation_bytes\": " + std::to_string(peak) + "}";
    offload_text = "offloaded (" + policy.text() + "): " + std::to_string(tensors.size()) + " tensors, " +
                   with_thousands(bytes) + " B; backward peak activations with offloading " + with_thousands(peak) + " B\n";
  }
  out.graph = graph;
  return out;
}

std::string inspected_json(const InspectedWorkload& w, const InspectRequest& o) {
  std::string j = inspect_json(*w.graph, fs::path(o.workload).string(), o.training, w.regions, w.solve ? &*w.solve : nullptr);
  if (!w.offload_json.empty()) {
    // Inside "training": its object is the last member of the document.
    const auto at = j.find("\"training\": {");
    if (at != std::string::npos) j.insert(at + 13, w.offload_json + ", ");
  }
  return j;
}

std::string inspected_text(const InspectedWorkload& w, const InspectRequest& o) {
  std::string t = inspect_text(*w.graph);
  if (o.training) t += inspect_training_text(*w.graph, w.regions);
  return t + w.offload_text;
}

}  // namespace monet
