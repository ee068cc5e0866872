// Checkpointing with gradient accumulation ([training] micro_batches = k): each micro-batch's activations are freed
// by its own backward pass, so the step's activation peak is one micro-batch's, and the optimal solvers (dp,
// segments, rotor, milp) solve the first micro-batch and give every micro-batch the same choice, each recomputing
// its own operators: the same regions, k times the recomputed MACs, the same peak (exact integers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "monet/training/checkpoint_micro_batches.hpp"
#include "monet/training/checkpoint_rotor.hpp"
#include "monet/training/memory.hpp"
#include "support/plugin_graphs.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

/// The training step of `fwd` with k micro-batches (autodiff's defaults, no optimizer).
GraphPtr step(const GraphPtr& fwd, std::int64_t k) {
  const Registry& r = Registry::global();
  const PluginHandle* h = r.find(PluginKind::backward, "autodiff");
  TrainingSettings s;
  s.micro_batches = k;
  return r.create<BackwardGenerator>(*h, default_params(h->info.params, "test"))->generate(*fwd, s);
}

/// The micro-batch a tensor or operator name belongs to: m for a tag "@m" (m >= 2), else 1.
int micro_batch_of(const std::string& name) {
  static const std::regex tag("@([0-9]+)");
  int m = 1;
  for (std::sregex_iterator it(name.begin(), name.end(), tag), end; it != end; ++it) m = std::stoi((*it)[1]);
  return m;
}

/// What a rewritten step measures, and that every recompute operator of micro-batch m reads and writes only
/// tensors of micro-batch m (weights and buffers are shared).
struct Measured {
  std::int64_t peak = 0, macs = 0, recompute_ops = 0;
};
Measured measure(const Graph& g) {
  const TrainingSummary s = training_summary(g);
  Measured m{s.memory.peak_activation_bytes, s.recompute.macs, s.recompute.operators};
  for (const Operator& op : g.operators()) {
    if (op.phase != Phase::recompute) continue;
    const int mb = micro_batch_of(op.name);
    EXPECT_EQ(micro_batch_of(g.op(op.derived_from).name), mb) << op.name;
    for (const Operand& o : op.operands) {
      const Tensor& t = g.tensor(o.tensor);
      if (t.role == TensorRole::weight || t.role == TensorRole::buffer) continue;
      EXPECT_EQ(micro_batch_of(t.name), mb) << op.name << " reads " << t.name;
    }
  }
  return m;
}

class MicroBatchCheckpoint : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
  GraphPtr fwd_ = test::load("toml", dir_.write("w.toml", test::uneven_chain()));
};

