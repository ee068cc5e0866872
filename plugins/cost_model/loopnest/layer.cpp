// A monet operator tile seen as a ZigZag layer (section 2): loop dims, operands O/W/I with their memory
// operands, relevancy from the access relations, partially-relevant (sliding-window) relations, precisions.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "model.hpp"

namespace monet::loopnest {

double py_round(double x) { return std::nearbyint(x); }  // default rounding mode: half to even, like Python

namespace {

bool is_float(ElementType t) {
  return t == ElementType::fp32 || t == ElementType::fp16 || t == ElementType::bf16 || t == ElementType::fp64 ||
         t == ElementType::fp8;
}

/// ZigZag's loop-dim order for the operators its ONNX parser builds (it decides LPF-merging ties, 5.2). Only
/// monet's own conv/gemm operators (which carry their ONNX attributes) are reordered; a generic loop nest, such
/// as an imported ZigZag layer, keeps the order it was written in, as ZigZag keeps a layer file's loop_dims.
std::vector<std::string> zigzag_order(const Operator& op) {
  if (op.type.find('.') != std::string::npos) return {};  // backward operators (Conv.dX, ...)
  if (op.kind == OpKind::conv && op.attributes.contains("kernel_shape")) return {"B", "K", "G", "OX", "OY", "C", "FX", "FY"};
  if ((op.kind == OpKind::gemm || op.kind == OpKind::matmul) && op.attributes.contains("transB")) {
    return {"C", "D", "K", "B", "H"};
  }
  return {};
}

}  // namespace

Layer make_layer(const Graph& graph, const Operator& op, std::span<const Range> tile, const Options& options) {
  Layer L;
  L.name = op.name;
  L.type = op.type;
  // Loop dims, in ZigZag's order for its own operator types in compatibility mode.
  std::vector<int> order(op.dims.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.zigzag_compat) {
    const auto zz = zigzag_order(op);
    if (!zz.empty()) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        auto rank = [&](int d) {
          auto it = std::find(zz.begin(), zz.end(), op.dims[static_cast<std::size_t>(d)].name);
          return it == zz.end() ? zz.size() : static_cast<std::size_t>(it - zz.begin());
        };
        return rank(a) < rank(b);
      });
    }
  }
  // Stream's elementwise quirk: its parser names an elementwise operator's axes B, H, D, K in order, so a core's
  // dataflow over K unrolls the last axis (the columns), not the channels.
  static const std::array<const char*, 4> kStreamElementwise{"B", "H", "D", "K"};
  const bool stream_names = options.stream_elementwise_dims && op.kind == OpKind::elementwise &&
                            op.dims.size() <= kStreamElementwise.size();
  std::vector<int> pos(op.dims.size());  // operator dim -> layer dim
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto d = static_cast<std::size_t>(order[i]);
    pos[d] = static_cast<int>(i);
    L.dims.push_back(stream_names ? std::string(kStreamElementwise[d]) : op.dims[d].name);
    L.size.push_back(tile[d].size());
  }
  // Stream's pooling quirk: a loop over the full channel count that no operand indexes (every operand sees it as
  // irrelevant), so the tile repeats its work once per channel.
  if (options.stream_pooling_channel_loop && op.kind == OpKind::pooling && !op.operands.empty()) {
    auto out = std::find_if(op.operands.begin(), op.operands.end(), [](const Operand& o) { return o.is_output(); });
    if (out != op.operands.end() && out->access.size() > 1 && out->access[1].terms.size() == 1) {  // axis 1: channels
      L.dims.push_back("C");
      L.size.push_back(op.dims[static_cast<std::size_t>(out->access[1].terms[0].dim)].size);
    }
  }
  L.macs = 1;
  for (std::int64_t s : L.size) L.macs *= static_cast<double>(s);

  // Operands: the output, then the first two inputs in the order of the operator (ZigZag's equations:
  // conv O = W * I, gemm O = I * W). Further inputs (biases, statistics) are small and not modelled.
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < op.operands.size(); ++k) {
    if (op.operands[k].is_output()) {
      chosen.insert(chosen.begin(), k);
      break;
    }
  }
  std::vector<std::size_t> inputs;
  for (std::size_t k = 0; k < op.operands.size(); ++k) {
    if (!op.operands[k].is_output() && inputs.size() < 2) inputs.push_back(k);
  }
  if (options.zigzag_compat && op.kind == OpKind::conv && inputs.size() == 2 &&
      op.operands[inputs[0]].slot == OperandSlot::I1 && zigzag_order(op).size() == 8) {
    std::swap(inputs[0], inputs[1]);  // ONNX Conv in ZigZag: O = W * I
  }
  for (std::size_t k : inputs) chosen.push_back(k);

  const int nd = L.ndims();
  for (std::size_t c = 0; c < chosen.size(); ++c) {
    const Operand& o = op.operands[chosen[c]];
    const Tensor& t = graph.tensor(o.tensor);
    LayerOperand lo;
    lo.output = o.is_output();
    lo.slot = static_cast<int>(o.slot);
    lo.name = lo.output ? 'O' : (o.slot == OperandSlot::I1 ? 'I' : 'W');
    lo.rel.assign(static_cast<std::size_t>(nd), Rel::none);
    const auto region = op.operand_region(chosen[c], tile, t);
    std::vector<bool> indexed(static_cast<std::size_t>(nd), false);
    for (std::size_t axis = 0; axis < o.access.size(); ++axis) {
      const AffineExpr& e = o.access[axis];
      if (e.terms.size() == 2) {
        const int a = pos[static_cast<std::size_t>(e.terms[0].dim)];
        const int b = pos[static_cast<std::size_t>(e.terms[1].dim)];
        const std::int64_t ca = std::abs(e.terms[0].coeff);
        const std::int64_t cb = std::abs(e.terms[1].coeff);
        const std::int64_t sa = L.size[static_cast<std::size_t>(a)];
        const std::int64_t sb = L.size[static_cast<std::size_t>(b)];
        if (ca == sb * cb || cb == sa * ca) {  // mixed radix (g·K + k): two independent dims
          indexed[static_cast<std::size_t>(a)] = indexed[static_cast<std::size_t>(b)] = true;
        } else {  // a sliding window
          // The extent the window is clipped to (padding is implicit): ZigZag uses the input tensor's extent;
          // a tile uses the part of the tensor its window actually reads.
          Relation r{a, ca, b, cb, static_cast<double>(region[axis].size())};
          if (options.zigzag_compat) r.limit = static_cast<double>(t.shape[axis]);
          lo.relations.push_back(static_cast<int>(L.relations.size()));
          L.relations.push_back(r);
        }
      } else {
        for (const auto& term : e.terms) indexed[static_cast<std::size_t>(pos[static_cast<std::size_t>(term.dim)])] = true;
      }
    }
    if (o.access.empty()) std::fill(indexed.begin(), indexed.end(), true);  // whole tensor: every dim matters
    std::vector<bool> in_relation(static_cast<std::size_t>(nd), false);
    for (int r : lo.relations) {
      in_relation[static_cast<std::size_t>(L.relations[static_cast<std::size_t>(r)].a)] = true;
      in_relation[static_cast<std::size_t>(L.relations[static_cast<std::size_t>(r)].b)] = true;
    }
    for (int d = 0; d < nd; ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (in_relation[i]) continue;
      if (indexed[i]) lo.rel[i] = Rel::relevant;
      else if (L.size[i] > 1) lo.rel[i] = Rel::irrelevant;
    }
    // Precisions: the operand's own, or ZigZag's defaults for float tensors in compatibility mode.
    const bool zz_default = options.zigzag_compat && is_float(t.dtype);
    if (lo.output) {
      lo.precision_final = zz_default ? 8 : o.precision_bits;
      lo.precision = zz_default ? 16 : o.accumulation_bits();
      // Stream's parser gives every output an intermediate precision of twice the activations' (ZigZag's ONNX
      // default), which limits an elementwise operator's unrolling by its memory's write bandwidth.
      if (stream_names) lo.precision = std::max(lo.precision, 2 * lo.precision_final);
    } else {
      lo.precision = lo.precision_final = zz_default ? 8 : o.precision_bits;
    }
    L.ops.push_back(lo);
  }
  // One-input operators: ZigZag's convention of a second operand that costs nothing (pooling "weights").
  if (L.ops.size() == 2) {
    LayerOperand w;
    w.name = L.ops[1].slot == 0 ? 'W' : 'I';
    w.slot = L.ops[1].slot == 0 ? 1 : 0;
    // Stream's SIMD parser keeps the second operand of a one-input operator as W[] of ZigZag's default weight
    // precision: one 8-bit element, irrelevant to every loop, that moves once (a cycle of on-loading).
    w.rel.assign(static_cast<std::size_t>(nd), stream_names ? Rel::irrelevant : Rel::none);
    w.precision = w.precision_final = stream_names ? 8 : 0;
    L.ops.push_back(w);
  }
  if (L.ops.size() != 3) throw UserError(op.origin, "loopnest: operator '" + op.name + "' has no output");
  // Relation dims are neither relevant nor irrelevant only for the operand that reads through them; the others
  // see them as ordinary dims (already classified above).
  return L;
}

