// [training]: the mode, the loss, the micro-batches, the backward and optimizer plugins, and [training.checkpoint]
// (the checkpointing policy, its solver and the activations offloaded).
#include "experiment_readers.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {

/// [training.checkpoint]: exactly one of `segments`, `modules`, `every_k`, `budget` (the optimal policy, with an
/// optional `cost`, `solver`, `time_limit_s` and `node_limit`), `blocks` or `policy = "none"`; and, with any of them,
/// `offload` (module names or globs) and `semantics` (what a region runs again: "pytorch", the default, or
/// "minimal").
CheckpointPolicy read_checkpoint(TableReader& t, OffloadPolicy& offload, CheckpointSolver& solver) {
  CheckpointPolicy p;
  p.where = t.where();
  std::vector<std::string> given;
  for (const char* key : {"policy", "segments", "modules", "every_k", "budget", "blocks"}) {
    if (t.has(key)) given.push_back(key);
  }
  if (given.size() > 1) {
    throw UserError(t.where(given[1]), "[training.checkpoint] takes one policy: " + join(given, " and ") + " are given");
  }
  if (t.has("policy")) {
    t.choice("policy", {"none"});  // the other policies are spelled by their own key
  } else if (t.has("segments")) {
    p.kind = CheckpointPolicy::Kind::segments;
    p.where = t.where("segments");
    p.segments = *t.integer("segments", Bounds::at_least(1));
  } else if (t.has("modules")) {
    p.kind = CheckpointPolicy::Kind::modules;
    p.where = t.where("modules");
    const toml::node* n = t.raw().get("modules");
    if (n && n->is_string()) p.modules = {*t.string("modules")};
    else p.modules = *t.string_list("modules");
    if (p.modules.empty()) throw UserError(p.where, "[training.checkpoint] modules needs at least one name or glob");
  } else if (t.has("every_k")) {
    p.kind = CheckpointPolicy::Kind::every_k;
    p.where = t.where("every_k");
    const toml::node* n = t.raw().get("every_k");
    if (n && n->is_string()) t.choice("every_k", {"sqrt"});
    else p.every_k = *t.integer("every_k", Bounds::at_least(1));
  } else if (t.has("blocks")) {
    p.kind = CheckpointPolicy::Kind::blocks;  // may be empty: the checkpoint genes' "keep everything"
    p.where = t.where("blocks");
    p.blocks = *t.string_list("blocks");
  } else if (t.has("budget")) {
    p.kind = CheckpointPolicy::Kind::optimal;
    p.where = t.where("budget");
    p.budget = *t.integer("budget", Bounds::at_least(1));
    p.cost = t.choice("cost", {"macs", "latency", "energy"}).value_or("macs");
    if (t.has("solver")) {
      solver.where = t.where("solver");
      solver.name = *t.choice("solver", {"dp", "segments", "rotor", "milp"});
    }
    if (t.has("time_limit_s")) {
      if (solver.name != "milp") t.fail("time_limit_s", "applies to solver = \"milp\" only");
      solver.where = t.where("time_limit_s");
      solver.time_limit_s = *t.number("time_limit_s", Bounds::non_negative());
    }
    if (t.has("node_limit")) {
      if (solver.name != "milp") t.fail("node_limit", "applies to solver = \"milp\" only");
      solver.where = t.where("node_limit");
      solver.node_limit = *t.integer("node_limit", Bounds::at_least(0));
    }
  }
  if (t.has("semantics")) p.semantics = *parse_recompute_semantics(*t.choice("semantics", {"pytorch", "minimal"}));
  for (const char* key : {"cost", "solver", "time_limit_s", "node_limit"}) {
    if (p.kind != CheckpointPolicy::Kind::optimal && t.has(key)) {
      t.fail(key, "belongs to the optimal policy (budget = B)");
    }
  }
  if (t.has("offload")) {
    offload.where = t.where("offload");
    const toml::node* n = t.raw().get("offload");
    if (n && n->is_string()) offload.modules = {*t.string("offload")};
    else offload.modules = *t.string_list("offload");
  }
  t.finish();
  return p;
}

}  // namespace

namespace detail {

void read_training(TableReader& root, Experiment& e, const Registry& registry) {
  auto t = root.table("training");
  if (!t) return;
  e.training_mode = t->choice("mode", {"inference", "training"}).value_or("inference");
  e.training.loss = t->choice("loss", {"cross_entropy", "binary_cross_entropy"}).value_or("cross_entropy");
  e.training.micro_batches = t->integer("micro_batches", Bounds::at_least(1)).value_or(1);
  if (auto c = t->table("checkpoint")) e.training.checkpoint = read_checkpoint(*c, e.offload, e.checkpoint_solver);
  for (const char* section : {"backward", "optimizer"}) {
    const bool backward = std::string(section) == "backward";
    const PluginKind kind = backward ? PluginKind::backward : PluginKind::optimizer;
    const std::string def = backward ? "autodiff" : "sgd";
    if (e.training_mode != "training") {
      t->mark_used(section);  // kept for when the mode is switched (e.g. with --set training.mode=training)
      continue;
    }
    auto sub = t->table(section);
    PluginChoice c;
    if (sub) {
      c = choose(*sub, kind, def, registry);
    } else {
      c.where = t->where();
      c.plugin = &registry.require(kind, def, c.where);
      c.params = default_params(c.plugin->info.params, root.file() + ": [training." + std::string(section) + "]");
    }
    (backward ? e.backward : e.optimizer) = std::move(c);
  }
  t->finish();
}

}  // namespace detail

}  // namespace monet
