#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monet/config/params.hpp"
#include "monet/config/params_toml.hpp"

namespace monet {
namespace {

std::vector<ParamSpec> specs() {
  return {ParamSpec::number("utilization", 1.0).with_bounds(Bounds::fraction()).with_unit("fraction"),
          ParamSpec::integer("limit", std::nullopt).with_bounds(Bounds::at_least(1)).with_doc("how many"),
          ParamSpec::choice("objective", {"latency", "energy", "edp"}, "latency"),
          ParamSpec::string_list("names", std::vector<std::string>{})};
}

TEST(Params, DefaultsAreFilledAndMarkedDefaulted) {
  auto doc = TomlDocument::parse_string("limit = 3\n", "p.toml");
  TableReader t(doc.root(), doc.file(), "cost_model");
  const ParamValues v = read_params(t, specs());
  EXPECT_DOUBLE_EQ(v.get_number("utilization"), 1.0);
  EXPECT_TRUE(v.entries().at("utilization").defaulted);
  EXPECT_EQ(v.get_int("limit"), 3);
  EXPECT_FALSE(v.entries().at("limit").defaulted);
  EXPECT_EQ(v.where("limit").str(), "p.toml:1:9");
  EXPECT_EQ(v.get_string("objective"), "latency");
  EXPECT_TRUE(v.get_strings("names").empty());
  t.finish();
}

TEST(Params, LayersOverrideKeyByKey) {
  // A core's parameters, then an experiment's: each key from the last layer that sets it, else the default.
  auto core = TomlDocument::parse_string("limit = 3\nobjective = \"energy\"\n", "core.toml");
  auto exp = TomlDocument::parse_string("objective = \"edp\"\n", "exp.toml");
  TableReader ct(core.root(), core.file(), "cost_model_params");
  TableReader et(exp.root(), exp.file(), "cost_model.x");
  const ParamValues own = read_set_params(ct, specs());
  const ParamValues set = read_set_params(et, specs());
  EXPECT_FALSE(set.has("limit"));  // nothing required, no defaults: only what the table sets
  const ParamValues v = layered_params(specs(), {&own, &set}, "x");
  EXPECT_EQ(v.get_int("limit"), 3);
  EXPECT_EQ(v.where("limit").str(), "core.toml:1:9");
  EXPECT_EQ(v.get_string("objective"), "edp");
  EXPECT_EQ(v.where("objective").str(), "exp.toml:1:13");
  EXPECT_TRUE(v.entries().at("utilization").defaulted);
  EXPECT_THROW((void)layered_params(specs(), {&set, nullptr}, "x"), UserError);  // `limit` is required
}

TEST(Params, RequiredParameterMissing) {
  auto doc = TomlDocument::parse_string("[cost_model]\nutilization = 0.5\n", "p.toml");
  TableReader root(doc.root(), doc.file(), "");
  auto t = root.required_table("cost_model");
  try {
    read_params(t, specs());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "p.toml:1:1: error: [cost_model]: missing required key 'limit' (integer: how many)");
  }
}

TEST(Params, ChoiceAndBoundsViolations) {
  auto doc = TomlDocument::parse_string("limit = 1\nobjective = \"edpp\"\n", "p.toml");
  TableReader t(doc.root(), doc.file(), "search");
  try {
    read_params(t, specs());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "p.toml:2:13: error: search.objective: 'edpp' is not one of 'latency', 'energy', 'edp' (did you mean "
                 "'edp'?)");
  }
}

TEST(Params, UnknownKeysAreLeftToFinishWithSuggestions) {
  auto doc = TomlDocument::parse_string("limit = 1\nutilisation = 0.5\n", "p.toml");
  TableReader t(doc.root(), doc.file(), "cost_model");
  read_params(t, specs());
  try {
    t.finish();
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("p.toml:2:1: error: unknown key 'cost_model.utilisation' (did you mean "
                                                "'utilization'?)"));
  }
}

TEST(Params, ValuesPrintAsTomlThatReadsBackTheSame) {
  EXPECT_EQ(to_string(ParamValue(1.0)), "1.0");
  EXPECT_EQ(to_string(ParamValue(0.1)), "0.1");
  EXPECT_EQ(to_string(ParamValue(1e-12)), "1e-12");
  EXPECT_EQ(to_string(ParamValue(std::int64_t{7})), "7");
  EXPECT_EQ(to_string(ParamValue(std::string("a\"b"))), "\"a\\\"b\"");
  EXPECT_EQ(to_string(ParamValue(std::vector<std::string>{"x", "y"})), "[\"x\", \"y\"]");
  EXPECT_EQ(to_string(ParamValue(std::vector<double>{0.5, 2.0})), "[0.5, 2.0]");
  for (double v : {0.1, 1.0 / 3.0, 123456.789, 5e-7}) {
    auto doc = TomlDocument::parse_string("v = " + to_string(ParamValue(v)) + "\n", "v.toml");
    EXPECT_EQ(doc.root()["v"].value<double>().value(), v);
  }
}

TEST(Params, DefaultParamsRejectMissingRequired) {
  EXPECT_THROW(default_params(specs(), "ctx"), UserError);
  EXPECT_NO_THROW(default_params({ParamSpec::boolean("flag", false)}, "ctx"));
}

}  // namespace
}  // namespace monet
