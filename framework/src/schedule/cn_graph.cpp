#include "monet/schedule/cn_graph.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "monet/ir/view.hpp"

namespace monet {

std::string cn_name(const Graph& graph, const ComputationNode& cn) {
  const Operator& op = graph.op(cn.op);
  std::string tiled;
  for (std::size_t d = 0; d < op.dims.size() && d < cn.ranges.size(); ++d) {
    const Range& r = cn.ranges[d];
    if (r.begin == 0 && r.end == op.dims[d].size) continue;
    if (!tiled.empty()) tiled += ", ";
    tiled += op.dims[d].name + " " + std::to_string(r.begin) + ":" + std::to_string(r.end);
  }
  return tiled.empty() ? op.name : op.name + "[" + tiled + "]";
}

namespace {

bool overlaps(const std::vector<Range>& a, const std::vector<Range>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].intersect(b[i]).empty()) return false;
  }
  return true;
}

/// A tile writes final values only when it covers the end of every reduction dimension.
bool produces_final(const Operator& op, const ComputationNode& cn) {
  for (int d : op.reduction_dims()) {
    if (cn.ranges[static_cast<std::size_t>(d)].end != op.dims[static_cast<std::size_t>(d)].size) return false;
  }
  return true;
}

void check_tiles(const Graph& graph, const std::vector<ComputationNode>& nodes) {
  std::vector<std::vector<int>> tiles_of(graph.operators().size());
  for (const ComputationNode& cn : nodes) {
    ensure(cn.op >= 0 && static_cast<std::size_t>(cn.op) < graph.operators().size(), "CN refers to no operator");
    const Operator& op = graph.op(cn.op);
    ensure(cn.ranges.size() == op.dims.size(), "CN of '" + op.name + "' has the wrong number of ranges");
    for (std::size_t d = 0; d < op.dims.size(); ++d) {
      const Range& r = cn.ranges[d];
      ensure(!r.empty() && r.begin >= 0 && r.end <= op.dims[d].size,
             "CN " + cn_name(graph, cn) + " has a range outside dimension " + op.dims[d].name);
    }
    tiles_of[static_cast<std::size_t>(cn.op)].push_back(cn.id);
  }
  for (const Operator& op : graph.operators()) {
    const auto& tiles = tiles_of[static_cast<std::size_t>(op.id)];
    ensure(!tiles.empty(), "the fusion strategy produced no computation node for operator '" + op.name + "'");
    std::int64_t volume = 0;
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      const auto& a = nodes[static_cast<std::size_t>(tiles[i])].ranges;
      std::int64_t v = 1;
      for (const Range& r : a) v *= r.size();
      volume += v;
      for (std::size_t j = i + 1; j < tiles.size(); ++j) {
        ensure(!overlaps(a, nodes[static_cast<std::size_t>(tiles[j])].ranges),
               "tiles of operator '" + op.name + "' overlap");
      }
    }
    ensure(volume == op.iterations(), "the tiles of operator '" + op.name + "' do not cover its loop nest exactly");
  }
}

/// The regions of computed or stored tensors behind a read of `region` of tensor `t`: through views (which
/// move no data) to the tensors their producers write.
void resolve(const Graph& graph, TensorId t, const std::vector<Range>& region,
             std::vector<std::pair<TensorId, std::vector<Range>>>& out) {
  if (region_elements(region) == 0) return;
  const Tensor& tensor = graph.tensor(t);
  if (tensor.producer != kNone && graph.op(tensor.producer).is_view()) {
    const Operator& v = graph.op(tensor.producer);
    for (std::size_t k = 0; k < v.operands.size(); ++k) {
      if (v.operands[k].is_output()) continue;
      resolve(graph, v.operands[k].tensor, view_input_region(graph, v, k, region), out);
    }
    return;
  }
  out.emplace_back(t, region);
}

/// A tensor whose values must reach off-chip memory: a graph output, or read by a view that is one.
bool is_sink(const Graph& graph, const Tensor& t) {
  if (t.consumers.empty()) return true;
  for (OperatorId c : t.consumers) {
    const Operator& op = graph.op(c);
    if (!op.is_view()) continue;
    for (const Operand& o : op.operands) {
      if (o.is_output() && is_sink(graph, graph.tensor(o.tensor))) return true;
    }
  }
  return false;
}

}  // namespace

