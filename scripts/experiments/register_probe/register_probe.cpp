// Pageable memory for gemm_host without staging (docs/gemm_host.md: not kept; register + unregister run
// at 12-33 GB/s, ~0.5 ms for 12 MiB, as slow as staging): what page-locking
// the caller's own buffers for the duration of a call (cudaHostRegister, then cudaHostUnregister) costs,
// and what the flow then takes against today's staging through pinned slots. Build on the device after
// scripts/gpu.sh build (scripts/experiments/register_probe/register_probe.sh does both):
//   g++ -O2 -std=c++17 -Iinclude -Isrc -I/usr/local/cuda/include scripts/experiments/register_probe/register_probe.cpp
//     build-gpu/librungs.a -L/usr/local/cuda/lib64 -lcublas -lcudart -lpthread -o register_probe
// Prints:
//   1. register / unregister time (host clock, median of 15) by size, for malloc'd (touched) memory with
//      the default and the read-only flag, and for 2 MiB-aligned memory advised MADV_HUGEPAGE;
//   2. the H2D bandwidth from just-registered memory;
//   3. gemm_host at 1024^3 and 4096^3 fp32: pageable as today (staged), pageable registered for the call,
//      pinned (cudaMallocHost), interleaved rounds, medians; each result checked against the staged one.
#include <rungs/rungs.hpp>

#include "../ck.hpp"

#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace rungs;
using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

static void* huge_alloc(size_t bytes) {
  const size_t align = size_t{2} << 20;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

int main() {
  CK(cudaFree(nullptr));
  int dev = 0, ro = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, dev));
  std::printf("read-only registration supported: %d\n", ro);
  if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    char line[256] = {};
    if (std::fgets(line, sizeof line, f)) std::printf("transparent_hugepage: %s", line);
    std::fclose(f);
  }

  // 1. register / unregister cost
  std::printf("\n1. cudaHostRegister + cudaHostUnregister, host clock, median of 15 (ms)\n");
  std::printf("%8s  %-26s %10s %10s %10s\n", "MiB", "memory, flag", "register", "unregister", "GB/s reg");
  for (size_t mib : {1, 4, 8, 16, 64, 256}) {
    const size_t bytes = mib << 20;
    for (int kind = 0; kind < 3; ++kind) {
      if (kind == 1 && !ro) continue;
      void* p = kind == 2 ? huge_alloc(bytes) : std::malloc(bytes);
      std::memset(p, 1, bytes);
      const unsigned flags = kind == 1 ? cudaHostRegisterReadOnly : cudaHostRegisterDefault;
      std::vector<double> r, u;
      for (int i = 0; i < 16; ++i) {
        auto t0 = Clock::now();
        CK(cudaHostRegister(p, bytes, flags));
        const double tr = ms(t0);
        t0 = Clock::now();
        CK(cudaHostUnregister(p));
        const double tu = ms(t0);
        if (i > 0) r.push_back(tr), u.push_back(tu);
      }
      const char* names[] = {"malloc, default", "malloc, read-only", "2 MiB aligned+THP, default"};
      std::printf("%8zu  %-26s %10.4f %10.4f %10.1f\n", mib, names[kind], median(r), median(u),
                  bytes / (median(r) + median(u)) / 1e6);
      std::free(p);
    }
  }

  // 2. H2D from just-registered memory
  {
    const size_t bytes = size_t{64} << 20;
    void* p = std::malloc(bytes);
    std::memset(p, 1, bytes);
    void* d = nullptr;
    CK(cudaMalloc(&d, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int i = 0; i < 6; ++i) {
      CK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
      CK(cudaEventRecord(e0));
      CK(cudaMemcpyAsync(d, p, bytes, cudaMemcpyHostToDevice));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float f = 0;
      CK(cudaEventElapsedTime(&f, e0, e1));
      t.push_back(f);
      CK(cudaHostUnregister(p));
    }
    std::printf("\n2. H2D of 64 MiB from just-registered malloc'd memory: %.1f GB/s (median of 6)\n",
                bytes / median(t) / 1e6);
    CK(cudaFree(d));
    std::free(p);
  }

  // 3. the flow
  std::printf("\n3. gemm_host fp32 nn, host clock, interleaved rounds, medians (ms)\n");
  for (int64_t n : {1024, 4096}) {
    const size_t elems = static_cast<size_t>(n * n), bytes = elems * 4;
    float *A = static_cast<float*>(std::malloc(bytes)), *B = static_cast<float*>(std::malloc(bytes));
    float *C = static_cast<float*>(std::malloc(bytes)), *Cref = static_cast<float*>(std::malloc(bytes));
    float *pA, *pB, *pC;
    CK(cudaMallocHost(reinterpret_cast<void**>(&pA), bytes));
    CK(cudaMallocHost(reinterpret_cast<void**>(&pB), bytes));
    CK(cudaMallocHost(reinterpret_cast<void**>(&pC), bytes));
    srand(7);
    for (size_t i = 0; i < elems; ++i) A[i] = pA[i] = rand() / float(RAND_MAX) - 0.5f, B[i] = pB[i] = rand() / float(RAND_MAX) - 0.5f;
    const unsigned in_flag = ro ? cudaHostRegisterReadOnly : cudaHostRegisterDefault;
    const int rounds = n == 1024 ? 33 : 9;
    std::vector<double> staged, reg, reg_only, pinned;
    double worst = 0;
    for (int r = 0; r < rounds; ++r) {
      std::memset(C, 0, bytes);
      auto t0 = Clock::now();
      gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
      const double ts = ms(t0);
      std::memcpy(Cref, C, bytes);
      std::memset(C, 0, bytes);
      t0 = Clock::now();
      CK(cudaHostRegister(A, bytes, in_flag));
      CK(cudaHostRegister(B, bytes, in_flag));
      CK(cudaHostRegister(C, bytes, cudaHostRegisterDefault));
      const double tr0 = ms(t0);
      gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
      CK(cudaHostUnregister(A));
      CK(cudaHostUnregister(B));
      CK(cudaHostUnregister(C));
      const double tr = ms(t0);
      for (size_t i = 0; i < elems; ++i) worst = std::max(worst, static_cast<double>(std::fabs(C[i] - Cref[i])));
      std::memset(pC, 0, bytes);
      t0 = Clock::now();
      gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, pA, n, pB, n, 0.0f, pC, n);
      const double tp = ms(t0);
      if (r >= 3) staged.push_back(ts), reg.push_back(tr), reg_only.push_back(tr0), pinned.push_back(tp);
    }
    std::printf("%5lld^3: staged %.4f  registered per call %.4f (of which registering 3 buffers %.4f)  pinned %.4f"
                "  (medians of %zu; largest |C_registered - C_staged| %.3g)\n",
                static_cast<long long>(n), median(staged), median(reg), median(reg_only), median(pinned), staged.size(),
                worst);
    std::free(A), std::free(B), std::free(C), std::free(Cref);
    CK(cudaFreeHost(pA));
    CK(cudaFreeHost(pB));
    CK(cudaFreeHost(pC));
  }
  return 0;
}
