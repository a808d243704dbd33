// The NVTX ranges of the public entry points without a tool attached (as the tests run): ranges
// nest, pair up and cost nothing visible from many threads; the entry points still check and run.
#include "core/nvtx.hpp"

#include <rungs/rungs.hpp>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace rungs {
namespace {

TEST(Nvtx, RangesPairWithoutATool) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      const char* names[] = {"warptile", "wgmma_ws", "cublas", "naive"};
      for (int i = 0; i < 10000; ++i) {
        const detail::NvtxRange outer("gemm_host", names[(i + t) & 3]);
        const std::string inner = names[i & 3];  // a name that is not a literal
        const detail::NvtxRange r("gemm", inner.c_str());
      }
    });
  for (std::thread& th : threads) th.join();
  SUCCEED();
}

// An empty product opens no range and needs no GPU: it still checks its arguments and its rung.
TEST(Nvtx, EmptyCallsStillCheck) {
  Options o;
  o.variant = "warptile";
  gemm(Trans::N, Trans::N, 0, 0, 0, 1.0f, static_cast<const float*>(nullptr), 1, static_cast<const float*>(nullptr), 1,
       0.0f, static_cast<float*>(nullptr), 1, o);
  o.variant = "no_such_rung";
  EXPECT_THROW(gemm(Trans::N, Trans::N, 0, 0, 0, 1.0f, static_cast<const float*>(nullptr), 1,
                    static_cast<const float*>(nullptr), 1, 0.0f, static_cast<float*>(nullptr), 1, o),
               Error);
}

}  // namespace
}  // namespace rungs
