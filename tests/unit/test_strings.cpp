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

TEST(Strings, SiPrefixes) {
  EXPECT_EQ(si(2097152, "B"), "2.097 MB");
  EXPECT_EQ(si(2097152, "B", 2), "2.1 MB");
  EXPECT_EQ(si(530568e-12, "J"), "530.6 nJ");
  EXPECT_EQ(si(0, "J"), "0 J");
  EXPECT_EQ(si(999960, "B"), "1 MB");  // rounds up into the next prefix
  EXPECT_EQ(si(5e7, ""), "50M");
  EXPECT_EQ(si(1500, ""), "1.5k");
}

}  // namespace monet
