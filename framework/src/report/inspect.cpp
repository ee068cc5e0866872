#include "monet/report/inspect.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <iomanip>
#include <map>
#include <sstream>

#include "json_parts.hpp"
#include "monet/training/memory.hpp"
#include "monet/util/strings.hpp"

namespace monet {

using json = nlohmann::ordered_json;

namespace {

/// Elements of stored parameters an operator is the first reader of (shared weights count once).
std::int64_t new_parameters(const Graph& g, const Operator& op) {
  std::int64_t n = 0;
  std::vector<TensorId> seen;
  for (const Operand& o : op.operands) {
    const Tensor& t = g.tensor(o.tensor);
    if (o.is_output() || t.role != TensorRole::weight || t.producer != kNone) continue;
    if (t.consumers.empty() || t.consumers.front() != op.id) continue;
    if (std::find(seen.begin(), seen.end(), t.id) != seen.end()) continue;
    seen.push_back(t.id);
    n += t.elements();
  }
  return n;
}

std::string dims_text(const Operator& op) {
  std::string s;
  for (const LoopDim& d : op.dims) {
    if (!s.empty()) s += " ";
    s += d.name + "=" + std::to_string(d.size);
  }
  return s.empty() ? "-" : s;
}

const Tensor* first_output(const Graph& g, const Operator& op) {
  for (const Operand& o : op.operands) {
    if (o.is_output()) return &g.tensor(o.tensor);
  }
  return nullptr;
}

std::int64_t output_bytes(const Graph& g, const Operator& op) {
  std::int64_t b = 0;
  for (const Operand& o : op.operands) {
    if (o.is_output()) b += g.tensor(o.tensor).bytes();
  }
  return b;
}

}  // namespace

WorkloadTotals workload_totals(const Graph& g) {
  WorkloadTotals t;
  t.operators = static_cast<std::int64_t>(g.operators().size());
  for (const Operator& op : g.operators()) {
    if (op.phase != Phase::forward) continue;  // the forward pass only (a training graph has more)
    t.macs += op.macs();
    t.vector_ops += op.vector_ops();
  }
  for (const Tensor& x : g.tensors()) {
    if (x.producer != kNone) continue;
    if (x.role == TensorRole::weight) {
      (x.frozen ? t.params_frozen : t.params_trainable) += x.elements();
      t.parameter_bytes += x.bytes();
    } else if (x.role == TensorRole::buffer) {
      t.params_buffers += x.elements();
    }
  }
  for (const Operator& op : g.operators()) {
    if (!op.is_view()) t.activation_bytes += output_bytes(g, op);
    if (op.attributes.contains("passthrough")) t.passthrough.push_back(op.name + " (" + op.type + ")");
  }
  return t;
}

std::string inspect_text(const Graph& g) {
  std::ostringstream out;
  std::size_t name_w = 4;
  for (const Operator& op : g.operators()) name_w = std::max(name_w, op.name.size());
  name_w = std::min<std::size_t>(name_w, 48);
  auto pad = [](std::string s, std::size_t w, bool right = false) {
    if (s.size() > w) s = s.substr(0, w - 1) + "~";
    const std::string fill(w - s.size(), ' ');
    return right ? fill + s : s + fill;
  };
  out << pad("operator", name_w) << "  " << pad("kind", 11) << "  " << pad("type", 18) << "  " << pad("MACs", 15, true)
      << "  " << pad("params", 11, true) << "  " << pad("output", 20) << "  " << pad("out bytes", 11, true)
      << "  loop dims\n";
  for (const Operator& op : g.operators()) {
    const Tensor* y = first_output(g, op);
    out << pad(op.name, name_w) << "  " << pad(to_string(op.kind), 11) << "  " << pad(op.type, 18) << "  "
        << pad(with_thousands(op.macs()), 15, true) << "  " << pad(with_thousands(new_parameters(g, op)), 11, true)
        << "  " << pad(y ? to_string(y->shape) : "-", 20) << "  " << pad(with_thousands(output_bytes(g, op)), 11, true)
        << "  " << dims_text(op) << "\n";
  }
  const WorkloadTotals t = workload_totals(g);
  out << "\nworkload          " << g.name() << "\n"
      << "operators         " << t.operators << "\n"
      << "forward MACs      " << with_thousands(t.macs) << "\n"
      << "vector ops        " << with_thousands(static_cast<long long>(t.vector_ops)) << "\n"
      << "parameters        " << with_thousands(t.params_trainable) << " trainable, " << with_thousands(t.params_frozen)
      << " frozen (" << with_thousands(t.parameter_bytes) << " bytes)\n"
      << "buffers           " << with_thousands(t.params_buffers) << " elements\n"
      << "activations       " << with_thousands(t.activation_bytes) << " bytes written by operators\n";
  if (!t.passthrough.empty()) {
    out << "passthrough       " << t.passthrough.size() << " operators not modelled (zero-cost views): "
        << join(t.passthrough, ", ") << "\n";
  }
  return out.str();
}

std::string inspect_json(const Graph& g, const std::string& file, bool training,
                         const std::vector<CheckpointRegion>& regions, const CheckpointSolve* solve) {
  const WorkloadTotals t = workload_totals(g);
  json j;
  j["workload"] = g.name();
  j["file"] = file;
  j["params_trainable"] = t.params_trainable;
  j["params_frozen"] = t.params_frozen;
  j["params_buffers"] = t.params_buffers;
  j["parameter_bytes"] = t.parameter_bytes;
  j["forward_macs"] = t.macs;
  j["vector_ops"] = t.vector_ops;
  j["activation_bytes"] = t.activation_bytes;
  if (!t.passthrough.empty()) j["passthrough_operators"] = t.passthrough;
  auto tensors = [&](const std::vector<TensorId>& ids) {
    json a = json::array();
    for (TensorId id : ids) {
      const Tensor& x = g.tensor(id);
      a.push_back(json{{"name", x.name}, {"shape", x.shape}, {"dtype", to_string(x.dtype)}, {"role", to_string(x.role)}});
    }
    return a;
  };
  std::vector<TensorId> inputs;
  for (const Tensor& x : g.tensors()) {
    if (x.role == TensorRole::input || x.role == TensorRole::label) inputs.push_back(x.id);
  }
  j["inputs"] = tensors(inputs);
  j["outputs"] = tensors(g.outputs());
  json ops = json::array();
  for (const Operator& op : g.operators()) {
    json dims = json::object();
    for (const LoopDim& d : op.dims) dims[d.name] = d.size;
    const Tensor* y = first_output(g, op);
    json o{{"name", op.name},
           {"kind", to_string(op.kind)},
           {"type", op.type},
           {"dims", dims},
           {"macs", op.macs()},
           {"vector_ops", op.vector_ops()},
           {"params", new_parameters(g, op)},
           {"output_shape", y ? json(y->shape) : json(nullptr)},
           {"output_bytes", output_bytes(g, op)}};
    if (training) o["phase"] = to_string(op.phase);
    if (!op.source_nodes.empty()) o["source_nodes"] = op.source_nodes;
    ops.push_back(std::move(o));
  }
  j["operators"] = ops;
  if (training) j["training"] = detail::training_json(g, training_summary(g), regions, solve);
  return j.dump(1) + "\n";
}

namespace detail {

namespace {
/// Forward operators of a region that run again in the graph, and their MACs.
std::pair<std::size_t, std::int64_t> recomputed(const Graph& g, const CheckpointRegion& r) {
  std::size_t ops = 0;
  std::int64_t macs = 0;
  for (OperatorId o : r.operators) {
    // Nested recomputation (solver = "rotor") runs an operator again as "@recompute2", "@recompute3", ...
    for (int k = 1;; ++k) {
      const Operator* c = g.find_operator(g.op(o).name + "@recompute" + (k > 1 ? std::to_string(k) : ""));
      if (!c) break;
      ++ops;
      macs += c->macs();
    }
  }
  return {ops, macs};
}
}  // namespace


nlohmann::ordered_json checkpoint_solve_json(const CheckpointSolve& x) {
  // The objective's unit is the cost's: MACs, cycles or pJ (a fixed key, so that every run has the same schema).
  json j{{"solver", x.solver},
         {"status", x.status},
         {"cost", x.cost},
         {"budget_bytes", x.budget},
         {"objective", x.objective},
         {"best_bound", x.best_bound},
         {"gap", x.gap},
         {"peak_activation_bytes", x.peak},
         {"blocks", x.blocks},
         {"checkpointed_blocks", x.checkpointed}};
  if (x.solver == "milp") {
    j["time_limit_s"] = x.time_limit_s;
    j["node_limit"] = x.node_limit >= 0 ? json(x.node_limit) : json(nullptr);
    j["nodes"] = x.nodes;
    j["variables"] = x.variables;
    j["rows"] = x.rows;
  }
  return j;
}

nlohmann::ordered_json training_json(const Graph& g, const TrainingSummary& s, const std::vector<CheckpointRegion>& regions,
                                     const CheckpointSolve* solve) {
  const TrainingMemory& m = s.memory;
  json saved = json::array();
  std::map<OperatorId, std::int64_t> by_layer;
  for (const SavedStorage& x : m.saved) by_layer[x.producer] += x.bytes;
  for (const auto& [op, bytes] : by_layer) {
    saved.push_back(json{{"operator", op == kNone ? std::string("(graph inputs)") : g.op(op).name}, {"bytes", bytes}});
  }
  json checkpointed = json::array();
  for (const CheckpointRegion& r : regions) {
    const auto [ops, macs] = recomputed(g, r);
    checkpointed.push_back(json{{"name", r.name},
                                {"operators", r.operators.size()},
                                {"recomputed_operators", ops},
                                {"recompute_macs", macs}});
  }
  json j{{"operators_forward", s.forward.operators},
              {"operators_backward", s.backward_dx.operators + s.backward_dw.operators},
              {"operators_optimizer", s.optimizer.operators},
              {"macs_forward", s.forward.macs},
              {"macs_backward_dx", s.backward_dx.macs},
              {"macs_backward_dw", s.backward_dw.macs},
              {"macs_total", s.forward.macs + s.loss.macs + s.backward_dx.macs + s.backward_dw.macs + s.optimizer.macs},
              {"vector_ops_forward", s.forward.vector_ops},
              {"vector_ops_loss", s.loss.vector_ops},
              {"vector_ops_backward", s.backward_dx.vector_ops + s.backward_dw.vector_ops},
              {"optimizer_ops", s.optimizer.vector_ops},
              {"param_bytes", m.parameter_bytes},
              {"buffer_bytes", m.buffer_bytes},
              {"input_bytes", m.input_bytes},
              {"saved_activation_bytes", m.saved_activation_bytes},
              {"grad_bytes", m.gradient_bytes},
              {"optimizer_state_bytes", m.optimizer_state_bytes},
              {"master_weight_bytes", m.master_weight_bytes},
              {"peak_bytes", m.peak_bytes},
              {"operators_recompute", s.recompute.operators},
              {"recompute_macs", s.recompute.macs},
              {"recompute_vector_ops", s.recompute.vector_ops},
              {"peak_activation_bytes", m.peak_activation_bytes},
              {"peak_saved_activation_bytes", m.peak_saved_activation_bytes},
              {"saved_by_layer", saved}};
  if (!regions.empty()) j["checkpoint_regions"] = checkpointed;
  if (solve) j["checkpoint_solver"] = checkpoint_solve_json(*solve);
  return j;
}

}  // namespace detail

std::string inspect_training_text(const Graph& g, const std::vector<CheckpointRegion>& regions) {
  const TrainingSummary s = training_summary(g);
  const TrainingMemory& m = s.memory;
  std::ostringstream out;
  auto row = [&](const char* phase, const PhaseTotals& t) {
    out << "  " << phase << std::string(14 - std::string(phase).size(), ' ') << std::setw(7) << t.operators
        << " operators  " << std::setw(22) << with_thousands(t.macs) << " MACs  " << std::setw(18)
        << with_thousands(static_cast<long long>(t.vector_ops)) << " vector ops\n";
  };
  out << "\ntraining step     " << g.name() << "\n";
  row("forward", s.forward);
  row("loss", s.loss);
  row("backward dX", s.backward_dx);
  row("backward dW", s.backward_dw);
  row("optimizer", s.optimizer);
  if (s.recompute.operators > 0) row("recompute", s.recompute);
  auto bytes = [&](const char* what, std::int64_t b) {
    out << "  " << what << std::string(std::max<std::size_t>(26, std::string(what).size() + 1) - std::string(what).size(), ' ') << std::setw(18) << with_thousands(b)
        << " bytes\n";
  };
  out << "memory\n";
  bytes("parameters", m.parameter_bytes);
  bytes("buffers", m.buffer_bytes);
  bytes("inputs and labels", m.input_bytes);
  bytes("saved activations", m.saved_activation_bytes);
  bytes("parameter gradients", m.gradient_bytes);
  bytes("optimizer states", m.optimizer_state_bytes);
  bytes("master weights", m.master_weight_bytes);
  bytes("peak (sequential walk)", m.peak_bytes);
  bytes("backward peak activations", m.peak_activation_bytes);
  bytes("backward peak of saved", m.peak_saved_activation_bytes);
  if (!regions.empty()) {
    out << "checkpointed regions (" << regions.size() << ")\n";
    for (const CheckpointRegion& r : regions) {
      const auto [ops, macs] = detail::recomputed(g, r);
      out << "  " << std::left << std::setw(44) << r.name << std::right << std::setw(5) << ops << " of "
          << std::setw(4) << r.operators.size() << " operators recomputed  " << std::setw(16) << with_thousands(macs)
          << " MACs\n";
    }
  }
  return out.str();
}

}  // namespace monet
