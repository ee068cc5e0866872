#include "monet/system/torus.hpp"

#include <algorithm>
#include <string>

namespace monet {
namespace {

std::string dims_str(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

[[noreturn]] void misaligned(const Fabric& f, std::int64_t ranks, std::int64_t stride, const std::string& why) {
  throw UserError(f.torus_where, "a group of " + std::to_string(ranks) + " chips " + std::to_string(stride) +
                                     " apart does not align with the torus " + dims_str(f.torus) + " of '" + f.name +
                                     "' (chips numbered x fastest): " + why +
                                     "; choose parallel degrees that fill whole dimensions");
}

}  // namespace

std::vector<TorusSpan> torus_spans(const Fabric& f, std::int64_t ranks, std::int64_t stride) {
  std::vector<TorusSpan> spans;
  if (ranks <= 1) return spans;
  // The first dimension the group moves along: the one whose faster dimensions' chips divide the stride.
  std::size_t d = 0;
  std::int64_t faster = 1;
  while (d < f.torus.size() && stride % (faster * f.torus[d]) == 0) faster *= f.torus[d++];
  if (d == f.torus.size()) misaligned(f, ranks, stride, "the stride is beyond the torus");
  const std::int64_t step = stride / faster, size = f.torus[d];
  if (size % step != 0) {
    misaligned(f, ranks, stride, "a step of " + std::to_string(step) + " does not divide dimension " +
                                     std::to_string(d) + " of " + std::to_string(size) + " chips");
  }
  const std::int64_t first = size / step;  // the group's chips on one whole ring of dimension d
  if (ranks <= first) return {TorusSpan{size, ranks, step, d}};
  if (ranks % first != 0) {
    misaligned(f, ranks, stride, std::to_string(ranks) + " chips are not whole rings of " + std::to_string(first));
  }
  spans.push_back(TorusSpan{size, first, step, d});
  std::int64_t rest = ranks / first;
  for (++d; rest > 1 && d < f.torus.size(); ++d) {
    const std::int64_t n = f.torus[d];
    if (rest < n) {
      spans.push_back(TorusSpan{n, rest, 1, d});
      rest = 1;
    } else {
      if (rest % n != 0) {
        misaligned(f, ranks, stride, std::to_string(rest) + " chips along dimension " + std::to_string(d) +
                                         " are not whole rings of " + std::to_string(n));
      }
      spans.push_back(TorusSpan{n, n, 1, d});
      rest /= n;
    }
  }
  if (rest > 1) misaligned(f, ranks, stride, "the group needs more chips than the torus has");
  return spans;
}

std::int64_t torus_hops(const Fabric& f, std::int64_t stride) {
  std::int64_t hops = 0, rest = stride;
  for (const std::int64_t n : f.torus) {
    const std::int64_t c = rest % n;
    hops += std::min(c, n - c);
    rest /= n;
  }
  return hops;
}

CommCost torus_collective(const Fabric& f, CollectiveKind kind, double bytes, std::int64_t ranks, std::int64_t stride) {
  const double link = f.bandwidth_bytes_per_s * f.efficiency, joule_per_byte = 8 * f.energy_pj_per_bit * 1e-12;
  CommCost c;
  if (kind == CollectiveKind::send) {
    // One message over the shortest route (cut-through: the hops add energy, not time).
    c.bytes_per_chip = bytes;
    c.seconds = f.latency_s + bytes / link;
    c.energy_j = bytes * joule_per_byte * static_cast<double>(std::max<std::int64_t>(1, torus_hops(f, stride)));
    return c;
  }
  if (kind == CollectiveKind::all_to_all || kind == CollectiveKind::broadcast) {
    throw UserError(f.torus_where, to_string(kind) + " on the torus of '" + f.name +
                                       "' is not modelled (all-reduce, reduce-scatter, all-gather and send are)");
  }
  if (ranks <= 1) return c;
  const std::vector<TorusSpan> spans = torus_spans(f, ranks, stride);
  // Reduce-scatter along each dimension in turn, on the data left by the previous ones; an all-gather is the same
  // phases in reverse (the same sizes), an all-reduce both.
  double part = bytes;
  for (const TorusSpan& sp : spans) {
    const auto r = static_cast<double>(sp.ranks), m = static_cast<double>(sp.step);
    // A whole ring of three or more chips runs both ways, half the data each (two links per chip); a segment of a
    // ring, or a dimension of two chips, is one ring whose closing edge comes back over the segment's links, so one
    // link per direction. Chips `step` apart share each link with the step - 1 groups offset between them, which
    // run the same collective at the same time in a layout (the other ranks of the faster parallel dimensions).
    const double directions = sp.whole_ring() && sp.size >= 3 ? 2 : 1;
    const double hops = sp.whole_ring() ? m : 2 * (r - 1) * m / r;  // links a byte crosses, on average
    const double sent = (r - 1) / r * part;
    c.seconds += (r - 1) * f.latency_s + sent / (link * directions / m);
    c.bytes_per_chip += sent;
    c.energy_j += static_cast<double>(ranks) * sent * hops * joule_per_byte;
    part /= r;
  }
  if (kind == CollectiveKind::all_reduce) {
    c.seconds *= 2;
    c.bytes_per_chip *= 2;
    c.energy_j *= 2;
  }
  return c;
}

}  // namespace monet
