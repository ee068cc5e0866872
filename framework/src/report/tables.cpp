// The per-CN and per-transfer tables of a run: schedule.csv and transfers.csv (results.json keeps the summary).
#include "csv.hpp"
#include "monet/report/report.hpp"

namespace monet {

namespace {

std::string endpoint(const Accelerator& acc, int id) { return acc.endpoint_name(id); }

std::string streamed_slots(const StreamedOperands& s) {
  std::string out;
  for (int k = 0; k < kSlotCount; ++k) {
    if (!s.slot[k]) continue;
    if (!out.empty()) out += ' ';
    out += to_string(static_cast<OperandSlot>(k));
  }
  return out;
}

}  // namespace

std::string schedule_csv(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  const CNGraph& cns = p.evaluator->cns();
  detail::CsvWriter csv(
      "cn,name,operator,kind,phase,core,start_cycle,end_cycle,latency_cycles,macs,energy_pj,mac_energy_pj,"
      "onchip_memory_energy_pj,offchip_energy_pj,offchip_read_bits,offchip_write_bits,bound,stack,group,groups,"
      "streamed_operands,mapping");
  for (const ScheduledNode& n : r.best.nodes) {
    const ComputationNode& cn = cns.nodes[static_cast<std::size_t>(n.cn)];
    const Operator& op = g.op(cn.op);
    std::int64_t macs = is_mac_kind(op.kind) ? 1 : 0;
    for (const Range& rg : cn.ranges) macs *= rg.size();
    const Cost& c = n.cost;
    csv.integer(n.cn).text(cn_name(g, cn)).text(op.name).text(to_string(op.kind)).text(to_string(op.phase));
    csv.text(endpoint(acc, n.core)).integer(n.start).integer(n.end).integer(n.end - n.start).integer(macs);
    csv.number(c.energy_pj).number(c.compute_energy_pj).number(c.memory_energy_pj - c.offchip_energy_pj).number(c.offchip_energy_pj);
    csv.integer(c.offchip_read_bits).integer(c.offchip_write_bits).text(c.bound);
    csv.integer(cn.stack).integer(cn.group).integer(cn.groups).text(streamed_slots(n.streamed)).text(c.mapping).end_row();
  }
  return csv.take();
}

std::string transfers_csv(const PreparedExperiment& p, const RunResult& r) {
  const Graph& g = *p.graph;
  const Accelerator& acc = *p.experiment.accelerator;
  detail::CsvWriter csv(
      "tensor,from,to,link,cause,for_cn,start_cycle,end_cycle,bits,bandwidth_bits_per_cycle,read_energy_pj,"
      "link_energy_pj,write_energy_pj,energy_pj");
  for (const Transfer& t : r.best.transfers) {
    csv.text(t.tensor == kNone ? "" : g.tensor(t.tensor).name).text(endpoint(acc, t.from)).text(endpoint(acc, t.to));
    csv.text(acc.links[static_cast<std::size_t>(t.link)].name).text(to_string(t.cause));
    if (t.cn >= 0) {
      csv.integer(t.cn);
    } else {
      csv.text("");
    }
    csv.integer(t.start).integer(t.end).integer(t.bits).number(t.bandwidth);
    csv.number(t.read_energy_pj).number(t.link_energy_pj).number(t.write_energy_pj).number(t.energy_pj).end_row();
  }
  return csv.take();
}

}  // namespace monet
