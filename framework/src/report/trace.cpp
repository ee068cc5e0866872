// trace.json: the schedule in Chrome's trace format, written directly (10^5 events: no JSON tree in between).
#include <charconv>

#include "monet/report/plots.hpp"

namespace monet {

namespace {

class TraceWriter {
 public:
  void str(std::string_view s) {
    out_ += '"';
    for (char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += c;
          }
      }
    }
    out_ += '"';
  }
  template <class T>
  void number(T v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }
  /// "key": (the value follows), comma-separated within an object.
  void key(std::string_view k) {
    if (!first_) out_ += ',';
    first_ = false;
    str(k);
    out_ += ':';
  }
  void open(char c) {
    out_ += c;
    first_ = true;
  }
  void close(char c) {
    out_ += c;
    first_ = false;
  }
  /// The next array element.
  void element() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  void raw(std::string_view s) { out_ += s; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  bool first_ = true;
};

}  // namespace

std::string trace_json(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  TraceWriter w;
  w.open('{');
  w.key("traceEvents");
  w.open('[');
  auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
    w.element();
    w.open('{');
    w.key("ph"), w.str("M"), w.key("pid"), w.number(pid), w.key("tid"), w.number(tid), w.key("name"), w.str(what);
    w.key("args"), w.open('{'), w.key("name"), w.str(name), w.close('}');
    w.close('}');
  };
  meta(1, 0, "process_name", "cores");
  meta(2, 0, "process_name", "links");
  for (const CoreInstance& c : acc.cores) meta(1, c.id, "thread_name", c.name + " (" + c.core->name + ")");
  for (std::size_t l = 0; l < acc.links.size(); ++l) meta(2, static_cast<int>(l), "thread_name", acc.links[l].name);
  // A complete event ("ph": "X") per CN and transfer; timestamps are cycles (shown as microseconds).
  auto event = [&](int pid, int tid, const std::string& name, const std::string& cat, std::int64_t ts, std::int64_t dur) {
    w.element();
    w.open('{');
    w.key("ph"), w.str("X"), w.key("pid"), w.number(pid), w.key("tid"), w.number(tid), w.key("name"), w.str(name);
    w.key("cat"), w.str(cat), w.key("ts"), w.number(ts), w.key("dur"), w.number(dur);
    w.key("args"), w.open('{');
  };
  for (const ScheduledNode& n : r.best.nodes) {
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    if (n.core < 0 || n.end <= n.start) continue;
    event(1, n.core, cn_name(g, cn), to_string(op.kind), n.start, n.end - n.start);
    std::int64_t macs = is_mac_kind(op.kind) ? 1 : 0;
    for (const Range& rg : cn.ranges) macs *= rg.size();
    w.key("operator"), w.str(op.name), w.key("phase"), w.str(to_string(op.phase));
    w.key("energy_pj"), w.number(n.cost.energy_pj), w.key("macs"), w.number(macs), w.key("stack"), w.number(cn.stack);
    if (!n.cost.mapping.empty()) w.key("mapping"), w.str(n.cost.mapping);
    if (n.streamed.any()) {
      w.key("streamed_operands"), w.open('[');
      for (int s = 0; s < kSlotCount; ++s) {
        if (n.streamed.slot[s]) w.element(), w.str(to_string(static_cast<OperandSlot>(s)));
      }
      w.close(']');
    }
    w.key("tensors"), w.open('[');
    for (const Operand& o : op.operands) w.element(), w.str(g.tensor(o.tensor).name);
    w.close(']');
    w.close('}'), w.close('}');
  }
  for (const Transfer& t : r.best.transfers) {
    if (t.end <= t.start) continue;
    event(2, t.link, t.tensor == kNone ? to_string(t.cause) : g.tensor(t.tensor).name, to_string(t.cause), t.start,
          t.end - t.start);
    w.key("from"), w.str(acc.endpoint_name(t.from)), w.key("to"), w.str(acc.endpoint_name(t.to));
    w.key("bits"), w.number(t.bits), w.key("bandwidth_bits_per_cycle"), w.number(t.bandwidth);
    w.key("energy_pj"), w.number(t.energy_pj);
    if (t.cn >= 0) w.key("for"), w.str(cn_name(g, cns.nodes[static_cast<std::size_t>(t.cn)]));
    w.close('}'), w.close('}');
  }
  w.close(']');
  w.key("displayTimeUnit"), w.str("ns");
  w.key("otherData"), w.open('{'), w.key("experiment"), w.str(p.experiment.name);
  w.key("time_unit"), w.str("cycles (shown as microseconds)"), w.close('}');
  w.close('}');
  w.raw("\n");
  return w.take();
}

}  // namespace monet
