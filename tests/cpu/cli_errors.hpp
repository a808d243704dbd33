// The CLI tests' view of a parse failure: the CliError message for argv (its exit code checked to be 2,
// the usage-error code), or "" when argv parses.
#pragma once

#include "cli/args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rungs::cli {

inline std::string parse_error(const std::vector<std::string>& argv) {
  try {
    (void)parse_args(argv);
  } catch (const CliError& e) {
    EXPECT_EQ(e.code(), 2);
    return e.what();
  }
  return "";
}

}  // namespace rungs::cli
