// Where a block of rung 17 (wgmma_tma_store, the ws template) spends its time (docs/gemm_tc.md, "What
// keeps rung 17 from cuBLAS": at 4096^3 ~18 thousand cycles beside 262 thousand of MMAs, ~3.2 at each
// tile change; at 2048^3 the start and the kernel-end barrier): the template compiled
// here with RUNGS_WS_TIMELINE stamps clock64 at its phases (slots below), per block, on the last
// of several launches (L2 flushed before each). Prints the medians over blocks, in SM cycles from
// the block's start, and block 0's k steps.
// Slots: 0 start, 1 start (globaltimer, ns), 2 barriers ready (cluster_sync), 3 producer start,
// 4 + i k tile i's loads issued, 36 consumer 0 start, 37 + i k tile i's data seen by consumer 0,
// 69 + i consumer 0 past wait<1> in k step i, 101 / 106 consumer 0 / 1 MMAs done, 102 / 107 C's
// stores issued, 103 consumer 0's stores done, 104 exit, 105 exit (globaltimer); 108 the tile walk
// computed, 109 the first tile located, 110 its first expect_tx, 111 the producer's tail done, 112 the
// barriers initialised (before the cluster barrier); per piece (tile) p < 6 of consumer 0 (the 4096^3
// tile changes): 116 + 5p piece started, 117 + 5p its first data seen, 118 + 5p its
// MMAs done, 119 + 5p its C's stores issued, 120 + 5p the producer's first k tile of it issued.
// Usage (after scripts/gpu.sh build or build_gpu rungs): scripts/experiments/ws_timeline.sh [sizes], or
// build-experiments/ws_timeline N [17|21]: size and rung (21: rung 21's epilogue). Compiled against the
// stamped kernel of commit d1f851d (ws_timeline.sh fetches it; the library's carries no stamps). Switches measured with it and since removed from the
// template (docs/gemm_tc.md's "Measured and not kept"): odd clusters started late (e999791), 3 stages
// and a 32 KB C buffer (7378874).
#include "gemm/wgmma_ws.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace rungs::sgemm;

