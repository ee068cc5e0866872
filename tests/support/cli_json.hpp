#pragma once
// JSON output of the CLI, for the end-to-end tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace monet::test {

/// `monet cost ARGS --json`, parsed (warnings are silenced: on stderr they would interleave with the JSON).
inline nlohmann::json cost_json(const std::string& args) {
  const auto r = monet("--log-level error cost " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

}  // namespace monet::test
