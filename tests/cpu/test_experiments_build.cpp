// RUNGS_EXPERIMENTS only adds code: the CLI's flags for gemm_host's experiment hooks (their entries in
// the flag table and the help's line about them). Anywhere else under src/ it would give the library,
// or a struct, another shape in the experiments build than in the one that ships.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace rungs::test {
namespace {

TEST(ExperimentsBuild, OnlyTheCliFlagsDependOnIt) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(RUNGS_SOURCE_DIR) / "src";
  const std::set<std::string> allowed = {"cli/args.cpp", "cli/help.cpp"};
  int files = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string rel = fs::relative(e.path(), src).generic_string();
    const std::string text = ss.str();
    const bool depends = text.find("#ifdef RUNGS_EXPERIMENTS") != std::string::npos ||
                         text.find("#ifndef RUNGS_EXPERIMENTS") != std::string::npos ||
                         text.find("defined(RUNGS_EXPERIMENTS)") != std::string::npos;
    EXPECT_TRUE(!depends || allowed.count(rel)) << "src/" << rel << " depends on RUNGS_EXPERIMENTS";
  }
  EXPECT_GT(files, 100) << src;
}

}  // namespace
}  // namespace rungs::test
