#include "monet/schedule/tiling.hpp"

#include <algorithm>

#include "monet/util/error.hpp"
#include "monet/util/strings.hpp"

namespace monet {

namespace {
/// Tiles of one operator monet accepts. Far above what studies use (ResNet-18 by output row: 112 per convolution;
/// MobileNetV2's whole training step on the quad core: 29,085 computation nodes), far below what exhausts memory.
constexpr std::int64_t kMaxTilesPerOperator = 100'000;
}  // namespace

std::vector<TilingRule> parse_tiling_rules(const ParamValues& params, const std::string& name) {
  const std::vector<std::string>& texts = params.get_strings(name);
  const std::string param = "fusion." + name;
  const SourceLocation where = params.where(name);
  std::vector<TilingRule> rules;
  for (const std::string& text : texts) {
    const auto eq = text.find('=');
    auto bad = [&](const std::string& why) {
      throw UserError(where, param + ": '" + text + "': " + why +
                      " (expected KEY=DIM:N, KEY an operator name, type, kind or 'default', DIM a loop dimension or "
                      "axisN, N a count or 'all'; several splits as DIM:N,DIM:N)");
    };
    if (eq == std::string::npos) bad("no '='");
    TilingRule r;
    r.text = text;
    r.param = param;
    r.where = where;
    r.key = trim(text.substr(0, eq));
    if (r.key.empty()) bad("empty key");
    std::string rest = text.substr(eq + 1);
    std::size_t pos = 0;
    while (pos <= rest.size()) {
      const auto comma = rest.find(',', pos);
      const std::string item = trim(rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      pos = comma == std::string::npos ? rest.size() + 1 : comma + 1;
      if (item.empty()) continue;
      const auto colon = item.find(':');
      if (colon == std::string::npos) bad("'" + item + "' has no ':'");
      TileSplit s;
      s.dim = trim(item.substr(0, colon));
      const std::string n = trim(item.substr(colon + 1));
      if (s.dim.empty()) bad("empty dimension");
      if (n == "all") {
        s.parts = 0;
      } else if (n == "cores") {
        if (name != "inter") bad("'cores' splits over cores: it belongs in inter-core rules");
        s.parts = TileSplit::kCores;
      } else {
        std::size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(n, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != n.size() || v < 1) bad("'" + n + "' is neither a count >= 1, 'all' nor 'cores'");
        s.parts = v;
      }
      r.splits.push_back(s);
    }
    for (const TilingRule& other : rules) {
      if (other.key == r.key) bad("key '" + r.key + "' is given twice");
    }
    rules.push_back(std::move(r));
  }
  return rules;
}

const TilingRule* tiling_rule_for(const std::vector<TilingRule>& rules, const Operator& op) {
  for (const std::string& key : {op.name, op.type, to_string(op.kind), std::string("default")}) {
    for (const TilingRule& r : rules) {
      if (r.key == key) return &r;
    }
  }
  return nullptr;
}

std::vector<TileSplit> inter_splits(const Graph& graph, const Operator& op, const std::vector<TilingRule>& rules,
                                    std::size_t allowed_cores) {
  const TilingRule* rule = op.is_view() ? nullptr : tiling_rule_for(rules, op);
  if (!rule) return {};
  const std::vector<int> reductions = op.reduction_dims();
  for (const TileSplit& s : rule->splits) {
    const int d = split_dim(graph, op, s);
    if (d < 0 || std::find(reductions.begin(), reductions.end(), d) == reductions.end()) continue;
    throw UserError(rule->where, rule->param + ": '" + rule->text + "' splits operator '" + op.name + "' (" + op.type +
                                     ") along " + s.dim + ", a reduction dimension of it (its output does not depend on " +
                                     s.dim + "): each core would hold partial sums, which monet does not add up across "
                                     "cores. Split along an output dimension (axisN names the dimension of output axis N "
                                     "for every operator) or give this operator, or its type '" + op.type +
                                     "', a rule of its own");
  }
  std::vector<TileSplit> splits = rule->splits;
  for (TileSplit& s : splits) {
    if (s.parts != TileSplit::kCores) continue;
    s.parts = static_cast<std::int64_t>(std::max<std::size_t>(allowed_cores, 1));
  }
  return splits;
}

int split_dim(const Graph& graph, const Operator& op, const TileSplit& split) {
  if (split.dim.rfind("axis", 0) == 0 && split.dim.size() > 4 &&
      std::all_of(split.dim.begin() + 4, split.dim.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    const auto axis = static_cast<std::size_t>(std::stoul(split.dim.substr(4)));
    for (const Operand& o : op.operands) {
      if (!o.is_output() || axis >= o.access.size()) continue;
      const AffineExpr& e = o.access[axis];
      if (e.is_plain_dim()) return e.terms[0].dim;
    }
    (void)graph;
    return -1;
  }
  return op.dim_index(split.dim);
}

std::vector<ComputationNode> tile_operator(const Graph& graph, const Operator& op, const std::vector<TileSplit>& inter,
                                           const std::vector<TileSplit>& intra) {
  const std::vector<int> reductions = op.reduction_dims();
  struct Cut {
    int dim;
    std::int64_t parts;
  };
  // Effective cuts: along existing, non-reduction dims; parts clipped to the dimension size.
  auto cuts_of = [&](const std::vector<TileSplit>& splits) {
    std::vector<Cut> out;
    for (const TileSplit& s : splits) {
      const int d = split_dim(graph, op, s);
      if (d < 0 || std::find(reductions.begin(), reductions.end(), d) != reductions.end()) continue;
      const std::int64_t size = op.dims[static_cast<std::size_t>(d)].size;
      const std::int64_t parts = std::min(size, s.parts == 0 ? size : s.parts);
      if (parts > 1) out.push_back(Cut{d, parts});
    }
    return out;
  };
  const std::vector<Cut> inter_cuts = cuts_of(inter);
  const std::vector<Cut> intra_cuts = cuts_of(intra);
  // Per dimension, the product of all its cuts (inter first, then intra), and the piece index per cut.
  // Refused before any tile exists: rules that cut one operator into millions of tiles (or more than 64 bits
  // count) would exhaust memory and the scheduler's time (docs/reliability.md#limits).
  std::int64_t groups = 1, intra_tiles = 1, tiles = 1;
  bool overflow = false;
  for (const Cut& c : inter_cuts) overflow = __builtin_mul_overflow(groups, c.parts, &groups) || overflow;
  for (const Cut& c : intra_cuts) overflow = __builtin_mul_overflow(intra_tiles, c.parts, &intra_tiles) || overflow;
  overflow = __builtin_mul_overflow(groups, intra_tiles, &tiles) || overflow;
  if (overflow || tiles > kMaxTilesPerOperator) {
    throw UserError("the tiling rules cut operator '" + op.name + "' into " +
                    (overflow ? std::string("more than 2^63 tiles")
                              : with_thousands(tiles) + " tiles (" + with_thousands(groups) + " inter-core groups x " +
                                    with_thousands(intra_tiles) + " intra-core tiles)") +
                    ", more than the " + with_thousands(kMaxTilesPerOperator) +
                    " computation nodes an operator may have: use fewer, larger tiles");
  }

  std::vector<ComputationNode> out;
  out.reserve(static_cast<std::size_t>(groups * intra_tiles));
  const std::vector<Range> full = op.full_ranges();
  for (std::int64_t t = 0; t < intra_tiles; ++t) {
    for (std::int64_t g = 0; g < groups; ++g) {
      // Combined index per dimension: inter cuts are the outer (coarse) part, intra cuts the inner part.
      std::vector<std::int64_t> index(op.dims.size(), 0), count(op.dims.size(), 1);
      std::int64_t rest = g;
      for (const Cut& c : inter_cuts) {
        const auto d = static_cast<std::size_t>(c.dim);
        index[d] = index[d] * c.parts + rest % c.parts;
        count[d] *= c.parts;
        rest /= c.parts;
      }
      rest = t;
      for (const Cut& c : intra_cuts) {
        const auto d = static_cast<std::size_t>(c.dim);
        index[d] = index[d] * c.parts + rest % c.parts;
        count[d] *= c.parts;
        rest /= c.parts;
      }
      ComputationNode cn;
      cn.op = op.id;
      cn.ranges = full;
      cn.group = static_cast<int>(g);
      cn.groups = static_cast<int>(groups);
      bool empty = false;
      for (std::size_t d = 0; d < op.dims.size(); ++d) {
        if (count[d] <= 1) continue;
        const std::int64_t size = op.dims[d].size;
        const std::int64_t n = std::min(count[d], size);
        if (index[d] >= n) {
          empty = true;  // more pieces than indices along this dim: this combination is empty
          break;
        }
        // Balanced pieces: the first (size % n) get one more index.
        const std::int64_t base = size / n;
        const std::int64_t extra = size % n;
        const std::int64_t b = index[d] * base + std::min(index[d], extra);
        cn.ranges[d] = Range{b, b + base + (index[d] < extra ? 1 : 0)};
      }
      if (!empty) out.push_back(std::move(cn));
    }
  }
  return out;
}

}  // namespace monet
