// The portable generator against an independent implementation, and the genome operators: mixed-radix
// enumeration, Deb's SBX and polynomial mutation against values computed by hand (Python, same formulas),
// and the invariants of crossover, mutation and the annealing neighbourhood per gene kind.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "monet/search/genome.hpp"
#include "support/search_problems.hpp"

namespace monet {
namespace {

using test::gene;
using test::space_of;

// ------------------------------------------------------------------------------------------------ Random

TEST(SearchRandom, MatchesTheReferenceXoshiro256StarStar) {
  // Values from a Python transcription of splitmix64 seeding + xoshiro256** (Blackman & Vigna).
  Random zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero.next(), 0x1a5f849d4933e6e0ULL);
  Random answer(42);
  EXPECT_EQ(answer.next(), 0x15780b2e0c2ec716ULL);
  EXPECT_DOUBLE_EQ(Random(42).uniform(), 0.08386297105988216);
  EXPECT_EQ(derive_seed(7, 3), 0x67a7b46146023675ULL);
}

TEST(SearchRandom, BelowIsUniformAndInRange) {
  Random r(1);
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < 60000; ++i) ++counts[r.below(6)];
  ASSERT_EQ(counts.size(), 6u);
  // 10,000 expected per value; binomial sd ≈ 91, so ±400 is > 4 sd.
  for (const auto& [value, n] : counts) EXPECT_NEAR(n, 10000, 400) << value;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t v = r.between(-3, 3);
    ASSERT_TRUE(v >= -3 && v <= 3);
  }
}

// ----------------------------------------------------------------------------------- mixed-radix order

