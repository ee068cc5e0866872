#include "monet/training/module_calls.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "monet/training/modules.hpp"

namespace monet {

namespace {

using Scope = std::vector<std::string>;  // scope components as written ("layer", "q_1")

std::string join(const Scope& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "" : "/") + s[i];
  return out;
}

// "q_12" -> {"q", 12}; {"q", 0} for "q". The exporter appends std::to_string(k) for k >= 1, so "_0", "_01" and
// "_" are part of a name, not a call number.
std::pair<std::string, int> split_call(const std::string& c) {
  const auto u = c.rfind('_');
  if (u == std::string::npos || u == 0 || u + 1 == c.size() || c[u + 1] == '0' || c.size() - u - 1 > 6) return {c, 0};
  int k = 0;
  for (std::size_t i = u + 1; i < c.size(); ++i) {
    if (c[i] < '0' || c[i] > '9') return {c, 0};
    k = k * 10 + (c[i] - '0');
  }
  return {c.substr(0, u), k};
}

class Resolver {
 public:
  explicit Resolver(std::map<std::string, int> calls) : calls_(std::move(calls)) {}

  // The qualified names of the calls `scope` (as written, call 0 everywhere) and its ancestors belong to, for
  // call `k` of `scope`.
  Scope resolve(const Scope& scope, int k) {
    if (scope.empty()) return {};
    const std::string key = join(scope, scope.size()) + "#" + std::to_string(k);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    // The nearest ancestor whose calls are visible (it has operators of its own); the root has one call. A
    // module without operators of its own leaves no name per call, so it is taken as called once per call of
    // that ancestor.
    std::size_t a = scope.size() - 1;
    while (a > 0 && !calls_.contains(join(scope, a))) --a;
    const int m = a == 0 ? 1 : calls_.at(join(scope, a));
    const int n = calls_.at(join(scope, scope.size()));
    // The exporter numbers the calls of a path in graph order across all calls of its ancestors, so with r calls
    // per ancestor call, call k is the (k % r)-th of ancestor call k / r. When the counts do not divide (a forward
    // that calls its child a varying number of times), the calls stay in the ancestor's first call, as named.
    int j = 0, i = k;
    if (m > 1 && n % m == 0) {
      const int r = n / m;
      j = k / r;
      i = k % r;
    }
    Scope out = resolve(Scope(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(a)), j);
    // The names as written, qualified with call 0 everywhere: what a Sequential child's name is prefixed with.
    std::string written;
    for (std::size_t c = 0; c < scope.size(); ++c) {
      const std::string as_written = qualify_module(written, written, scope[c]);
      if (c >= a) {
        std::string q = qualify_module(out.empty() ? "" : out.back(), written, scope[c]);
        if (c + 1 == scope.size() && i > 0) q += "_" + std::to_string(i);
        out.push_back(std::move(q));
      }
      written = as_written;
    }
    memo_.emplace(key, out);
    return out;
  }

 private:
  std::map<std::string, int> calls_;  // visible calls per scope path as written ("layer/q" -> 4)
  std::map<std::string, Scope> memo_;
};

}  // namespace

std::vector<std::vector<std::string>> module_call_paths(const std::vector<const Operator*>& ops) {
  std::vector<Scope> scopes(ops.size());
  // The scope paths that exist as modules: every proper prefix of a scope (the exporter never suffixes those)
  // and every scope without a call suffix. "layer_1" is call 1 of "layer" only when "layer" exists; a module
  // whose attribute name ends in "_1" is itself.
  std::set<std::string> known;
  for (std::size_t o = 0; o < ops.size(); ++o) {
    scopes[o] = scope_names(*ops[o]);
    const Scope& s = scopes[o];
    for (std::size_t n = 1; n < s.size(); ++n) known.insert(join(s, n));
    if (!s.empty() && split_call(s.back()).second == 0) known.insert(join(s, s.size()));
  }
  std::vector<int> call(ops.size(), 0);
  std::map<std::string, int> calls;  // calls seen per scope path, from the operators directly in them
  for (std::size_t o = 0; o < ops.size(); ++o) {
    Scope& s = scopes[o];
    if (s.empty()) continue;
    auto [name, k] = split_call(s.back());
    if (k > 0) {
      Scope base = s;
      base.back() = name;
      if (known.contains(join(base, base.size()))) {
        s = std::move(base);
        call[o] = k;
      }
    }
    int& n = calls[join(s, s.size())];
    n = std::max(n, call[o] + 1);
  }
  Resolver resolver(std::move(calls));
  std::vector<std::vector<std::string>> paths(ops.size());
  for (std::size_t o = 0; o < ops.size(); ++o) {
    paths[o] = ops[o]->module.empty() ? resolver.resolve(scopes[o], call[o]) : module_path(*ops[o]);
  }
  return paths;
}

}  // namespace monet
