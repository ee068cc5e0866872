#include "monet/ir/workload_toml.hpp"

#include <sstream>

#include "monet/config/params.hpp"

namespace monet {

namespace {
std::string q(const std::string& s) { return to_string(ParamValue(s)); }
std::string ints(const std::vector<std::int64_t>& v) { return to_string(ParamValue(v)); }
}  // namespace

std::string workload_toml(const Graph& g) {
  std::ostringstream out;
  out << "# Written by monet: every operator as a loop nest. Read it with the 'toml' frontend.\n"
      << "[workload]\nname = " << q(g.name()) << "\n";
  for (const Tensor& t : g.tensors()) {
    if (t.producer != kNone) continue;
    if (t.role == TensorRole::input || t.role == TensorRole::label) {
      out << "\n[[inputs]]\nname = " << q(t.name) << "\nshape = " << ints(t.shape) << "\ndtype = " << q(to_string(t.dtype))
          << "\nrole = " << q(to_string(t.role)) << "\n";
    }
  }
  for (const Tensor& t : g.tensors()) {
    if (t.producer != kNone || t.role == TensorRole::input || t.role == TensorRole::label) continue;
    out << "\n[[tensors]]\nname = " << q(t.name) << "\nshape = " << ints(t.shape) << "\ndtype = " << q(to_string(t.dtype))
        << "\nrole = " << q(to_string(t.role)) << "\n";
    // A table's update rule where its gradient is row-sparse (the default, row-wise Adagrad, left out).
    if (t.sparse_update != SparseUpdate::rowwise_adagrad) out << "sparse_update = " << q(to_string(t.sparse_update)) << "\n";
    if (t.frozen) out << "frozen = true\n";
  }
  for (const Operator& op : g.operators()) {
    const auto names = op.dim_names();
    out << "\n[[layers]]\nname = " << q(op.name) << "\nop = \"loopnest\"\nkind = " << q(to_string(op.kind))
        << "\ntype = " << q(op.type) << "\n";
    if (op.phase != Phase::forward) out << "phase = " << q(to_string(op.phase)) << "\n";
    std::vector<std::int64_t> sizes;
    for (const LoopDim& d : op.dims) sizes.push_back(d.size);
    out << "dims = " << to_string(ParamValue(names)) << "\nsizes = " << ints(sizes) << "\n";
    out << "ops_per_iteration = " << to_string(ParamValue(op.ops_per_iteration)) << "\n";
    auto operand = [&](const Operand& o, bool output) {
      const Tensor& t = g.tensor(o.tensor);
      std::string s = "{ tensor = " + q(t.name);
      if (output) {
        s += ", shape = " + ints(t.shape) + ", dtype = " + q(to_string(t.dtype));
        if (t.role != TensorRole::activation) s += ", role = " + q(to_string(t.role));
      } else {
        s += ", slot = " + q(to_string(o.slot));
      }
      if (!o.access.empty()) {
        std::vector<std::string> idx;
        for (const AffineExpr& e : o.access) idx.push_back(e.str(names));
        s += ", index = " + to_string(ParamValue(idx));
      }
      if (o.precision_bits != bits_of(t.dtype)) s += ", precision_bits = " + std::to_string(o.precision_bits);
      if (o.partial_sum_bits > 0) s += ", partial_sum_bits = " + std::to_string(o.partial_sum_bits);
      if (o.indirect) s += ", indirect = true";
      return s + " }";
    };
    std::vector<std::string> outs;
    std::vector<std::string> ins;
    for (const Operand& o : op.operands) (o.is_output() ? outs : ins).push_back(operand(o, o.is_output()));
    auto list = [](const std::vector<std::string>& items) {
      std::string s = "[";
      for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ",\n  " : "\n  ") + items[i];
      return s + (items.empty() ? "]" : ",\n]");
    };
    out << "outputs = " << list(outs) << "\ninputs = " << list(ins) << "\n";
    if (!op.attributes.empty()) {
      out << "attributes = {";
      bool first = true;
      for (const auto& [k, v] : op.attributes) {
        out << (first ? " " : ", ") << q(k) << " = " << ints(v);
        first = false;
      }
      out << " }\n";
    }
    if (!op.module.empty()) out << "module = " << q(op.module) << "\n";
    if (!op.source_nodes.empty()) out << "source_nodes = " << to_string(ParamValue(op.source_nodes)) << "\n";
    if (!op.after.empty()) {
      std::vector<std::string> names;
      for (OperatorId a : op.after) names.push_back(g.op(a).name);
      out << "after = " << to_string(ParamValue(names)) << "\n";
    }
  }
  return out.str();
}

}  // namespace monet
