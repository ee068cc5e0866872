// Validation messages of user files: every one names file:line:column and what was expected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "monet/config/toml_reader.hpp"
#include "support/test_support.hpp"

namespace monet {
namespace {

using ::testing::HasSubstr;

using test::error_of;

TEST(TomlReader, TypeErrorNamesTheValueLocation) {
  auto doc = TomlDocument::parse_string("[core]\nname = 42\n", "core.toml");
  TableReader root(doc.root(), doc.file(), "");
  auto core = root.required_table("core");
  EXPECT_EQ(error_of([&] { core.string("name"); }), "core.toml:2:8: error: core.name: expected a string, got an integer");
}

TEST(TomlReader, UnknownKeySuggestsTheClosestValidKey) {
  auto doc = TomlDocument::parse_string("[array]\nsizes = [8]\nunit_energy_p = 0.5\n", "c.toml");
  TableReader root(doc.root(), doc.file(), "");
  auto a = root.required_table("array");
  a.integer_list("sizes");
  a.number("unit_energy_pj");
  EXPECT_EQ(error_of([&] { a.finish(); }),
            "c.toml:3:1: error: unknown key 'array.unit_energy_p' (did you mean 'unit_energy_pj'?); valid keys here: "
            "sizes, unit_energy_pj");
}

TEST(TomlReader, BoundsAreCheckedWithTheRangeInTheMessage) {
  auto doc = TomlDocument::parse_string("u = 1.5\nn = 0\nf = 2.5\n", "x.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(error_of([&] { root.number("u", Bounds::fraction()); }),
            "x.toml:1:5: error: u: expected a value in (0, 1], got 1.5");
  EXPECT_EQ(error_of([&] { root.integer("n", Bounds::positive()); }), "x.toml:2:5: error: n: expected a value > 0, got 0");
  EXPECT_EQ(error_of([&] { root.integer("f"); }), "x.toml:3:5: error: f: expected an integer, got a number (2.5)");
}

TEST(TomlReader, InfAndNanAreOutsideEveryRange) {
  // TOML reads inf and nan as floats: `lr = inf` passed `lr > 0`, and an unbounded nan said "expected , got nan".
  auto doc = TomlDocument::parse_string("lr = inf\nx = nan\nl = [1.0, -inf]\n", "x.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(error_of([&] { root.number("lr", Bounds::positive()); }),
            "x.toml:1:6: error: lr: expected a finite number (a value > 0), got inf");
  EXPECT_EQ(error_of([&] { root.number("x"); }), "x.toml:2:5: error: x: expected a finite number, got nan");
  EXPECT_EQ(error_of([&] { root.number_list("l"); }),
            "x.toml:3:11: error: l: every element must be a finite number, got -inf");
  EXPECT_FALSE(Bounds{}.contains(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(Bounds::positive().contains(1e300));
}

TEST(TomlReader, SyntaxErrorsCarryTheirPosition) {
  const std::string msg = error_of([] { TomlDocument::parse_string("a = 1\nb = [1, 2\n", "bad.toml"); });
  EXPECT_THAT(msg, HasSubstr("bad.toml:"));
  EXPECT_THAT(msg, HasSubstr("error: TOML syntax:"));
}

TEST(TomlReader, MissingAndUnreadableFiles) {
  test::ScratchDir dir;
  EXPECT_EQ(error_of([&] { TomlDocument::parse_file(dir.path() / "nope.toml"); }),
            (dir.path() / "nope.toml").string() + ": error: file not found");
  EXPECT_THAT(error_of([&] { TomlDocument::parse_file(dir.path()); }), HasSubstr("is a directory"));
}

TEST(TomlReader, PathsAreRelativeToTheFileAndMustExist) {
  test::ScratchDir dir;
  dir.write("sub/core.toml", "x = 1\n");
  auto exp = dir.write("exp.toml", "a = \"sub/core.toml\"\nb = \"sub/missing.toml\"\n");
  auto doc = TomlDocument::parse_file(exp);
  TableReader root(doc.root(), doc.file(), "", doc.base_dir());
  EXPECT_EQ(*root.path("a"), (dir.path() / "sub/core.toml").lexically_normal());
  EXPECT_THAT(error_of([&] { root.path("b"); }), HasSubstr("exp.toml:2:5: error: b: file not found: "));
}

TEST(TomlReader, ChoicesListTheValidValues) {
  auto doc = TomlDocument::parse_string("mode = \"trainig\"\n", "e.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(error_of([&] { root.choice("mode", {"inference", "training"}); }),
            "e.toml:1:8: error: mode: 'trainig' is not one of 'inference', 'training' (did you mean 'training'?)");
}

TEST(TomlReader, IntegerOrListExpandsScalars) {
  auto doc = TomlDocument::parse_string("k = 3\ns = [1, 2]\nbad = [1, 2, 3]\n", "l.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(*root.integer_or_list("k", 2), (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(*root.integer_or_list("s", 2), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(error_of([&] { root.integer_or_list("bad", 2); }),
            "l.toml:3:7: error: bad: expected an integer or a list of 2 integers, got a list of 3");
}

TEST(TomlReader, ListElementErrorsPointAtTheElement) {
  auto doc = TomlDocument::parse_string("sizes = [8, \"x\"]\n", "l.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(error_of([&] { root.integer_list("sizes"); }),
            "l.toml:1:13: error: sizes: expected an array of integers, found a string in it");
}

TEST(TomlReader, MissingRequiredTable) {
  auto doc = TomlDocument::parse_string("x = 1\n", "e.toml");
  TableReader root(doc.root(), doc.file(), "");
  EXPECT_EQ(error_of([&] { root.required_table("workload"); }), "e.toml: error: missing required table [workload]");
}

}  // namespace
}  // namespace monet
