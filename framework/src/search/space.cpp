#include "monet/search/space.hpp"

namespace monet {

std::string to_string(GeneGroup g) {
  switch (g) {
    case GeneGroup::hardware: return "hardware";
    case GeneGroup::training: return "training";
    case GeneGroup::checkpoint: return "checkpoint";
    case GeneGroup::fusion: return "fusion";
    case GeneGroup::allocation: return "allocation";
  }
  return "?";
}

double DesignSpace::size() const {
  double n = 1;
  for (const Gene& g : genes) n *= static_cast<double>(g.size());
  return n;
}

DesignPoint DesignSpace::configured() const {
  DesignPoint p;
  p.genes.reserve(genes.size());
  for (const Gene& g : genes) p.genes.push_back(g.configured);
  return p;
}

}  // namespace monet
