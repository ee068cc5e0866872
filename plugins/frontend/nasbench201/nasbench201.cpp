// The NAS-Bench-201 generator: the network of one cell of the benchmark's space as its PyTorch code builds it
// (D-X-Y/AutoDL-Projects xautodl/models/cell_infers: TinyNetwork, InferCell, cell_operations.py), operator by operator
// with the same module names, so that checkpointing and fusion address cells as they would a PyTorch export: stem.{0,1}
// (Conv 3x3 + BatchNorm), cells.{0..3N+1} — N cells, the ResNet reduction block (cells.N: conv_a.op.{0,1,2},
// conv_b.op.{0,1,2}, downsample.{0,1}), N cells at twice the channels, another reduction, N cells —, lastact.{0,1}
// (BatchNorm, ReLU), global_pooling, classifier. A cell's edges are cells.k.layers.e in the order of the architecture
// string; ReLUConvBN edges have op.{0,1,2}, avg_pool_3x3 is layers.e.op. Every edge is executed, also one whose node
// reaches nothing. A `none` edge (NAS-Bench-201's Zero, x.mul(0.)) is left out of its node's sum — it adds zero, saves
// nothing and counts no MAC — except where the benchmark's code needs it: out of a node that has no other way to the
// cell's output (so that the node's edges get their backward pass), and from node 0 into a node without any other
// incoming edge (its value, zero).
#include "nasbench201.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "monet/ir/generated_graph.hpp"
#include "monet/ir/ops.hpp"
#include "monet/util/strings.hpp"

