// gemm_host probe (docs/gemm_host.md), one mode per run. No argument: 2D pinned copy bandwidth by
// row width (behind the rule that no copy row is narrower than 512 elements: 52.5-54 GB/s from 2 KiB
// rows, 35.7 at 512 B), the host cost of the calls a step issues (~20 us a step: at most T / 20 us
// steps) and the flow's breakdown per plan; `flow`: the breakdown only. `between`, `between_pageable`:
// what the bench does between timed calls. `threads`, `streaming`, `unpack`, `async`: a staging-thread
// count or a Tuning switch, and `pinned_plans`, `pageable_plans`: plans, alternated call by call in
// one process (how changes of a few percent are told apart).
// It sets Tuning's experiment hooks (forced plans), which every build of the library has.
// Build and run on the device: scripts/experiments/host_probe/host_ab.sh MODE... (with the GemmHost tests), or
//   source scripts/experiments/lib.sh && build_exp rungs && build_host_probe && build-exp/host_probe MODE
#include <rungs/rungs.hpp>

#include "host/gemm_host.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace rungs;
using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const bool only_flow = argc > 1 && std::string(argv[1]) == "flow";
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (argc > 1 && std::string(argv[1]) == "between") {
    // What the bench does between its timed calls, one thing at a time (the bench measured 1024^3
    // pinned ~31-34 us slower than back-to-back calls; docs/gemm_host.md): nothing; C reset from a pinned copy
    // (the bench's reset_c); a 4 MB memset of another host buffer; the host idle for 0.3 ms; the naive
    // flow (copies in, cuBLAS, copy out on one stream). 41 calls each, interleaved rounds, medians.
    const int64_t n = 1024;
    const size_t bytes = n * n * 4;
    float *A, *B, *C, *C0, *X, *dA, *dB, *dC;
    cudaMallocHost((void**)&A, bytes), cudaMallocHost((void**)&B, bytes), cudaMallocHost((void**)&C, bytes);
    cudaMallocHost((void**)&C0, bytes), cudaMallocHost((void**)&X, bytes);
    cudaMalloc((void**)&dA, bytes), cudaMalloc((void**)&dB, bytes), cudaMalloc((void**)&dC, bytes);
    for (int64_t i = 0; i < n * n; ++i) A[i] = 0.5f, B[i] = 0.25f, C0[i] = std::nanf("");
    Options o;
    o.stream = s;
    auto naive = [&] {
      cudaMemcpyAsync(dA, A, bytes, cudaMemcpyHostToDevice, s);
      cudaMemcpyAsync(dB, B, bytes, cudaMemcpyHostToDevice, s);
      gemm(Trans::N, Trans::N, n, n, n, 1.0f, dA, n, dB, n, 0.0f, dC, n, o);
      cudaMemcpyAsync(C, dC, bytes, cudaMemcpyDeviceToHost, s);
      cudaStreamSynchronize(s);
    };
    const char* names[] = {"nothing", "C reset (memcpy 4 MB into C)", "memset 4 MB elsewhere", "host idle 0.3 ms",
                           "naive flow", "naive flow + C reset (the bench)"};
    std::vector<double> t[6];
    for (int r = 0; r < 44; ++r)
      for (int v = 0; v < 6; ++v) {
        if (v == 1 || v == 5) std::memcpy(C, C0, bytes);
        if (v == 2) std::memset(X, r, bytes);
        if (v == 3) {
          const auto t0 = Clock::now();
          while (ms(t0) < 0.3) {
          }
        }
        if (v == 4 || v == 5) naive();
        if (v == 5) std::memcpy(C, C0, bytes);
        const auto t0 = Clock::now();
        gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        if (r >= 3) t[v].push_back(ms(t0));
      }
    std::printf("1024^3 pinned gemm_host (auto plan), median of 41 calls, by what ran before each call:\n");
    for (int v = 0; v < 6; ++v) {
      std::sort(t[v].begin(), t[v].end());
      std::printf("  %-36s median %.4f ms  (min %.4f, p90 %.4f)\n", names[v], t[v][t[v].size() / 2], t[v][0],
                  t[v][t[v].size() * 9 / 10]);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "between_pageable") {
    // The same for pageable memory (on the H100 the bench measured 4096^3 and 8192^3 pageable flows
    // 1.5-2.5x slower than this probe's back-to-back calls): nothing; C reset
    // (a memcpy into C, as the bench's reset_c); the naive flow with pageable copies (the driver's
    // staging); both (what the bench does). Interleaved rounds, medians.
    for (int64_t n : {int64_t{1024}, int64_t{4096}, int64_t{8192}}) {
      const size_t elems = size_t(n) * n, bytes = elems * 4;
      std::vector<float> A(elems, 0.5f), B(elems, 0.25f), C(elems, 0.0f), C0(elems, std::nanf(""));
      float *dA, *dB, *dC;
      cudaMalloc((void**)&dA, bytes), cudaMalloc((void**)&dB, bytes), cudaMalloc((void**)&dC, bytes);
      Options o;
      o.stream = s;
      auto naive = [&] {
        cudaMemcpyAsync(dA, A.data(), bytes, cudaMemcpyHostToDevice, s);
        cudaMemcpyAsync(dB, B.data(), bytes, cudaMemcpyHostToDevice, s);
        gemm(Trans::N, Trans::N, n, n, n, 1.0f, dA, n, dB, n, 0.0f, dC, n, o);
        cudaMemcpyAsync(C.data(), dC, bytes, cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
      };
      const char* names[] = {"nothing", "C reset (memcpy into C)", "naive pageable flow",
                             "naive flow + C reset (the bench)"};
      const int rounds = n == 1024 ? 24 : n == 4096 ? 10 : 5;
      std::vector<double> t[4], pack[4], unpack[4];
      for (int r = 0; r < rounds + 1; ++r)
        for (int v = 0; v < 4; ++v) {
          if (v >= 2) naive();
          if (v == 1 || v == 3) std::memcpy(C.data(), C0.data(), bytes);
          const auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
          if (r >= 1) {
            t[v].push_back(ms(t0));
            pack[v].push_back(host::last_call().pack_ms), unpack[v].push_back(host::last_call().unpack_ms);
          }
        }
      std::printf("%lld^3 pageable gemm_host (auto plan), median of %d calls, by what ran before each call:\n",
                  (long long)n, rounds);
      for (int v = 0; v < 4; ++v) {
        const double mn = *std::min_element(t[v].begin(), t[v].end());
        std::printf("  %-34s median %.3f ms (min %.3f), pack %.3f, unpack %.3f\n", names[v], median(t[v]), mn,
                    median(pack[v]), median(unpack[v]));
      }
      cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "threads") {
    // Pageable flows by staging threads (host_membw.cpp measured memcpy beside both DMA engines at
    // 45.6 / 60.5 / 60.7 GB/s with 8 / 12 / 16 threads on the H100's host; a bench process per count
    // is too noisy to tell them apart). Here the counts alternate call by call in one process: after
    // each change of count an untimed call (it starts the pool's threads), then a timed one. Medians
    // of the flow and of its pack and unpack time: 8 / the library's choice / 16 threads.
    for (int64_t n : {1024, 4096}) {
      std::vector<float> A(n * n, 0.5f), B(n * n, 0.25f), C(n * n, 0.0f);
      const int rounds = n == 1024 ? 41 : 15, counts[] = {8, 0, 16};  // 0: the library's choice
      std::vector<double> t[3], pack[3], unpack[3], setup[3], issue[3], wait[3], gemm_calls[3], copy_calls[3];
      int used[3] = {0, 0, 0};
      for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < 3; ++i) {
          host::Tuning tu;
          tu.staging_threads = counts[i];
          host::set_tuning(tu);
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
          const auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
          t[i].push_back(ms(t0));
          const host::CallInfo ci = host::last_call();
          pack[i].push_back(ci.pack_ms), unpack[i].push_back(ci.unpack_ms), setup[i].push_back(ci.setup_ms);
          issue[i].push_back(ci.issue_ms), wait[i].push_back(ci.wait_ms), gemm_calls[i].push_back(ci.gemm_calls_ms);
          copy_calls[i].push_back(ci.copy_calls_ms);
          used[i] = host::last_call().host_threads;
        }
      for (int i = 0; i < 3; ++i)
        std::printf("%4lld^3 pageable, %2d staging threads%s: flow median %.3f ms (min %.3f), pack %.3f, unpack %.3f\n",
                    (long long)n, used[i], counts[i] == 0 ? " (the library's)" : "", median(t[i]),
                    *std::min_element(t[i].begin(), t[i].end()), median(pack[i]), median(unpack[i]));
      for (int i = 0; i < 3; ++i)
        std::printf("    the same, medians: setup %.3f, issue %.3f (gemm calls %.3f, copy calls %.3f), wait %.3f ms\n",
                    median(setup[i]), median(issue[i]), median(gemm_calls[i]), median(copy_calls[i]), median(wait[i]));
    }
    host::set_tuning(host::Tuning{});
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "pageable_plans") {
    // Pageable flows start their products only once the first k-major chunk is staged, at the host's
    // staging rate (~25-30 GB/s, half of a pinned copy's): smaller first chunks (k4, k8) against the
    // library's plan, alternated call by call in one process; medians.
    for (int64_t n : {int64_t{4096}, int64_t{8192}}) {
      std::vector<float> A(n * n, 0.5f), B(n * n, 0.25f), C(n * n, 0.0f);
      const int panels = n == 4096 ? 8 : 16;
      // nullopt: the library's own choice (not Plan{}, whose row_panels is 1: the unpipelined 1x1 plan).
      const std::vector<std::optional<host::Plan>> plans = {std::nullopt,
                                             host::Plan{panels, 1, 2, 0.5}, host::Plan{panels, 1, 4, 0.5},
                                             host::Plan{panels, 1, 8, 0.5}, host::Plan{panels, 1, 4, 0.75},
                                             host::Plan{panels, 1, 8, 0.75}, host::Plan{panels, 1, 2, 0.5, static_cast<int>(n / 2048)}};
      const int rounds = n == 4096 ? 9 : 5;
      std::vector<std::vector<double>> t(plans.size());
      std::vector<host::Plan> used(plans.size());  // the plan each row ran, as the call reports it
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < plans.size(); ++i) {
          host::Tuning tu;
          tu.plan = plans[i];
          host::set_tuning(tu);
          const auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
          t[i].push_back(ms(t0));
          used[i] = host::last_call().plan;
        }
      for (size_t i = 0; i < plans.size(); ++i)
        std::printf("%4lld^3 pageable, plan %2dx1 k%d/%.2f r%d%s: flow median %.3f ms (min %.3f)\n", (long long)n,
                    used[i].row_panels, used[i].kmajor_chunks, used[i].kmajor_fraction, used[i].kmajor_row_panels,
                    plans[i] ? "" : " (library)", median(t[i]), *std::min_element(t[i].begin(), t[i].end()));
    }
    host::set_tuning(host::Tuning{});
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "pinned_plans") {
    // Pinned flows at 4096^3 and 8192^3 by plan, alternated call by call in one process: phase 1's
    // op(A) in taller pieces (r2 / r4 / r1) against one piece per row panel (r0, the library's); a
    // traced call had put r2 at 3.77 ms against 4.04, which one bench median per plan and process could
    // not tell apart. Every call here is eager (the plan changes from call to call, so no graph is
    // replayed); medians. docs/gemm_host.md: level, not kept.
    for (int64_t n : {int64_t{4096}, int64_t{8192}}) {
      float *A, *B, *C;
      const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
      cudaMallocHost(reinterpret_cast<void**>(&A), bytes), cudaMallocHost(reinterpret_cast<void**>(&B), bytes);
      cudaMallocHost(reinterpret_cast<void**>(&C), bytes);
      std::fill(A, A + n * n, 0.5f), std::fill(B, B + n * n, 0.25f), std::fill(C, C + n * n, 0.0f);
      const int p = n == 4096 ? 8 : 16;
      // nullopt: the library's own choice (not Plan{}, whose row_panels is 1: the unpipelined flow).
      const std::vector<std::optional<host::Plan>> plans = {std::nullopt,
                                             host::Plan{p, 1, 2, 0.5, 0}, host::Plan{p, 1, 2, 0.5, 2},
                                             host::Plan{p, 1, 2, 0.5, 4}, host::Plan{p, 1, 2, 0.5, 1},
                                             host::Plan{p, 1, 2, 0.375, 0}, host::Plan{p, 1, 2, 0.375, static_cast<int>(n / 2048)}};
      const int rounds = n == 4096 ? 31 : 11;
      std::vector<std::vector<double>> t(plans.size());
      std::vector<host::Plan> used(plans.size());  // the plan each row ran, as the call reports it
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < plans.size(); ++i) {
          host::Tuning tu;
          tu.plan = plans[i];
          host::set_tuning(tu);
          const auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
          t[i].push_back(ms(t0));
          used[i] = host::last_call().plan;
        }
      for (size_t i = 0; i < plans.size(); ++i)
        std::printf("%4lld^3 pinned, plan %2dx1 k%d/%.3f r%d%s: flow median %.3f ms (min %.3f)\n", (long long)n,
                    used[i].row_panels, used[i].kmajor_chunks, used[i].kmajor_fraction, used[i].kmajor_row_panels,
                    plans[i] ? "" : " (library)", median(t[i]), *std::min_element(t[i].begin(), t[i].end()));
      cudaFreeHost(A), cudaFreeHost(B), cudaFreeHost(C);
    }
    host::set_tuning(host::Tuning{});
    return 0;
  }
  const std::string knob = argc > 1 ? argv[1] : "";
  if (knob == "streaming" || knob == "unpack" || knob == "async") {
    // One Tuning switch off and on, alternated call by call in one process, pageable flows; medians.
    // streaming: the slots packed by memcpy or by streaming stores (with memcpy a traced 1024^3 call's
    // staged H2D copies ran at 14-21 GB/s, the slots' lines dirty in the host's caches).
    // unpack: C's staged blocks unpacked into the caller's C by memcpy or by streaming stores.
    // async: C's blocks unpacked by all the staging threads in turn with packing, or in the background
    // by a quarter of them while the others pack.
    for (int64_t n : {int64_t{1024}, int64_t{4096}, int64_t{8192}}) {
      if (n == 8192 && knob == "streaming") continue;
      std::vector<float> A(n * n, 0.5f), B(n * n, 0.25f), C(n * n, 0.0f);
      const int rounds = n == 1024 ? 41 : n == 4096 ? 15 : 7;
      std::vector<double> t[2], pack[2], unp[2];
      for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < 2; ++i) {
          host::Tuning tu;
          if (knob == "streaming") tu.streaming_pack = i == 1;
          if (knob == "unpack") tu.streaming_unpack = i == 1;
          if (knob == "async") tu.unpack_threads = i == 1 ? -1 : 0;
          host::set_tuning(tu);
          const auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
          t[i].push_back(ms(t0));
          pack[i].push_back(host::last_call().pack_ms);
          unp[i].push_back(host::last_call().unpack_ms);
        }
      for (int i = 0; i < 2; ++i)
        std::printf("%4lld^3 pageable, %-9s %-3s: flow median %.3f ms (min %.3f), pack %.3f, unpack %.3f\n", (long long)n,
                    knob.c_str(), i ? "on" : "off", median(t[i]), *std::min_element(t[i].begin(), t[i].end()),
                    median(pack[i]), median(unp[i]));
    }
    host::set_tuning(host::Tuning{});
    return 0;
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const size_t total = 8 << 20;
  char *h, *d;
  cudaMallocHost((void**)&h, total * 4);
  cudaMalloc((void**)&d, total * 4);
  std::memset(h, 1, total * 4);
  if (!only_flow) {
    std::printf("2D pinned copies (2048 rows, at most 8 MiB), host pitch 16 KiB, device tight: GB/s H2D / D2H\n");
    for (size_t width : {256, 512, 1024, 2048, 4096, 8192, 16384}) {
      const size_t rows = std::min<size_t>(total / width, 2048);  // h holds 2048 rows of 16 KiB
      double gbs[2];
      for (int dir = 0; dir < 2; ++dir) {
        std::vector<double> t;
        for (int i = 0; i < 11; ++i) {
          cudaEventRecord(e0, s);
          if (dir == 0) cudaMemcpy2DAsync(d, width, h, 16384, width, rows, cudaMemcpyHostToDevice, s);
          else cudaMemcpy2DAsync(h, 16384, d, width, width, rows, cudaMemcpyDeviceToHost, s);
          cudaEventRecord(e1, s);
          cudaEventSynchronize(e1);
          float f;
          cudaEventElapsedTime(&f, e0, e1);
          t.push_back(f);
        }
        gbs[dir] = rows * width / (median(t) * 1e6);
      }
      std::printf("  width %6zu B: %6.1f / %6.1f\n", width, gbs[0], gbs[1]);
    }
    // Host cost of issuing: 200 x each call, no waiting.
    float* fd;
    cudaMalloc((void**)&fd, 1024 * 1024 * 4 * 3);
    Options o;
    o.stream = s;
    auto cost = [&](const char* what, auto f) {
      cudaStreamSynchronize(s);
      auto t0 = Clock::now();
      for (int i = 0; i < 200; ++i) f();
      const double per = ms(t0) * 1e3 / 200;
      cudaStreamSynchronize(s);
      std::printf("  %-44s %6.2f us per call\n", what, per);
    };
    std::printf("host cost of issuing:\n");
    cost("rungs::gemm 256x1024x256 (auto=cublas)", [&] {
      gemm(Trans::N, Trans::N, 256, 1024, 256, 1.0f, fd, 256, fd + 1048576, 1024, 0.0f, fd + 2097152, 1024, o);
    });
    cost("cudaMemcpy2DAsync H2D 64 rows x 1 KiB", [&] { cudaMemcpy2DAsync(d, 1024, h, 16384, 1024, 64, cudaMemcpyHostToDevice, s); });
    cost("cudaMemcpyAsync H2D 64 KiB", [&] { cudaMemcpyAsync(d, h, 65536, cudaMemcpyHostToDevice, s); });
    cost("cudaEventRecord + cudaStreamWaitEvent", [&] { cudaEventRecord(e0, s); cudaStreamWaitEvent(s, e0, 0); });
    cost("cudaEventQuery", [&] { (void)cudaEventQuery(e0); });
    cost("cudaMemGetInfo", [&] { size_t a, b; cudaMemGetInfo(&a, &b); });
    cost("cudaPointerGetAttributes", [&] { cudaPointerAttributes at; cudaPointerGetAttributes(&at, h); });
  }
  // gemm_host breakdown per plan.
  for (int64_t n : {1024, 4096}) {
    std::vector<float> pa(n * n, 0.5f), pb(n * n, 0.25f), pc(n * n);
    float *A, *B, *C;
    cudaMallocHost((void**)&A, n * n * 4);
    cudaMallocHost((void**)&B, n * n * 4);
    cudaMallocHost((void**)&C, n * n * 4);
    std::memcpy(A, pa.data(), n * n * 4);
    std::memcpy(B, pb.data(), n * n * 4);
    const char* plans[] = {"auto", "4x2", "4x1", "8x2", "16x8:k2/0.5", "16x4:k2/0.5", "16x8:k1/0.5", "16x1:k2/0.5"};
    for (int pinned = 1; pinned >= 0; --pinned)
      for (const char* p : plans) {
        host::Tuning tn;
        host::Plan pl;
        if (std::string(p) != "auto") {
          if (std::sscanf(p, "%dx%d:k%d/%lf", &pl.row_panels, &pl.col_panels, &pl.kmajor_chunks, &pl.kmajor_fraction) < 2)
            continue;
          tn.plan = pl;
        }
        host::set_tuning(tn);
        const float* a = pinned ? A : pa.data();
        const float* b = pinned ? B : pb.data();
        float* c = pinned ? C : pc.data();
        std::vector<double> t;
        for (int i = 0; i < 12; ++i) {
          auto t0 = Clock::now();
          gemm_host(Trans::N, Trans::N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
          t.push_back(ms(t0));
        }
        const host::CallInfo ci = host::last_call();
        std::printf("%5lld %-8s %-13s median %8.3f ms | last%s: setup %.3f issue %.3f (gemm %.3f copy %.3f pack %.3f "
                    "unpack %.3f) wait %.3f total %.3f steps %lld\n",
                    (long long)n, pinned ? "pinned" : "pageable", p, median(t), ci.graph ? " (graph)" : "", ci.setup_ms, ci.issue_ms,
                    ci.gemm_calls_ms, ci.copy_calls_ms, ci.pack_ms, ci.unpack_ms, ci.wait_ms, ci.total_ms,
                    (long long)ci.steps);
      }
    cudaFreeHost(A);
    cudaFreeHost(B);
    cudaFreeHost(C);
  }
  return 0;
}