// ----------------------------------------------------------------------------------------- hierarchy

Hierarchy make_hierarchy(const Core& core, const Residency& residency) {
  Hierarchy h;
  h.core = &core;
  for (int s = 0; s < kSlots; ++s) {
    const int top = residency.top[s];
    for (std::size_t m = 0; m < core.memories.size(); ++m) {
      if (top >= 0 && static_cast<int>(m) > top) break;
      if (core.memories[m].serves(static_cast<OperandSlot>(s))) h.levels[s].push_back(static_cast<int>(m));
    }
    if (h.levels[s].empty() && top >= 0) {
      throw InternalError("residency puts operand " + to_string(static_cast<OperandSlot>(s)) + " below every memory of core '" +
                          core.name + "' that holds it");
    }
  }
  return h;
}

int Hierarchy::level_of(int slot, int memory) const {
  const auto& l = levels[slot];
  auto it = std::find(l.begin(), l.end(), memory);
  return it == l.end() ? -1 : static_cast<int>(it - l.begin());
}

std::vector<OperandSlot> Hierarchy::operands_at(int memory) const {
  std::vector<OperandSlot> out;
  for (OperandSlot s : core->memories[static_cast<std::size_t>(memory)].operands) {
    if (holds(static_cast<int>(s), memory)) out.push_back(s);
  }
  return out;
}

std::array<bool, 3> read_whole_by_siblings(const Layer& layer, const Operator& op, std::span<const Range> tile) {
  std::array<bool, 3> whole{};
  for (const LayerOperand& lo : layer.ops) {
    if (lo.output) continue;
    bool same = true;
    for (std::size_t d = 0; d < op.dims.size() && same; ++d) {
      if (tile[d].begin == 0 && tile[d].size() == op.dims[d].size) continue;  // not cut
      const int ld = layer.dim(op.dims[d].name);
      same = ld >= 0 && lo.rel[static_cast<std::size_t>(ld)] == Rel::irrelevant;
    }
    whole[static_cast<std::size_t>(lo.slot)] = same;
  }
  return whole;
}

}  // namespace monet::loopnest
