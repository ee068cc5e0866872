// Mirror symmetry of a layer (symmetry.hpp).
#include "symmetry.hpp"

#include <cmath>

namespace monet::loopnest {

namespace {

/// The relation a dim takes part in and its role (a or b); -1: none, -2: more than one.
struct Membership {
  int relation = -1;
  bool is_a = false;
};

Membership membership(const Layer& L, int d) {
  Membership m;
  for (std::size_t k = 0; k < L.relations.size(); ++k) {
    const Relation& r = L.relations[k];
    if (r.a != d && r.b != d) continue;
    if (m.relation != -1) return Membership{-2, false};
    m.relation = static_cast<int>(k);
    m.is_a = r.a == d;
  }
  return m;
}

bool same_relation_shape(const Relation& x, const Relation& y) {
  return x.ca == y.ca && x.cb == y.cb && x.limit == y.limit;
}

/// Every product of loop sizes, tensor extents and precisions the model forms is an exact integer.
bool exact_products(const Layer& L, const Spatial& sp) {
  double bound = 1;
  for (std::int64_t s : L.size) bound *= static_cast<double>(s);
  for (const Relation& r : L.relations) bound *= std::max(1.0, r.limit);
  for (const LayerOperand& op : L.ops) bound *= std::max({1.0, op.precision, op.precision_final});
  if (!(bound < 0x1p53)) return false;
  for (const auto* per_operand : {&sp.frac, &sp.integer}) {
    for (const auto& levels : *per_operand) {
      for (const Nest& n : levels) {
        for (const Loop& l : n) {
          if (l.size != std::floor(l.size)) return false;
        }
      }
    }
  }
  return true;
}

bool spatially_unrolled(const Spatial& sp, int d) {
  for (const auto* per_operand : {&sp.frac, &sp.integer}) {
    for (const auto& levels : *per_operand) {
      for (const Nest& n : levels) {
        for (const Loop& l : n) {
          if (l.dim == d) return true;
        }
      }
    }
  }
  return false;
}

/// Whether swapping dims a and b is a candidate on its own: same size, temporal count, not unrolled.
bool interchangeable(const Layer& L, const Spatial& sp, int a, int b) {
  const auto ua = static_cast<std::size_t>(a);
  const auto ub = static_cast<std::size_t>(b);
  return L.size[ua] == L.size[ub] && sp.temporal[ua] == sp.temporal[ub] && !spatially_unrolled(sp, a) &&
         !spatially_unrolled(sp, b);
}

/// The layer is invariant under `perm` (dims) with `relation_image` (relations).
bool invariant(const Layer& L, const std::vector<int>& perm, const std::vector<int>& relation_image) {
  for (const LayerOperand& op : L.ops) {
    for (std::size_t d = 0; d < perm.size(); ++d) {
      if (op.rel[d] != op.rel[static_cast<std::size_t>(perm[d])]) return false;
    }
    for (int k : op.relations) {
      const int image = relation_image[static_cast<std::size_t>(k)];
      if (std::find(op.relations.begin(), op.relations.end(), image) == op.relations.end()) return false;
    }
  }
  for (std::size_t k = 0; k < L.relations.size(); ++k) {
    const Relation& r = L.relations[k];
    const Relation& image = L.relations[static_cast<std::size_t>(relation_image[k])];
    if (image.a != perm[static_cast<std::size_t>(r.a)] || image.b != perm[static_cast<std::size_t>(r.b)]) return false;
    if (!same_relation_shape(r, image)) return false;
  }
  return true;
}

}  // namespace

std::vector<int> find_mirror(const Layer& L, const Spatial& sp) {
  const int nd = L.ndims();
  if (!exact_products(L, sp)) return {};
  for (int a = 0; a < nd; ++a) {
    for (int b = a + 1; b < nd; ++b) {
      if (!interchangeable(L, sp, a, b)) continue;
      std::vector<int> perm(static_cast<std::size_t>(nd));
      for (int d = 0; d < nd; ++d) perm[static_cast<std::size_t>(d)] = d;
      std::vector<int> relation_image(L.relations.size());
      for (std::size_t k = 0; k < relation_image.size(); ++k) relation_image[k] = static_cast<int>(k);
      std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
      const Membership ma = membership(L, a);
      const Membership mb = membership(L, b);
      if (ma.relation == -2 || mb.relation == -2 || (ma.relation < 0) != (mb.relation < 0)) continue;
      if (ma.relation >= 0) {
        // Sliding windows: the partners of a and b swap too.
        if (ma.relation == mb.relation || ma.is_a != mb.is_a) continue;
        const Relation& ra = L.relations[static_cast<std::size_t>(ma.relation)];
        const Relation& rb = L.relations[static_cast<std::size_t>(mb.relation)];
        const int p = ma.is_a ? ra.b : ra.a;
        const int q = mb.is_a ? rb.b : rb.a;
        if (p == a || p == b || q == a || q == b || p == q || !interchangeable(L, sp, p, q)) continue;
        if (membership(L, p).relation != ma.relation || membership(L, q).relation != mb.relation) continue;
        std::swap(perm[static_cast<std::size_t>(p)], perm[static_cast<std::size_t>(q)]);
        std::swap(relation_image[static_cast<std::size_t>(ma.relation)], relation_image[static_cast<std::size_t>(mb.relation)]);
      }
      if (invariant(L, perm, relation_image)) return perm;
    }
  }
  return {};
}

}  // namespace monet::loopnest
