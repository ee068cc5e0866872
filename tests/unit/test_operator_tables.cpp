// The onnx frontend's operator table and autodiff's gradient-rule table: sorted (they are searched by
// bisection), every differentiable operator the frontend makes has a gradient rule, and docs/workloads.md
// lists every operator with the table's treatment.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>

#include "backward/autodiff/rules.hpp"
#include "frontend/onnx/op_table.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using onnx_frontend::Treatment;
using plugins::autodiff::GradientForm;

TEST(OperatorTables, SortedWithoutDuplicates) {
  const auto& ops = onnx_frontend::op_rules();
  for (std::size_t i = 1; i < ops.size(); ++i) EXPECT_LT(ops[i - 1].type, ops[i].type) << ops[i].type;
  const auto& grads = plugins::autodiff::gradient_rules();
  for (std::size_t i = 1; i < grads.size(); ++i) EXPECT_LT(grads[i - 1].type, grads[i].type) << grads[i].type;
  for (const auto& r : ops) EXPECT_EQ(onnx_frontend::op_rule(r.type), &r) << r.type;
}

TEST(OperatorTables, EveryOperatorTheFrontendMakesHasAGradientRule) {
  for (const auto& r : onnx_frontend::op_rules()) {
    if (r.treatment == Treatment::unsupported || r.treatment == Treatment::folded) continue;
    EXPECT_NE(plugins::autodiff::gradient_rule(r.type), nullptr) << r.type;
  }
  // Types the frontend gives to recognised patterns and to the copies PyTorch makes.
  for (const char* t : {"Silu", "Rsqrt", "Mish", "Gelu", "HardSwish", "GroupNormalization", "LayerNormalization",
                        "Embedding", "IndexSelect", "Flip", "ReshapeCopy", "MatMulFoldCopy", "ReflectionPad",
                        "ReplicationPad", "CircularPad"}) {
    EXPECT_NE(plugins::autodiff::gradient_rule(t), nullptr) << t;
  }
  // No gradient exactly for comparisons, random numbers and integer results.
  for (const auto& g : plugins::autodiff::gradient_rules()) {
    if (g.form != GradientForm::none) continue;
    EXPECT_TRUE(g.reads == plugins::autodiff::kNothing) << g.type;
  }
}

TEST(OperatorTables, DocsListEveryOperatorWithItsTreatment) {
  std::ifstream in(test::source_dir() / "docs/workloads.md");
  const std::regex row(R"(^\| `([A-Za-z0-9]+)` \| ([a-z ]+) \|)");
  std::map<std::string, std::string> documented;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) documented[m[1]] = m[2];
  }
  for (const auto& r : onnx_frontend::op_rules()) {
    const auto it = documented.find(std::string(r.type));
    ASSERT_NE(it, documented.end()) << r.type << " is missing from docs/workloads.md";
    EXPECT_EQ(it->second, onnx_frontend::treatment_name(r.treatment)) << r.type;
  }
  EXPECT_EQ(documented.size(), onnx_frontend::op_rules().size());
}

}  // namespace
}  // namespace monet
