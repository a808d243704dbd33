// What the NVTX range around every public entry point costs with no tool attached (the usual
// case): 10^6 push/pop pairs of the library's helper (detail::NvtxRange: with no tool, NVTX gives
// its domain a null handle and the helper stops at that test), beside nvtxRangePushA with a freshly
// built std::string (the plain way, which goes through NVTX's no-op stubs) and nvtxDomainRangePushEx
// with an unregistered name, and beside the host time of one rungs::gemm call that only checks its
// arguments and looks its rung up (an empty product: no CUDA call, so it runs without a GPU).
// Medians of 7 runs of 10^6 each, in ns per pair / per call. CPU only:
//   g++ -O2 -std=c++17 -Iinclude -Isrc -isystem /usr/local/cuda/include scripts/experiments/nvtx_cost/nvtx_cost.cpp
//     build/librungs.a -L/usr/local/cuda/lib64 -lcublas -lcublasLt -lcudart -ldl -lpthread -o build/nvtx_cost
//   build/nvtx_cost
// (Run it without NVTX_INJECTION64_PATH set, i.e. not under nsys or ncu: that is the case it measures.)
#include <rungs/rungs.hpp>

#include "core/nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kPairs = 1000000;
constexpr int kRuns = 7;

template <class F>
double median_ns_per(F&& body) {
  std::vector<double> ns;
  body(1000);  // warm: first-use registration, NVTX's one-time initialization
  for (int r = 0; r < kRuns; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body(kPairs);
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kPairs);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

volatile int g_sink = 0;

}  // namespace

int main() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr)
    std::printf("note: NVTX_INJECTION64_PATH is set: a tool is attached, this is not the no-tool cost\n");
  const char* rungs4[] = {"warptile", "wgmma_ws", "cublas", "naive"};

  const double empty = median_ns_per([](int n) {
    for (int i = 0; i < n; ++i) g_sink = g_sink + 1;
  });
  const double same = median_ns_per([](int n) {
    for (int i = 0; i < n; ++i) {
      const rungs::detail::NvtxRange r("gemm", "warptile");
      g_sink = g_sink + 1;
    }
  });
  const double rotating = median_ns_per([&](int n) {
    for (int i = 0; i < n; ++i) {
      const rungs::detail::NvtxRange r("gemm", rungs4[i & 3]);
      g_sink = g_sink + 1;
    }
  });
  const double plain = median_ns_per([](int n) {
    const std::string name = "warptile";
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA((std::string("rungs::gemm/") + name).c_str());
      g_sink = g_sink + 1;
      nvtxRangePop();
    }
  });
  const double ex = median_ns_per([](int n) {
    const nvtxDomainHandle_t d = nvtxDomainCreateA("probe");
    for (int i = 0; i < n; ++i) {
      nvtxEventAttributes_t a{};
      a.version = NVTX_VERSION;
      a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      a.messageType = NVTX_MESSAGE_TYPE_ASCII;
      a.message.ascii = "rungs::gemm/warptile";
      nvtxDomainRangePushEx(d, &a);
      g_sink = g_sink + 1;
      nvtxDomainRangePop(d);
    }
  });
  // rungs::gemm on an empty product with a named rung: argument checks, the math mode, the rung's
  // lookup and its entry point, then the early return (no range is opened for an empty product).
  const double gemm_checks = median_ns_per([](int n) {
    rungs::Options o;
    o.variant = "warptile";
    for (int i = 0; i < n; ++i)
      rungs::gemm(rungs::Trans::N, rungs::Trans::N, 0, 0, 0, 1.0f, static_cast<const float*>(nullptr), 1,
                  static_cast<const float*>(nullptr), 1, 0.0f, static_cast<float*>(nullptr), 1, o);
  });

  std::printf("NVTX cost with no tool attached, median of %d runs of %d, ns per push/pop pair:\n", kRuns, kPairs);
  std::printf("  loop alone                                          %6.2f ns\n", empty);
  std::printf("  detail::NvtxRange, same name each call              %6.2f ns\n", same);
  std::printf("  detail::NvtxRange, 4 names in turn                  %6.2f ns\n", rotating);
  std::printf("  nvtxRangePushA(std::string built per call) + Pop    %6.2f ns\n", plain);
  std::printf("  nvtxDomainRangePushEx(ascii literal) + Pop          %6.2f ns\n", ex);
  std::printf("rungs::gemm argument checking (empty product, variant named), per call: %6.2f ns\n", gemm_checks);
  return 0;
}