namespace monet::plugins {
namespace {
/// s split at every `sep`, empty pieces kept (so that "||" is an empty edge, not none).
std::vector<std::string> pieces(const std::string& s, char sep) {
  std::vector<std::string> out{""};
  for (char ch : s) {
    if (ch == sep) out.emplace_back();
    else out.back() += ch;
  }
  return out;
}
}  // namespace

std::string nasbench201_arch(const NasBench201Cell& cell) {
  const std::array<int, 6> from{0, 0, 1, 0, 1, 2};
  std::string s = "|";
  for (std::size_t e = 0; e < 6; ++e) {
    s += cell.ops[e] + "~" + std::to_string(from[e]) + "|";
    if (e == 0 || e == 2) s += "+|";
  }
  return s;
}

std::optional<NasBench201Cell> parse_nasbench201_arch(const std::string& arch, std::string& error) {
  NasBench201Cell cell;
  const std::vector<std::string> groups = pieces(arch, '+');
  if (groups.size() != 3) {
    error = "'" + arch + "' has " + std::to_string(groups.size()) + " node groups; expected 3 separated by '+' "
            "(|op~0|+|op~0|op~1|+|op~0|op~1|op~2|)";
    return std::nullopt;
  }
  std::size_t e = 0;
  for (std::size_t j = 1; j <= 3; ++j) {
    const std::string& g = groups[j - 1];
    if (g.size() < 2 || g.front() != '|' || g.back() != '|') {
      error = "node group " + std::to_string(j) + " '" + g + "' is not of the form |op~i|...|";
      return std::nullopt;
    }
    const std::vector<std::string> edges = pieces(g.substr(1, g.size() - 2), '|');
    if (edges.size() != j) {
      error = "node group " + std::to_string(j) + " '" + g + "' has " + std::to_string(edges.size()) +
              " edges; node " + std::to_string(j) + " has " + std::to_string(j) + " (from nodes 0.." +
              std::to_string(j - 1) + ")";
      return std::nullopt;
    }
    for (std::size_t i = 0; i < j; ++i, ++e) {
      const std::string& edge = edges[i];
      const auto tilde = edge.find('~');
      if (tilde == std::string::npos) {
        error = "edge '" + edge + "' of node " + std::to_string(j) + " is not of the form op~i";
        return std::nullopt;
      }
      const std::string op = edge.substr(0, tilde), from = edge.substr(tilde + 1);
      if (std::find(kNasBench201Ops.begin(), kNasBench201Ops.end(), op) == kNasBench201Ops.end()) {
        error = "'" + op + "' (edge " + edge + " of node " + std::to_string(j) + ") is not a NAS-Bench-201 operation; "
                "expected one of " + join(kNasBench201Ops);
        return std::nullopt;
      }
      if (from != std::to_string(i)) {
        error = "edge '" + edge + "' of node " + std::to_string(j) + " reads node '" + from + "'; the node's edges " +
                "read nodes 0.." + std::to_string(j - 1) + " in order, so this one is ~" + std::to_string(i);
        return std::nullopt;
      }
      cell.ops[e] = op;
    }
  }
  return cell;
}

namespace {

struct Config {
  std::string name = "nasbench201";
  std::string arch;
  NasBench201Cell cell;
  std::int64_t classes = 10, batch = 1, channels = 16, cells_per_stage = 5, input = 32;
};

/// `ops = [six ops]`, the edges in the order of the architecture string: what six categorical genes set
/// (workload.set.ops.0 ... workload.set.ops.5). Given instead of arch, never beside it.
NasBench201Cell read_ops(TableReader& w) {
  if (w.has("arch")) w.fail("ops", "give arch or ops, not both (ops are the six edges of an arch string)");
  const std::vector<std::string> ops = *w.string_list("ops");
  if (ops.size() != 6) {
    w.fail("ops", "expected the ops of the 6 edges (1<-0, 2<-0, 2<-1, 3<-0, 3<-1, 3<-2), got " + std::to_string(ops.size()));
  }
  NasBench201Cell cell;
  for (std::size_t e = 0; e < 6; ++e) {
    if (std::find(kNasBench201Ops.begin(), kNasBench201Ops.end(), ops[e]) == kNasBench201Ops.end()) {
      // At the element: a search gene's value (workload.set.ops[2]) keeps the experiment's location.
      const toml::node* element = w.raw().get("ops")->as_array()->get(e);
      throw UserError(location_of(*element, w.file()), "workload.ops: ops[" + std::to_string(e) + "] = '" + ops[e] +
                                                          "' is not a NAS-Bench-201 operation" + did_you_mean(ops[e], kNasBench201Ops) +
                                                          "; operations: " + join(kNasBench201Ops));
    }
    cell.ops[e] = ops[e];
  }
  return cell;
}

Config read_config(TableReader& w, const NasBench201Overrides& o) {
  Config c;
  c.name = w.string("name").value_or(c.name);
  (void)w.choice("generator", {"nasbench201"});
  std::string error;
  if (!o.arch.empty()) {
    // The experiment's (or a search gene's) cell replaces the file's, which must still be one, and names the workload.
    const auto file_arch = w.string("arch");
    if (file_arch && !parse_nasbench201_arch(*file_arch, error)) w.fail("arch", error);
    if (w.has("ops")) (void)read_ops(w);
    c.arch = o.arch;
    c.name = "nasbench201:" + c.arch;
    auto cell = parse_nasbench201_arch(c.arch, error);
    // The parameter has no place of its own here: the message names it (the experiment's [workload] arch).
    if (!cell) {
      throw UserError(w.where(), "the nasbench201 frontend's parameter arch ([workload] arch of the experiment): " +
                                     error);
    }
    c.cell = *cell;
  } else if (w.has("ops")) {
    c.cell = read_ops(w);
    c.arch = nasbench201_arch(c.cell);
  } else {
    c.arch = w.required_string("arch", "a NAS-Bench-201 architecture string (or its six edges' ops)");
    auto cell = parse_nasbench201_arch(c.arch, error);
    if (!cell) w.fail("arch", error);
    c.cell = *cell;
  }
  c.classes = w.integer("classes", Bounds{1.0, 1048576.0, false, false}).value_or(c.classes);
  c.batch = w.integer("batch", Bounds{1.0, 1048576.0, false, false}).value_or(c.batch);
  c.channels = w.integer("channels", Bounds{1.0, 16384.0, false, false}).value_or(c.channels);
  c.cells_per_stage = w.integer("cells_per_stage", Bounds{1.0, 1024.0, false, false}).value_or(c.cells_per_stage);
  c.input = w.integer("input", Bounds{4.0, 16384.0, false, false}).value_or(c.input);
  // The reductions halve twice, and their branches must agree: conv 3x3 stride 2 pad 1 gives ceil(H/2), the
  // shortcut's 2x2 average pool floor(H/2).
  if (c.input % 4 != 0) {
    w.fail("input", "input = " + std::to_string(c.input) + " is not a multiple of 4: the two reduction blocks halve "
                    "it, and their conv (ceil) and average-pool (floor) branches differ on an odd size");
  }
  if (o.batch > 0) c.batch = o.batch;
  // Every count in int64 (bits of the largest tensor, MACs of all the cells' convolutions), with room to spare.
  using R = long double;
  const R hw = static_cast<R>(c.input) * static_cast<R>(c.input), wide = 4 * static_cast<R>(c.channels);
  if (static_cast<R>(c.batch) * wide * wide * hw * 9 * static_cast<R>(6 * c.cells_per_stage + 10) * 64 >
      static_cast<R>(std::numeric_limits<std::int64_t>::max())) {
    w.fail_table("batch = " + std::to_string(c.batch) + ", channels = " + std::to_string(c.channels) + " and input = " +
                 std::to_string(c.input) + " need more than monet counts in 64-bit integers");
  }
  w.finish({"name", "generator", "arch", "ops", "classes", "batch", "channels", "cells_per_stage", "input"});
  return c;
}

class Builder : GeneratedGraph {
 public:
  Builder(const Config& c, SourceLocation where) : GeneratedGraph(c.name, std::move(where)), c_(c) {}

