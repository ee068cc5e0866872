#pragma once
// The best mapping of the orderings a temporal search shows it (section 5.5), and the pieces the exact and the
// approximate searches share: loop prime factors and their orderings.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator.hpp"
#include "mapping_evaluator.hpp"

namespace monet::loopnest {

/// A loop prime factor (possibly merged, 5.2).
struct Lpf {
  int dim = 0;
  std::int64_t size = 1;
  bool operator<(const Lpf& o) const { return dim != o.dim ? dim < o.dim : size < o.size; }
  bool operator==(const Lpf& o) const { return dim == o.dim && size == o.size; }
};
using Ordering = std::vector<Lpf>;  // innermost first

/// Keeps the best mapping in the order orderings are considered; ties keep the earlier one (ZigZag's rule).
/// Except in the exhaustive search, a mapping whose stage-1 signature equals an earlier one's has the same numbers
/// (mapping_evaluator.hpp), so it cannot be strictly better than the best so far (better() is a strict weak order)
/// and is not finished; the text of the winner is written once, at the end. One per search: not thread-safe.
class Incumbent {
 public:
  Incumbent(const Layer& L, const Hierarchy& h, const Spatial& sp, const Options& options, std::int64_t* evaluated,
            std::string* why);
  /// The score of the ordering's mapping; nullopt when it does not fit. `weight`: how many orderings this one
  /// stands for in the count of mappings (itself, and its mirror image when the search skips that).
  std::optional<Score> consider(const Ordering& ordering, int weight = 1);
  /// The best mapping, with its temporal text; nullopt when no ordering fitted.
  std::optional<Evaluation> result();
  [[nodiscard]] const Options& options() const { return options_; }

 private:
  struct SignatureHash {
    std::size_t operator()(const std::vector<std::uint64_t>& v) const;
  };
  const Layer& L_;
  const Hierarchy& h_;
  const Spatial& sp_;
  const Options& options_;
  std::int64_t* evaluated_;
  std::string* why_;
  MemoryAllocator allocator_;
  MappingEvaluator evaluator_;
  Nest nest_;
  std::unordered_map<std::vector<std::uint64_t>, Score, SignatureHash> seen_;  // signature -> its numbers
  std::optional<Evaluation> best_;
  Temporal best_tm_;
};

/// The approximate search (`search = "fast"`, docs/cost-models.md): a sample of orderings, then hill climbing.
/// `pool` holds the loop prime factors in ascending order.
void search_fast(Ordering pool, Incumbent& incumbent);

}  // namespace monet::loopnest