static long long median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  const std::string rung = argc > 2 ? argv[2] : "17";  // 17 (default) or 21 (epilogue under the next tile)
  const size_t elems = static_cast<size_t>(n) * n;
  std::vector<__nv_bfloat16> h(elems);
  for (size_t i = 0; i < elems; ++i) h[i] = __float2bfloat16(static_cast<float>((i * 2654435761u) % 1000) / 1000.0f - 0.5f);
  __nv_bfloat16 *A, *B, *C;
  char* flush;
  const size_t flush_bytes = 256u << 20;
  cudaMalloc(&A, elems * 2), cudaMalloc(&B, elems * 2), cudaMalloc(&C, elems * 2), cudaMalloc(&flush, flush_bytes);
  cudaMemcpy(A, h.data(), elems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B, h.data(), elems * 2, cudaMemcpyHostToDevice);
  cudaStream_t st;
  cudaStreamCreate(&st);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  ArgsBF a{rungs::Trans::N, rungs::Trans::N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n, st};
  std::vector<float> ms;
  for (int r = 0; r < 8; ++r) {
    cudaMemsetAsync(flush, r, flush_bytes, st);
    cudaEventRecord(e0, st);
    if (rung == "21") ws_kernel::run_any<true, false, false, true>(a, "wgmma_overlap (timeline)");
    else ws_kernel::run_any<true>(a, "wgmma_tma_store (timeline)");
    cudaEventRecord(e1, st);
    cudaStreamSynchronize(st);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::vector<long long> tl(ws_kernel::TL_BLOCKS * ws_kernel::TL_SLOTS, 0);
  cudaMemcpyFromSymbol(tl.data(), ws_kernel::g_timeline, tl.size() * sizeof(long long));
  std::sort(ms.begin(), ms.end());
  std::printf("%d^3 bf16 nn, rung %s with stamps: event time median %.4f ms (min %.4f)\n", n, rung.c_str(), ms[ms.size() / 2],
              ms[0]);
  int blocks = 0;
  long long gt0 = 0, gt1 = 0;
  for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b) {
    const long long* s = &tl[b * ws_kernel::TL_SLOTS];
    if (s[1] == 0) continue;
    if (!blocks || s[1] < gt0) gt0 = s[1];
    gt1 = std::max(gt1, s[105]);
    ++blocks;
  }
  std::printf("%d blocks; first start to last exit %.2f us (globaltimer)\n", blocks, (gt1 - gt0) / 1e3);
  auto rel = [&](int slot) {  // median over blocks of slot - start, cycles
    std::vector<long long> v;
    for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b) {
      const long long* s = &tl[b * ws_kernel::TL_SLOTS];
      if (s[1] != 0 && s[slot] != 0) v.push_back(s[slot] - s[0]);
    }
    return median(v);
  };
  auto start_skew = [&] {
    std::vector<long long> v;
    for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b)
      if (tl[b * ws_kernel::TL_SLOTS + 1]) v.push_back(tl[b * ws_kernel::TL_SLOTS + 1] - gt0);
    std::sort(v.begin(), v.end());
    return v;
  }();
  std::printf("block starts after the first (ns): median %lld, max %lld\n", start_skew[start_skew.size() / 2],
              start_skew.back());
  std::printf("median cycles from the block's start:\n");
  const struct { int slot; const char* what; } rows[] = {
      {112, "barriers initialised"}, {2, "barriers ready (cluster_sync)"},
      {108, "tile walk computed (tid 0)"}, {3, "producer start (after setmaxnreg)"},
      {109, "first tile located"}, {110, "first expect_tx done"}, {4, "k tile 0's loads issued"},
      {7, "k tile 3's loads issued"}, {8, "k tile 4's loads issued (slot 0 reused)"}, {36, "consumer 0 start"},
      {37, "k tile 0's data seen"}, {38, "k tile 1's data seen"}, {41, "k tile 4's data seen"},
      {52, "k tile 15's data seen"}, {68, "k tile 31's data seen"}, {101, "consumer 0 MMAs done"},
      {106, "consumer 1 MMAs done"}, {102, "consumer 0 C stores issued"}, {107, "consumer 1 C stores issued"},
      {103, "consumer 0 stores done"}, {111, "producer's tail done"}, {104, "exit"}};
  for (const auto& r : rows) std::printf("  %-42s %8lld\n", r.what, rel(r.slot));
  std::printf("block 0, k step i: loads issued / data seen / past wait<1> (cycles from start)\n");
  const long long* s = &tl[0];
  for (int i = 0; i < 32; ++i)
    std::printf("  %2d %8lld %8lld %8lld\n", i, s[4 + i] ? s[4 + i] - s[0] : -1, s[37 + i] ? s[37 + i] - s[0] : -1,
                s[69 + i] ? s[69 + i] - s[0] : -1);
  // Per k step over all blocks: median gap between consecutive data arrivals, and data-to-issue lag.
  std::vector<long long> gaps, waits;
  for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b) {
    const long long* t = &tl[b * ws_kernel::TL_SLOTS];
    if (!t[1]) continue;
    for (int i = 4; i < 31; ++i) gaps.push_back(t[37 + i + 1] - t[37 + i]);
    for (int i = 4; i < 32; ++i) waits.push_back(t[37 + i] - t[4 + i]);
  }
  std::printf("k steps 4..31: median gap between data arrivals %lld cycles; loads issued to data seen %lld\n",
              median(gaps), median(waits));
  // Per piece (tile) of the blocks with the most pieces (where a 4-tile block's
  // ~16 thousand cycles beside its MMAs go at 4096^3): medians over those blocks, cycles from start.
  int most = 0;
  auto pieces_of = [&](const long long* t) {
    int c = 0;
    while (c < 6 && t[116 + 5 * c]) ++c;
    return c;
  };
  for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b)
    if (tl[b * ws_kernel::TL_SLOTS + 1]) most = std::max(most, pieces_of(&tl[b * ws_kernel::TL_SLOTS]));
  std::printf("blocks with %d pieces (k tiles per piece %d, MMAs alone %d cycles a piece at 1024 per k tile):\n", most,
              (n + 63) / 64, (n + 63) / 64 * 1024);
  std::printf("  piece: consumer 0 starts / first data / MMAs done / C issued; producer's first k tile issued;"
              " MMA span; C's epilogue (MMAs done to C issued); gap to next first data\n");
  for (int p = 0; p < most; ++p) {
    std::vector<long long> v[5], span, epi, gap;
    for (int b = 0; b < ws_kernel::TL_BLOCKS; ++b) {
      const long long* t = &tl[b * ws_kernel::TL_SLOTS];
      if (!t[1] || pieces_of(t) != most) continue;
      for (int j = 0; j < 5; ++j) v[j].push_back(t[116 + 5 * p + j] - t[0]);
      span.push_back(t[118 + 5 * p] - t[117 + 5 * p]);
      epi.push_back(t[119 + 5 * p] - t[118 + 5 * p]);
      if (p + 1 < most) gap.push_back(t[117 + 5 * (p + 1)] - t[118 + 5 * p]);
    }
    std::printf("  %d: %8lld %8lld %8lld %8lld; %8lld; %8lld; %8lld; %8lld\n", p, median(v[0]), median(v[1]),
                median(v[2]), median(v[3]), median(v[4]), median(span), median(epi), gap.empty() ? -1 : median(gap));
  }
  return 0;
}