  GraphPtr build() && {
    const std::int64_t C = c_.channels, N = c_.cells_per_stage;
    TensorId x = tensor("input", {c_.batch, 3, c_.input, c_.input}, ElementType::fp32, TensorRole::input);
    x = bn("stem.1", conv("stem.0", x, C, 3, 1, 1));
    std::int64_t k = 0, channels = C;
    for (int stage = 0; stage < 3; ++stage) {
      if (stage > 0) x = reduction("cells." + std::to_string(k++), x, channels *= 2);
      for (std::int64_t n = 0; n < N; ++n) x = cell("cells." + std::to_string(k++), x);
    }
    x = relu("lastact.1", bn("lastact.0", x));
    const Shape s = b_.tensor(x).shape;
    const TensorId pooled = tensor("global_pooling", {s[0], s[1], 1, 1}, ElementType::fp32, TensorRole::activation);
    ops::PoolSpec global;
    global.kernel = {s[2], s[3]};
    ops::pool(b_, op("global_pooling", "global_pooling", "GlobalAveragePool"), x, pooled, global);
    const TensorId flat = tensor("view", {s[0], s[1]}, ElementType::fp32, TensorRole::activation);
    ops::view(b_, op("view", "", "Flatten"), pooled, flat);  // out.view(B, -1) in forward: an operator of the root
    (void)linear("classifier", flat, c_.classes, ElementType::fp32);
    return std::move(b_).build();
  }

 private:
  /// InferCell: node j = the sum of its edges' outputs (in the string's order, left to right). A `none` edge is
  /// NAS-Bench-201's Zero, x.mul(0.) (a multiply by a scalar: nothing saved, no MAC), kept only where the benchmark's
  /// code needs it: out of a node that reaches node 3 through no other edge (it keeps that node's edges in the
  /// training step), and the one from node 0 into a node without any other incoming edge (its zero value).
  TensorId cell(const std::string& m, TensorId in) {
    static constexpr int kTo[6] = {1, 2, 2, 3, 3, 3}, kFrom[6] = {0, 0, 1, 0, 1, 2};
    std::array<bool, 4> live{false, false, false, true}, fed{true, false, false, false};
    for (int e = 5; e >= 0; --e) live[kFrom[e]] = live[kFrom[e]] || (c_.cell.ops[e] != "none" && live[kTo[e]]);
    for (int e = 0; e < 6; ++e) fed[kTo[e]] = fed[kTo[e]] || c_.cell.ops[e] != "none";
    std::vector<TensorId> nodes{in};
    for (int j = 1; j <= 3; ++j) {
      std::optional<TensorId> sum;
      for (int e = 0; e < 6; ++e) {
        const bool zero_needed = !live[kFrom[e]] || (kFrom[e] == 0 && !fed[j]);
        if (kTo[e] != j || (c_.cell.ops[e] == "none" && !zero_needed)) continue;
        const TensorId t = edge(m + ".layers." + std::to_string(e), c_.cell.ops[e], nodes[kFrom[e]]);
        sum = sum ? add(m + ".node" + std::to_string(j) + ".add" + std::to_string(e), m, *sum, t) : t;
      }
      nodes.push_back(*sum);  // node 0 feeds every node, through a Zero at least
    }
    return nodes[3];
  }

  TensorId edge(const std::string& m, const std::string& type, TensorId x) {
    const std::int64_t C = b_.tensor(x).shape[1];
    if (type == "skip_connect") return x;  // nn.Identity
    if (type == "none") {
      const TensorId y = tensor(m, b_.tensor(x).shape, ElementType::fp32, TensorRole::activation);
      ops::elementwise(b_, op(m, m, "Mul"), {x}, y, 1);
      return y;
    }
    if (type == "nor_conv_1x1") return relu_conv_bn(m + ".op", x, C, 1, 1, 0);
    if (type == "nor_conv_3x3") return relu_conv_bn(m + ".op", x, C, 3, 1, 1);
    return avg_pool(m + ".op", x, 3, 1, 1);  // avg_pool_3x3, count_include_pad = False
  }