TEST(SearchGenome, MixedRadixIndexIsABijectionInLexicographicOrder) {
  const DesignSpace space = space_of({gene("a", 3, true), gene("b", 1, false), gene("c", 4, false), gene("d", 2, true)}, {"f"});
  ASSERT_EQ(exact_size(space), 24u);
  DesignPoint previous;
  for (std::uint64_t i = 0; i < 24; ++i) {
    const DesignPoint p = point_at(space, i);
    EXPECT_EQ(point_index(space, p), i);
    if (i > 0) {
      EXPECT_LT(previous, p);
    }
    previous = p;
  }
  EXPECT_EQ(point_at(space, 0).genes, (std::vector<std::int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(point_at(space, 1).genes, (std::vector<std::int32_t>{0, 0, 0, 1}));  // the last gene varies fastest
  EXPECT_EQ(point_at(space, 23).genes, (std::vector<std::int32_t>{2, 0, 3, 1}));
  EXPECT_THROW((void)point_at(space, 24), InternalError);
}

TEST(SearchGenome, ExactSizeOverflowsBeyondSixtyFourBits) {
  std::vector<Gene> genes(63, gene("bit", 2, false));
  EXPECT_EQ(exact_size(space_of(genes, {"f"})), 1ULL << 63);
  genes.push_back(gene("bit", 2, false));
  genes.push_back(gene("bit", 2, false));
  EXPECT_EQ(exact_size(space_of(genes, {"f"})), std::nullopt);
  EXPECT_EQ(exact_size(space_of({}, {"f"})), 1u);
}

TEST(SearchGenome, RandomPointDrawsEveryValue) {
  const DesignSpace space = space_of({gene("a", 5, true), gene("b", 1, false), gene("c", 3, false)}, {"f"});
  Random r(2);
  std::set<DesignPoint> seen;
  for (int i = 0; i < 500; ++i) seen.insert(random_point(space, r));
  EXPECT_EQ(seen.size(), 15u);
  EXPECT_EQ(mutable_genes(space), 2u);
}

// --------------------------------------------------------------------------------- Deb's real kernels

TEST(SearchGenome, SbxMatchesHandComputedValues) {
  const auto check = [](double y1, double y2, double lo, double hi, double eta, double u, double c1, double c2) {
    const auto [a, b] = sbx(y1, y2, lo, hi, eta, u);
    EXPECT_NEAR(a, c1, 1e-12);
    EXPECT_NEAR(b, c2, 1e-12);
  };
  check(2, 4, 0, 10, 20, 0.3, 2.0240315605348096, 3.9759684394674117);  // u < 0.5: children inside the parents
  check(4, 2, 0, 10, 20, 0.9, 1.9203467761247544, 4.0796532238973633);  // u > 0.5: outside; parent order irrelevant
  check(0, 1, 0, 1, 2, 0.75, 0.045719851791965083, 0.95428014820803497);  // parents on both bounds
  check(1, 9, 0, 10, 1, 0.1, 3.5248728868331378, 6.4751271131668622);
}

TEST(SearchGenome, PolynomialMutationMatchesHandComputedValues) {
  EXPECT_NEAR(polynomial_mutation(5, 0, 10, 20, 0.1), 4.2622341015776737, 1e-12);
  EXPECT_NEAR(polynomial_mutation(5, 0, 10, 20, 0.95), 6.0384931491754443, 1e-12);
  EXPECT_EQ(polynomial_mutation(0, 0, 4, 20, 0.2), 0.0);  // pushed against its bound: stays there
  EXPECT_NEAR(polynomial_mutation(0, 0, 4, 1, 0.99), 3.4343145750507618, 1e-12);
  EXPECT_EQ(polynomial_mutation(3, 0, 4, 2, 0.5), 3.0);  // u = 0.5: no move
}

// ------------------------------------------------------------------------------------------ operators

const DesignSpace kMixed = space_of({gene("o1", 11, true), gene("c1", 4, false), gene("o2", 3, true), gene("c2", 7, false),
                                     gene("fixed", 1, true)},
                                    {"f"});

bool in_space(const DesignSpace& space, const DesignPoint& p) {
  for (std::size_t i = 0; i < space.genes.size(); ++i)
    if (p.genes[i] < 0 || p.genes[i] >= space.genes[i].size()) return false;
  return true;
}

TEST(SearchGenome, CrossoverSwapsCategoricalGenesAndKeepsOrdinalOnesInRange) {
  Random r(7);
  const Variation always{.crossover_probability = 1.0};
  bool ordinal_moved = false;
  for (int i = 0; i < 2000; ++i) {
    const DesignPoint a = random_point(kMixed, r);
    const DesignPoint b = random_point(kMixed, r);
    const auto [x, y] = crossover(kMixed, a, b, always, r);
    ASSERT_TRUE(in_space(kMixed, x) && in_space(kMixed, y));
    for (std::size_t g : {1u, 3u})  // categorical: the children hold the parents' two values
      ASSERT_EQ(std::multiset<std::int32_t>({x.genes[g], y.genes[g]}), std::multiset<std::int32_t>({a.genes[g], b.genes[g]}));
    for (std::size_t g : {0u, 2u}) {
      if (a.genes[g] == b.genes[g]) {  // equal parents are copied
        ASSERT_EQ(x.genes[g], a.genes[g]);
        ASSERT_EQ(y.genes[g], a.genes[g]);
      }
      ordinal_moved = ordinal_moved || (x.genes[g] != a.genes[g] && x.genes[g] != b.genes[g]);
    }
  }
  EXPECT_TRUE(ordinal_moved);  // SBX does create values other than the parents'
  const Variation never{.crossover_probability = 0.0};
  const DesignPoint a = random_point(kMixed, r), b = random_point(kMixed, r);
  const auto copies = crossover(kMixed, a, b, never, r);
  EXPECT_EQ(copies[0], a);
  EXPECT_EQ(copies[1], b);
}

TEST(SearchGenome, MutationResetsCategoricalGenesToAnotherValue) {
  Random r(9);
  const Variation always{.mutation_probability = 1.0};
  std::map<std::int32_t, int> categorical_values;
  for (int i = 0; i < 3000; ++i) {
    const DesignPoint before = random_point(kMixed, r);
    DesignPoint after = before;
    mutate(kMixed, after, always, r);
    ASSERT_TRUE(in_space(kMixed, after));
    ASSERT_NE(after.genes[1], before.genes[1]);
    ASSERT_NE(after.genes[3], before.genes[3]);
    ASSERT_EQ(after.genes[4], 0);
    if (before.genes[3] == 0) ++categorical_values[after.genes[3]];
  }
  EXPECT_EQ(categorical_values.size(), 6u);  // every other value is reachable
  const Variation never{.mutation_probability = 0.0};
  const DesignPoint p = random_point(kMixed, r);
  DesignPoint q = p;
  mutate(kMixed, q, never, r);
  EXPECT_EQ(p, q);
}

TEST(SearchGenome, OrdinalMutationMovesTheIndexLocally) {
  // 101 values, eta_m = 20: polynomial mutation of index 50, rounded. Median |move| ≈ 3 % of the range.
  const DesignSpace space = space_of({gene("x", 101, true)}, {"f"});
  Random r(13);
  const Variation always{.mutation_probability = 1.0};
  int moved = 0, far = 0;
  for (int i = 0; i < 4000; ++i) {
    DesignPoint p{{50}};
    mutate(space, p, always, r);
    moved += p.genes[0] != 50;
    far += std::abs(p.genes[0] - 50) > 20;
  }
  EXPECT_GT(moved, 3000);
  EXPECT_LT(far, 200);
}

TEST(SearchGenome, NeighbourChangesExactlyOneGeneWithinTheStep) {
  Random r(17);
  std::set<int> ordinal_moves;
  for (int i = 0; i < 4000; ++i) {
    const DesignPoint p = random_point(kMixed, r);
    const DesignPoint q = neighbour(kMixed, p, 2, r);
    ASSERT_TRUE(in_space(kMixed, q));
    int changed = 0;
    for (std::size_t g = 0; g < p.genes.size(); ++g) {
      if (p.genes[g] == q.genes[g]) continue;
      ++changed;
      if (kMixed.genes[g].ordinal) {
        ASSERT_LE(std::abs(p.genes[g] - q.genes[g]), 2);
      }
      if (g == 0 && p.genes[0] == 5) ordinal_moves.insert(q.genes[0] - 5);
      if (g == 0 && p.genes[0] == 0) {
        ASSERT_GT(q.genes[0], 0);  // at a bound only inward moves
      }
    }
    ASSERT_EQ(changed, 1);
  }
  EXPECT_EQ(ordinal_moves, (std::set<int>{-2, -1, 1, 2}));
  const DesignSpace frozen = space_of({gene("a", 1, true)}, {"f"});
  EXPECT_EQ(neighbour(frozen, DesignPoint{{0}}, 2, r), DesignPoint{{0}});
}

}  // namespace
}  // namespace monet
