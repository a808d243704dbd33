// `rungs`: the command-line tool. Everything lives in rungs_cli_lib (src/cli/*.cpp) so the
// tests can drive the parser and the writers; see commands.hpp.
#include "cli/commands.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return rungs::cli::run_main(args, argc > 0 ? argv[0] : "rungs", std::cout, std::cerr);
}