  /// ResNetBasicblock(stride 2): conv_a, conv_b; shortcut AvgPool 2x2 then Conv 1x1 (no BN); residual + basicblock.
  TensorId reduction(const std::string& m, TensorId x, std::int64_t out) {
    const TensorId a = relu_conv_bn(m + ".conv_a.op", x, out, 3, 2, 1);
    const TensorId b = relu_conv_bn(m + ".conv_b.op", a, out, 3, 1, 1);
    const TensorId r = conv(m + ".downsample.1", avg_pool(m + ".downsample.0", x, 2, 2, 0), out, 1, 1, 0);
    return add(m + ".add", m, r, b);
  }

  TensorId relu_conv_bn(const std::string& m, TensorId x, std::int64_t out, std::int64_t k, std::int64_t s,
                        std::int64_t p) {
    return bn(m + ".2", conv(m + ".1", relu(m + ".0", x), out, k, s, p));
  }

  TensorId conv(const std::string& m, TensorId x, std::int64_t out, std::int64_t k, std::int64_t s, std::int64_t p) {
    ops::Conv2dSpec spec;
    spec.kernel = {k, k};
    spec.stride = {s, s};
    spec.pads = {p, p, p, p};
    const Shape shape = ops::conv2d_output_shape(b_.tensor(x).shape, out, spec, where_, m);
    const std::int64_t in = b_.tensor(x).shape[1];
    const TensorId y = tensor(m, shape, ElementType::fp32, TensorRole::activation);
    const TensorId w = tensor(m + ".weight", {out, in, k, k}, ElementType::fp32, TensorRole::weight);
    ops::conv2d(b_, op(m, m, "Conv"), x, w, std::nullopt, y, spec);  // bias = not affine: none
    return y;
  }

  /// BatchNorm2d in training mode (batch statistics; the running ones are buffers it updates).
  TensorId bn(const std::string& m, TensorId x) {
    const Tensor t = b_.tensor(x);  // a copy: adding tensors may move the graph's
    const std::int64_t C = t.shape[1];
    const TensorId y = tensor(m, t.shape, ElementType::fp32, TensorRole::activation);
    const TensorId scale = tensor(m + ".weight", {C}, ElementType::fp32, TensorRole::weight);
    const TensorId bias = tensor(m + ".bias", {C}, ElementType::fp32, TensorRole::weight);
    const TensorId mean = tensor(m + ".running_mean", {C}, ElementType::fp32, TensorRole::buffer);
    const TensorId var = tensor(m + ".running_var", {C}, ElementType::fp32, TensorRole::buffer);
    ops::batch_norm(b_, op(m, m, "BatchNormalization"), x, scale, bias, mean, var, y, true);
    return y;
  }

  TensorId relu(const std::string& m, TensorId x) {
    const Tensor t = b_.tensor(x);
    const TensorId y = tensor(m, t.shape, ElementType::fp32, TensorRole::activation);
    ops::elementwise(b_, op(m, m, "Relu"), {x}, y, 1);
    return y;
  }

  /// nn.AvgPool2d(k, s, p, count_include_pad=False): monet's AveragePool without the count_include_pad attribute.
  TensorId avg_pool(const std::string& m, TensorId x, std::int64_t k, std::int64_t s, std::int64_t p) {
    ops::Pool2dSpec spec;
    spec.kernel = {k, k};
    spec.stride = {s, s};
    spec.pads = {p, p, p, p};
    const Shape shape = ops::pool2d_output_shape(b_.tensor(x).shape, spec, where_, m);
    const TensorId y = tensor(m, shape, ElementType::fp32, TensorRole::activation);
    ops::pool2d(b_, op(m, m, "AveragePool"), x, y, spec);
    return y;
  }

  /// `a + b` written in the parent's forward: a direct operator of module `parent`.
  TensorId add(const std::string& name, const std::string& parent, TensorId a, TensorId b) {
    const TensorId y = tensor(name, b_.tensor(a).shape, ElementType::fp32, TensorRole::activation);
    ops::elementwise(b_, op(name, parent, "Add"), {a, b}, y, 1);
    return y;
  }

  const Config& c_;
};

}  // namespace

GraphPtr build_nasbench201(const TomlDocument& doc, const NasBench201Overrides& overrides) {
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  TableReader w = root.required_table("workload");
  const SourceLocation where = w.where();
  const Config c = read_config(w, overrides);
  root.finish();
  return Builder(c, where).build();
}

}  // namespace monet::plugins