CNGraph connect_tiles(const Graph& graph, std::vector<ComputationNode> nodes) {
  for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i].id = static_cast<int>(i);
  check_tiles(graph, nodes);
  CNGraph g;
  g.nodes = std::move(nodes);
  const std::size_t n = g.nodes.size();
  g.in_edges.assign(n, {});
  g.out_edges.assign(n, {});
  g.source_reads.assign(n, {});
  g.sink_bits.assign(n, 0);
  g.output_bits.assign(n, 0);
  g.output_role.assign(n, TensorRole::activation);

  std::vector<std::vector<int>> tiles_of(graph.operators().size());
  for (const ComputationNode& cn : g.nodes) tiles_of[static_cast<std::size_t>(cn.op)].push_back(cn.id);

  for (const ComputationNode& cn : g.nodes) {
    const Operator& op = graph.op(cn.op);
    if (op.is_view()) continue;  // aliases its input: no data of its own
    bool first = true;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      if (!o.is_output()) continue;
      const Tensor& t = graph.tensor(o.tensor);
      g.output_bits[static_cast<std::size_t>(cn.id)] += region_elements(op.operand_region(k, cn.ranges, t)) * bits_of(t.dtype);
      if (first) g.output_role[static_cast<std::size_t>(cn.id)] = t.role;
      first = false;
    }
  }

  // Regions each tile writes, per produced tensor: (tile, region) pairs.
  std::vector<std::vector<std::pair<int, std::vector<Range>>>> written(graph.tensors().size());
  for (const ComputationNode& cn : g.nodes) {
    const Operator& op = graph.op(cn.op);
    if (op.is_view() || !produces_final(op, cn)) continue;
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      if (!o.is_output()) continue;
      const Tensor& t = graph.tensor(o.tensor);
      auto region = op.operand_region(k, cn.ranges, t);
      if (is_sink(graph, t)) g.sink_bits[static_cast<std::size_t>(cn.id)] += region_elements(region) * bits_of(t.dtype);
      written[static_cast<std::size_t>(o.tensor)].emplace_back(cn.id, std::move(region));
    }
  }

  std::map<std::pair<TensorId, std::vector<std::int64_t>>, int> items;  // (tensor, region bounds) -> item
  auto source_item = [&](TensorId t, const std::vector<Range>& region, std::int64_t bits) {
    std::vector<std::int64_t> key;
    for (const Range& r : region) {
      key.push_back(r.begin);
      key.push_back(r.end);
    }
    auto [it, fresh] = items.emplace(std::make_pair(t, key), static_cast<int>(g.source_items.size()));
    if (fresh) g.source_items.push_back(SourceItem{t, bits, 0});
    return it->second;
  };
  std::map<std::tuple<int, int, TensorId>, std::pair<std::int64_t, OperandSlot>> edge_bits;  // (src, dst, tensor)
  std::vector<std::pair<TensorId, std::vector<Range>>> reads;
  std::set<std::pair<int, int>> aliases;  // order-only edges (src, dst): views after what they alias, `after`
  for (const ComputationNode& cn : g.nodes) {
    const Operator& op = graph.op(cn.op);
    if (op.is_view()) {  // its readers read through it; it follows what it aliases, for reports
      for (std::size_t k = 0; k < op.operands.size(); ++k) {
        if (op.operands[k].is_output()) continue;
        reads.clear();
        resolve(graph, op.operands[k].tensor, op.operand_region(k, cn.ranges, graph.tensor(op.operands[k].tensor)), reads);
        for (const auto& [tid, region] : reads) {
          for (const auto& [src, wregion] : written[static_cast<std::size_t>(tid)]) {
            if (overlaps(region, wregion)) aliases.emplace(src, cn.id);
          }
        }
      }
      continue;
    }
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      if (o.is_output()) continue;
      reads.clear();
      resolve(graph, o.tensor, op.operand_region(k, cn.ranges, graph.tensor(o.tensor)), reads);
      for (const auto& [tid, region] : reads) {
        const Tensor& t = graph.tensor(tid);
        if (t.producer == kNone) {
          auto& sources = g.source_reads[static_cast<std::size_t>(cn.id)];
          const std::int64_t bits = region_elements(region) * bits_of(t.dtype);
          auto same = std::find_if(sources.begin(), sources.end(), [&](const SourceRead& r) { return r.tensor == t.id; });
          if (same != sources.end()) {
            if (bits > same->bits) {  // the same tensor read twice: keep the larger region
              same->bits = bits;
              same->item = source_item(t.id, region, bits);
            }
            continue;
          }
          sources.push_back(SourceRead{t.id, o.slot, bits, source_item(t.id, region, bits)});
          continue;
        }
        for (const auto& [src, wregion] : written[static_cast<std::size_t>(tid)]) {
          std::vector<Range> common(region.size());
          for (std::size_t a = 0; a < region.size(); ++a) common[a] = region[a].intersect(wregion[a]);
          const std::int64_t elems = region_elements(common);
          if (elems == 0) continue;
          auto [it, fresh] = edge_bits.try_emplace({src, cn.id, t.id}, 0, o.slot);
          it->second.first = std::max(it->second.first, elems * bits_of(t.dtype));
        }
      }
    }
  }
  for (const auto& [key, value] : edge_bits) {
    const auto [src, dst, tensor] = key;
    const int e = static_cast<int>(g.edges.size());
    g.edges.push_back(CNEdge{src, dst, tensor, value.first, value.second});
    g.out_edges[static_cast<std::size_t>(src)].push_back(e);
    g.in_edges[static_cast<std::size_t>(dst)].push_back(e);
  }
  // `after`: an operator starts when every tile of the operators it is declared after has finished (layer lists
  // whose layers read their own copies of their inputs).
  for (const ComputationNode& cn : g.nodes) {
    for (OperatorId a : graph.op(cn.op).after) {
      for (int src : tiles_of[static_cast<std::size_t>(a)]) aliases.emplace(src, cn.id);
    }
  }
  for (const auto& [src, dst] : aliases) {
    const int e = static_cast<int>(g.edges.size());
    CNEdge edge{src, dst, kNone, 0};
    edge.order_only = true;
    g.edges.push_back(edge);
    g.out_edges[static_cast<std::size_t>(src)].push_back(e);
    g.in_edges[static_cast<std::size_t>(dst)].push_back(e);
  }
  for (const auto& reads : g.source_reads) {
    for (const SourceRead& r : reads) ++g.source_items[static_cast<std::size_t>(r.item)].readers;
  }
  // Every CN must be reachable in dependency order (Kahn's algorithm): a cycle would be a fusion strategy bug.
  std::vector<int> waiting(n, 0);
  std::vector<int> ready;
  for (std::size_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<int>(g.in_edges[i].size());
    if (waiting[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t seen = 0;
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    ++seen;
    for (int e : g.out_edges[static_cast<std::size_t>(v)]) {
      const auto d = static_cast<std::size_t>(g.edges[static_cast<std::size_t>(e)].dst);
      if (--waiting[d] == 0) ready.push_back(static_cast<int>(d));
    }
  }
  ensure(seen == n, "the computation nodes depend on each other in a cycle");
  return g;
}

}  // namespace monet
