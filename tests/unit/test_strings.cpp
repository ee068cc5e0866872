#include <gtest/gtest.h>

#include "monet/util/strings.hpp"

namespace monet {

TEST(Strings, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("roofline", "rooflne"), 1u);
}

TEST(Strings, ClosestNamesOrdersByDistanceAndDropsFarOnes) {
  const std::vector<std::string> names{"roofline", "loopnest", "table"};
  EXPECT_EQ(closest_names("rooflin", names), std::vector<std::string>{"roofline"});
  EXPECT_EQ(closest_names("tabel", names), std::vector<std::string>{"table"});
  EXPECT_TRUE(closest_names("zzzzzzzz", names).empty());
  EXPECT_EQ(did_you_mean("loopnet", names), " (did you mean 'loopnest'?)");
  EXPECT_EQ(did_you_mean("xyzxyz", names), "");
}

TEST(Strings, ThousandsSeparators) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1814073344), "1,814,073,344");
  EXPECT_EQ(with_thousands(-1234), "-1,234");
}

}  // namespace monet
