#include "monet/system/pass_schedule.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "monet/util/error.hpp"

namespace monet {

PassRun run_pass(const PassSchedule& pass) {
  const std::size_t n = pass.operator_seconds.size(), k = pass.collectives.size();
  PassRun r;
  r.operator_end_s.assign(n, 0);
  r.collective_start_s.assign(k, -1);
  r.collective_end_s.assign(k, -1);
  // Where each collective is issued and awaited: per operator, at its start (0) or end (1); the pass's own start
  // and end hold those with kPassEnd.
  std::vector<std::vector<std::size_t>> issue(2 * n + 2), await(2 * n + 2);
  auto slot = [&](std::size_t op, bool at_start, bool issuing) {
    if (op == kPassEnd) return issuing ? 2 * n : 2 * n + 1;
    if (op >= n) throw InternalError("pass schedule: a collective names operator " + std::to_string(op) + " of " + std::to_string(n));
    return 2 * op + (at_start ? 0 : 1);
  };
  for (std::size_t c = 0; c < k; ++c) {
    const PassCollective& x = pass.collectives[c];
    issue[slot(x.issued_by, x.issued_at_start, true)].push_back(c);
    await[slot(x.awaited_by, x.awaited_at_start, false)].push_back(c);
  }
  std::array<double, 8 * sizeof(unsigned)> link_free{};  // per bit of PassCollective::tiers
  double t = 0;
  auto issue_all = [&](std::size_t s) {
    for (std::size_t c : issue[s]) {
      const PassCollective& x = pass.collectives[c];
      double start = t;
      for (std::size_t l = 0; l < link_free.size(); ++l) {
        if (x.tiers & (1u << l)) start = std::max(start, link_free[l]);
      }
      const double end = start + x.seconds;
      for (std::size_t l = 0; l < link_free.size(); ++l) {
        if (x.tiers & (1u << l)) link_free[l] = end;
      }
      r.collective_start_s[c] = start;
      r.collective_end_s[c] = end;
      r.link_s[static_cast<std::size_t>(x.group)] += x.seconds;
    }
  };
  // An operator of `work` seconds started at `from`, slowed while collectives with a compute share run: piece by
  // piece between their starts and ends. Collectives in flight together each take their share of what the others
  // leave (the rate is the product of 1 - share: it never reaches 0); the time lost is split between their groups'
  // exposed time by share.
  const bool any_share = std::any_of(pass.collectives.begin(), pass.collectives.end(),
                                     [](const PassCollective& x) { return x.compute_share > 0; });
  auto run_operator = [&](double from, double work) {
    if (!any_share) return from + work;
    auto running = [&](std::size_t c, double at) {
      return pass.collectives[c].compute_share > 0 && r.collective_start_s[c] >= 0 && r.collective_start_s[c] <= at &&
             r.collective_end_s[c] > at;
    };
    while (work > 0) {
      double rate = 1, shares = 0, next = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < k; ++c) {
        const double start = r.collective_start_s[c];
        if (pass.collectives[c].compute_share > 0 && start > from) next = std::min(next, start);  // issued, not started
        if (!running(c, from)) continue;
        rate *= 1 - pass.collectives[c].compute_share, shares += pass.collectives[c].compute_share;
        next = std::min(next, r.collective_end_s[c]);
      }
      if (rate * (next - from) >= work) return from + work / rate;  // done before the next start or end
      for (std::size_t c = 0; c < k; ++c) {
        if (!running(c, from)) continue;
        const PassCollective& x = pass.collectives[c];
        r.exposed_s[static_cast<std::size_t>(x.group)] += (next - from) * (1 - rate) * x.compute_share / shares;
      }
      work -= rate * (next - from);
      from = next;
    }
    return from;
  };
  auto await_all = [&](std::size_t s) {
    for (std::size_t c : await[s]) {
      const double end = r.collective_end_s[c];
      if (end < 0) throw InternalError("pass schedule: collective " + std::to_string(c) + " is awaited before it is issued");
      if (end > t) {
        r.exposed_s[static_cast<std::size_t>(pass.collectives[c].group)] += end - t;
        t = end;
      }
    }
  };
  issue_all(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    await_all(2 * i);  // what this operator needs, then what is issued as it starts
    issue_all(2 * i);
    t = run_operator(t, pass.operator_seconds[i]);
    r.compute_s += pass.operator_seconds[i];
    r.operator_end_s[i] = t;
    issue_all(2 * i + 1);  // issued as it ends, then awaited there (a synchronous collective)
    await_all(2 * i + 1);
  }
  await_all(2 * n + 1);
  r.seconds = t;
  return r;
}

double first_free(const std::vector<std::pair<double, double>>& taken, double from, double length) {
  for (const auto& [start, end] : taken) {
    if (end <= from) continue;
    if (start >= from + length) break;  // a gap long enough before this one
    from = std::max(from, end);
  }
  return from;
}

}  // namespace monet