// Without checkpointing: the peak is one micro-batch's backward pass, 6,080 B for every k. (Counted from the first
// backward operator to the end, as before micro-batches were separated, micro-batch 2's input and labels, 256 +
// 32 B, were live in micro-batch 1's backward pass, and micro-batch 2's forward pass — 6,560 B at b4's ReLU — was
// counted as backward.) The skipped ranges are the later micro-batches' forward passes and losses.
TEST_F(MicroBatchCheckpoint, PeakIsOneMicroBatchsBackwardPass) {
  const GraphPtr one = step(fwd_, 1);
  EXPECT_EQ(training_memory(*one).peak_activation_bytes, 6'080);
  for (std::int64_t k : {2, 3}) {
    const GraphPtr g = step(fwd_, k);
    EXPECT_EQ(training_memory(*g).peak_activation_bytes, 6'080) << k;
    const BackwardActivations a = backward_activations(*g);
    ASSERT_EQ(a.skipped.size(), static_cast<std::size_t>(k - 1));
    const MicroBatchSteps s = micro_batch_steps(g, SourceLocation{"test"});
    EXPECT_EQ(s.count, static_cast<std::size_t>(k));
    EXPECT_EQ(s.length, one->operators().size());  // no optimizer: the 1-micro-batch step is one copy
    // After each micro-batch but the first, its gradients are added into the accumulators: one operator per
    // trainable parameter, between it and the next micro-batch.
    std::size_t parameters = 0;
    for (const Tensor& t : fwd_->tensors()) parameters += t.is_trainable() ? 1 : 0;
    for (std::size_t m = 1; m < s.count; ++m) {
      EXPECT_EQ(s.begins[m], m * s.length + (m - 1) * parameters);
      // 19 forward operators and 2 of the loss, then micro-batch m + 1's backward pass.
      EXPECT_EQ(a.skipped[m - 1].first, s.begins[m]);
      EXPECT_EQ(a.skipped[m - 1].second, s.begins[m] + 21);
      EXPECT_EQ(g->op(a.skipped[m - 1].first).name, "b0_fcA@" + std::to_string(m + 1));
    }
    // The first micro-batch's step alone measures what the step of one does.
    EXPECT_EQ(training_memory(*s.first).peak_activation_bytes, 6'080);
  }
}

// The simpler policies give every micro-batch its own regions: the same peak, k times the MACs.
TEST_F(MicroBatchCheckpoint, SimplePoliciesRecomputeEveryMicroBatch) {
  for (const char* policy : {"segments=2", "every_k=sqrt", "modules=b1,b4"}) {
    const GraphPtr one = step(fwd_, 1);
    const Measured m1 = measure(*apply_checkpointing(one, parse_checkpoint_policy(policy, SourceLocation{})));
    ASSERT_GT(m1.macs, 0) << policy;
    for (std::int64_t k : {2, 3}) {
      const Measured mk = measure(*apply_checkpointing(step(fwd_, k), parse_checkpoint_policy(policy, SourceLocation{})));
      EXPECT_EQ(mk.peak, m1.peak) << policy << " k = " << k;
      EXPECT_EQ(mk.macs, k * m1.macs) << policy << " k = " << k;
      EXPECT_EQ(mk.recompute_ops, k * m1.recompute_ops) << policy << " k = " << k;
    }
  }
}

/// The optimal policy's regions and step, by solver.
struct Solved {
  std::vector<CheckpointRegion> regions;
  GraphPtr step;
  CheckpointSolve solve;
};
Solved solve(const GraphPtr& g, const std::string& solver, std::int64_t budget) {
  Solved s;
  const CheckpointPolicy p = parse_checkpoint_policy("optimal=" + std::to_string(budget), SourceLocation{"test"});
  if (solver == "rotor") {
    s.regions = rotor_regions(g, p, {}, {}, &s.solve, &s.step);
  } else {
    CheckpointSolver c;
    c.name = solver;
    s.regions = optimal_regions(g, p, {}, {}, c, &s.solve);
    s.step = apply_checkpointing(*g, s.regions);
  }
  return s;
}

// dp, segments, rotor and milp with 2 and 3 micro-batches, at budgets across each solver's 1-micro-batch front:
// the regions are the 1-micro-batch ones for every micro-batch (its own operators), the MACs k times, the peak the
// same, every recompute operator reading its own micro-batch's tensors.
TEST_F(MicroBatchCheckpoint, OptimalSolversGiveEveryMicroBatchTheOneMicroBatchChoice) {
  const GraphPtr one = step(fwd_, 1);
  const GraphPtr two = step(fwd_, 2), three = step(fwd_, 3);
  // Budgets: low on each solver's front (every_k = 2's peak for the per-block ones, the least of segments and
  // rotor), one in between and none's peak (nothing recomputed).
  const std::map<std::string, std::vector<std::int64_t>> budgets{
      {"dp", {3'840, 4'608, 6'080}},
      {"segments", {3'328, 4'608, 6'080}},
      {"rotor", {3'072, 4'608, 6'080}},
      {"milp", {3'840, 6'080}}};
  for (const auto& [solver, list] : budgets) {
    for (std::int64_t budget : list) {
      Solved s1;
      try {
        s1 = solve(one, solver, budget);
      } catch (const UserError& e) {
        ADD_FAILURE() << solver << " at " << budget << ": " << e.what();
        continue;
      }
      const Measured m1 = measure(*s1.step);
      EXPECT_EQ(m1.peak, s1.solve.peak) << solver << " " << budget;
      EXPECT_LE(m1.peak, budget);
      for (const GraphPtr& g : {two, three}) {
        const auto k = static_cast<std::int64_t>(micro_batch_steps(g, SourceLocation{}).count);
        const Solved sk = solve(g, solver, budget);
        const Measured mk = measure(*sk.step);
        const std::string at = solver + " at " + std::to_string(budget) + ", k = " + std::to_string(k);
        EXPECT_EQ(mk.peak, m1.peak) << at;
        EXPECT_EQ(mk.macs, k * m1.macs) << at;
        EXPECT_EQ(sk.solve.peak, s1.solve.peak) << at;
        EXPECT_EQ(sk.solve.objective, static_cast<double>(k) * s1.solve.objective) << at;
        EXPECT_EQ(sk.solve.checkpointed, s1.solve.checkpointed) << at;
        if (solver == "rotor" && budget == 3'072) {  // nested: b0 runs twice more in every micro-batch
          EXPECT_NE(s1.step->find_operator("b0_fcA@recompute2"), nullptr);
          EXPECT_NE(sk.step->find_operator("b0_fcA@" + std::to_string(k) + "@recompute2"), nullptr) << at;
        }
        // The same regions in every micro-batch: micro-batch m's are the first's with "@m" on every operator.
        ASSERT_EQ(sk.regions.size(), static_cast<std::size_t>(k) * s1.regions.size()) << at;
        for (std::size_t m = 0; m < static_cast<std::size_t>(k); ++m) {
          const std::string tag = m == 0 ? "" : "@" + std::to_string(m + 1);
          for (std::size_t i = 0; i < s1.regions.size(); ++i) {
            const CheckpointRegion& a = s1.regions[i];
            const CheckpointRegion& b = sk.regions[m * s1.regions.size() + i];
            EXPECT_EQ(b.name, a.name + (m == 0 ? "" : " (micro-batch " + std::to_string(m + 1) + ")")) << at;
            ASSERT_EQ(b.operators.size(), a.operators.size()) << at;
            for (std::size_t o = 0; o < a.operators.size(); ++o) {
              EXPECT_EQ(g->op(b.operators[o]).name, one->op(a.operators[o]).name + tag) << at;
            }
          }
        }
      }
    }
  }
}

// The solvers need micro-batches that are copies of the first, and a whole step that measures what one
// micro-batch does: otherwise one located error. A step whose first micro-batch is checkpointed already is no
// such step (its first micro-batch has recompute operators the second lacks); a whole step with only the first
// micro-batch rewritten recomputes 1 x, not 2 x, the first's MACs.
TEST_F(MicroBatchCheckpoint, MicroBatchesThatAreNotTheSameProblemAreRefused) {
  const GraphPtr two = step(fwd_, 2);
  const CheckpointPolicy p = parse_checkpoint_policy("optimal=6080", SourceLocation{"exp.toml", 7, 10});
  const MicroBatchSteps s = micro_batch_steps(two, p.where);
  const std::vector<CheckpointRegion> first =
      checkpoint_regions(*s.first, parse_checkpoint_policy("segments=2", SourceLocation{}));
  const GraphPtr half = apply_checkpointing(*two, first);  // micro-batch 1 only
  try {
    (void)micro_batch_steps(half, p.where);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 7u);
    // The first micro-batch has the recompute operators: where the first recomputes b0, micro-batch 2 differentiates.
    EXPECT_THAT(e.message(), ::testing::HasSubstr("not copies of it: operator 'b2_fcB@2/dX' of micro-batch 2 stands "
                                                  "where the first has 'b0_fcA@recompute'"));
  }
  const GraphPtr one_rewritten = apply_checkpointing(*s.first, first);
  const std::int64_t peak = training_memory(*one_rewritten).peak_activation_bytes;
  EXPECT_NO_THROW(check_every_micro_batch(s, one_rewritten, apply_checkpointing(*two, every_micro_batch(s, first)), peak,
                                          p, {}, {}, "dp"));
  try {
    check_every_micro_batch(s, one_rewritten, half, peak, p, {}, {}, "dp");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 7u);
    EXPECT_THAT(e.message(), ::testing::HasSubstr("micro-batches of " + two->name() + " and applies its choice"));
    EXPECT_THAT(e.message(), ::testing::HasSubstr("not the same problem"));
  }
}

// Loss scaling multiplies each micro-batch's loss right after the operator that computes it, so the loss scalar of
// one micro-batch is not live in a later one's backward pass: the step of two micro-batches still peaks at one's
// 6,080 B and the solvers' check accepts it. (With the scale operators after the last micro-batch, the first's
// loss lived through the second's pass and the check refused the step.)
TEST_F(MicroBatchCheckpoint, LossScalingScalesEachMicroBatchsLossInItsOwnPass) {
  const Registry& r = Registry::global();
  const PluginHandle* o = r.find(PluginKind::optimizer, "sgd");
  ASSERT_NE(o, nullptr);
  TrainingSettings s;
  s.micro_batches = 2;
  s.precision = Precision{};
  s.precision->loss_scaling = true;
  const GraphPtr two = r.create<OptimizerModel>(*o, default_params(o->info.params, "test"))->apply(*step(fwd_, 2), s);
  int scaled = 0;
  for (const Operator& op : two->operators()) {
    if (op.type != "LossScale") continue;
    ++scaled;
    const Tensor& loss = two->tensor(op.operands[1].tensor);
    ASSERT_EQ(loss.role, TensorRole::loss) << op.name;
    EXPECT_EQ(loss.producer + 1, op.id) << op.name << " does not follow " << two->op(loss.producer).name;
  }
  EXPECT_EQ(scaled, 2);
  EXPECT_EQ(training_memory(*two).peak_activation_bytes, 6080);
  const CheckpointPolicy p = parse_checkpoint_policy("optimal=6080", SourceLocation{"exp.toml", 7, 10});
  const MicroBatchSteps steps = micro_batch_steps(two, p.where);
  ASSERT_EQ(steps.count, 2u);
  const std::vector<CheckpointRegion> first = checkpoint_regions(*steps.first, parse_checkpoint_policy("segments=2", SourceLocation{}));
  const GraphPtr one_rewritten = apply_checkpointing(*steps.first, first);
  EXPECT_NO_THROW(check_every_micro_batch(steps, one_rewritten, apply_checkpointing(*two, every_micro_batch(steps, first)),
                                          training_memory(*one_rewritten).peak_activation_bytes, p, {}, {}, "dp"));
}

}  // namespace
}  // namespace monet
