// What the host-to-host flow of gemm_host can reach at 1024^3 fp32 (8 MiB in, 4 MiB out), measured
// apart from any GEMM (docs/gemm_host.md: any flow spans >= ~0.20 ms at 1024^3; the copy engines stay,
// since SM loads/stores over PCIe reach 48-49 GB/s, not 53). Standalone; run by
// scripts/experiments/pcie_probe/pcie_probe.sh. Prints one line per measurement.
//   1. copy engines: one 8 MiB H2D copy; 4 MiB + P pieces back to back on one stream, each followed by
//      a stream write of a flag that a spinning kernel time-stamps (when each piece landed).
//   2. SMs over PCIe: a kernel reading mapped pinned host memory into device memory, and one writing
//      device memory into mapped pinned host memory; both at once; a write kernel beside an H2D copy.
//   3. host overheads: launch + synchronize of an empty kernel (default and spin scheduling).
//   4. flow skeletons (no multiplication), host clock: (a) copies + flags, one persistent kernel that
//      writes each C panel to host memory as its A panel lands; (b) one kernel that reads B and A from
//      host memory itself and writes C panels back.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../ck.hpp"


using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
static WriteValue32 g_write32 = nullptr;

static void write_flag(cudaStream_t s, unsigned* dflag, unsigned v) {
  CUresult r = g_write32(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(dflag), v, 0);
  if (r != CUDA_SUCCESS) {
    std::printf("cuStreamWriteValue32 failed: %d\n", static_cast<int>(r));
    std::exit(1);
  }
}

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ int g_timed_out = 0;
// Waits until *p == want, or gives up after 0.5 s (and says so in g_timed_out).
__device__ void wait_eq(const unsigned* p, unsigned want) {
  const unsigned long long t0 = now_ns();
  while (ld_acquire(p) != want) {
    if (now_ns() - t0 > 500000000ull) {
      atomicExch(&g_timed_out, 1);
      return;
    }
  }
}

// Copies n4 float4 from src to dst with every thread keeping 4 loads in flight.
__device__ void copy_span(const float4* __restrict__ src, float4* __restrict__ dst, size_t n4, size_t tid,
                          size_t nth) {
  size_t i = tid;
  for (; i + 3 * nth < n4; i += 4 * nth) {
    float4 a = src[i], b = src[i + nth], c = src[i + 2 * nth], d = src[i + 3 * nth];
    dst[i] = a;
    dst[i + nth] = b;
    dst[i + 2 * nth] = c;
    dst[i + 3 * nth] = d;
  }
  for (; i < n4; i += nth) dst[i] = src[i];
}
__global__ void copy_kernel(const float4* src, float4* dst, size_t n4) {
  copy_span(src, dst, n4, blockIdx.x * size_t{blockDim.x} + threadIdx.x, size_t{gridDim.x} * blockDim.x);
}
// Half of the blocks copy r4 float4 (src_r -> dst_r), the other half w4 (src_w -> dst_w).
__global__ void copy2_kernel(const float4* sr, float4* dr, size_t r4, const float4* sw, float4* dw, size_t w4) {
  const unsigned half = gridDim.x / 2;
  if (blockIdx.x < half)
    copy_span(sr, dr, r4, blockIdx.x * size_t{blockDim.x} + threadIdx.x, size_t{half} * blockDim.x);
  else
    copy_span(sw, dw, w4, (blockIdx.x - half) * size_t{blockDim.x} + threadIdx.x,
              size_t{gridDim.x - half} * blockDim.x);
}
__global__ void empty_kernel() {}

// Thread 0 waits for flags[i] == want for i = 0..n-1 and writes when each arrived (ns).
__global__ void stamp_kernel(const unsigned* flags, int n, unsigned want, unsigned long long* t) {
  for (int i = 0; i < n; ++i) {
    wait_eq(flags + i, want);
    t[i] = now_ns();
  }
}

// Flow skeleton (a): every block waits for piece flag i (0: B, 1..P: A's panels), then writes its
// share of C's panel i-1 (device -> mapped host).
__global__ void flow_flags_kernel(const unsigned* flags, int pieces, unsigned want, const float4* dc, float4* hc,
                                  size_t panel4) {
  for (int i = 1; i <= pieces; ++i) {
    if (threadIdx.x == 0)
      wait_eq(flags + i, want);
    __syncthreads();
    const float4* s = dc + (i - 1) * panel4;
    float4* d = hc + (i - 1) * panel4;
    copy_span(s, d, panel4, blockIdx.x * size_t{blockDim.x} + threadIdx.x, size_t{gridDim.x} * blockDim.x);
  }
}

// Flow skeleton (b): the kernel reads B, then A's panels one by one from host memory (grid-wide
// counters tell every block when a panel is in), and writes each C panel back once its A panel is in.
__global__ void flow_sm_kernel(const float4* hb, float4* db, size_t b4, const float4* ha, float4* da, size_t a_panel4,
                               int pieces, const float4* dc, float4* hc, size_t c_panel4, unsigned* count,
                               unsigned want_base) {
  const size_t tid = blockIdx.x * size_t{blockDim.x} + threadIdx.x, nth = size_t{gridDim.x} * blockDim.x;
  copy_span(hb, db, b4, tid, nth);
  for (int i = 0; i < pieces; ++i) {
    copy_span(ha + i * a_panel4, da + i * a_panel4, a_panel4, tid, nth);
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(count + i, 1u);
    }
    // C panel i - 1 is ready once every block has read A's panel i - 1 (pretend a GEMM ran).
    if (i > 0) {
      if (threadIdx.x == 0)
        wait_eq(count + i - 1, want_base + gridDim.x);
      __syncthreads();
      copy_span(dc + (i - 1) * c_panel4, hc + (i - 1) * c_panel4, c_panel4, tid, nth);
    }
  }
  if (threadIdx.x == 0)
    wait_eq(count + pieces - 1, want_base + gridDim.x);
  __syncthreads();
  copy_span(dc + (pieces - 1) * c_panel4, hc + (pieces - 1) * c_panel4, c_panel4, tid, nth);
}

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const bool spin = argc > 1 && std::strcmp(argv[1], "spin") == 0;
  if (spin) CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  CK(cudaFree(nullptr));
  {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &p, 12000, cudaEnableDefault, &q));
    if (!p || q != cudaDriverEntryPointSuccess) {
      std::printf("no cuStreamWriteValue32\n");
      return 1;
    }
    g_write32 = reinterpret_cast<WriteValue32>(p);
  }
  int v = 0;
  cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 0);
  std::printf("sched=%s stream_mem_ops_v1=%d\n", spin ? "spin" : "default", v);

  const size_t MiB = size_t{1} << 20;
  const size_t in_bytes = 8 * MiB, out_bytes = 4 * MiB;
  float *hA, *hC, *dA, *dC;  // hA: B (first 4 MiB) then A (next 4 MiB)
  CK(cudaMallocHost(&hA, in_bytes));
  CK(cudaMallocHost(&hC, out_bytes));
  CK(cudaMalloc(&dA, in_bytes));
  CK(cudaMalloc(&dC, out_bytes));
  std::memset(hA, 1, in_bytes);
  CK(cudaMemset(dC, 2, out_bytes));
  unsigned *dflags, *dcount;
  unsigned long long* dt;
  CK(cudaMalloc(&dflags, 64 * sizeof(unsigned)));
  CK(cudaMalloc(&dcount, 64 * sizeof(unsigned)));
  CK(cudaMalloc(&dt, 64 * sizeof(unsigned long long)));
  CK(cudaMemset(dflags, 0, 64 * sizeof(unsigned)));
  CK(cudaMemset(dcount, 0, 64 * sizeof(unsigned)));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int reps = 30;

  auto event_us = [&](auto&& body, cudaStream_t s) {
    std::vector<double> t;
    for (int r = 0; r < reps + 3; ++r) {
      CK(cudaEventRecord(e0, s));
      body();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) t.push_back(ms * 1e3);
    }
    return median(t);
  };

  // 1. Copy engine.
  double t = event_us([&] { CK(cudaMemcpyAsync(dA, hA, in_bytes, cudaMemcpyHostToDevice, s1)); }, s1);
  std::printf("ce_h2d_8MiB_one_copy us=%.1f GB/s=%.1f\n", t, in_bytes / t * 1e-3);
  t = event_us([&] { CK(cudaMemcpyAsync(hC, dC, out_bytes, cudaMemcpyDeviceToHost, s1)); }, s1);
  std::printf("ce_d2h_4MiB_one_copy us=%.1f GB/s=%.1f\n", t, out_bytes / t * 1e-3);
  for (int pieces : {4, 8, 16, 32}) {
    const size_t piece = 4 * MiB / pieces;
    t = event_us(
        [&] {
          CK(cudaMemcpyAsync(dA, hA, 4 * MiB, cudaMemcpyHostToDevice, s1));
          for (int i = 0; i < pieces; ++i)
            CK(cudaMemcpyAsync(reinterpret_cast<char*>(dA) + 4 * MiB + i * piece,
                               reinterpret_cast<char*>(hA) + 4 * MiB + i * piece, piece, cudaMemcpyHostToDevice, s1));
        },
        s1);
    std::printf("ce_h2d_B+%d_pieces us=%.1f GB/s=%.1f\n", pieces, t, in_bytes / t * 1e-3);
  }
  // The same with a flag written after each copy, and a kernel stamping arrivals.
  unsigned seq = 0;
  // B's 4 MiB, flag `flag`, then A's 4 MiB in `pieces` copies, flag flag + 1 + i after piece i (value seq).
  auto send_pieces = [&](int pieces, int flag) {
    const size_t piece = 4 * MiB / pieces;
    CK(cudaMemcpyAsync(dA, hA, 4 * MiB, cudaMemcpyHostToDevice, s1));
    write_flag(s1, dflags + flag, seq);
    for (int i = 0; i < pieces; ++i) {
      CK(cudaMemcpyAsync(reinterpret_cast<char*>(dA) + 4 * MiB + i * piece,
                         reinterpret_cast<char*>(hA) + 4 * MiB + i * piece, piece, cudaMemcpyHostToDevice, s1));
      write_flag(s1, dflags + flag + 1 + i, seq);
    }
  };
  for (int pieces : {4, 16}) {
    std::vector<double> arr(pieces + 2, 0.0);
    const int n = pieces + 2;
    for (int r = 0; r < 10; ++r) {
      ++seq;
      stamp_kernel<<<1, 32, 0, s2>>>(dflags, n, seq, dt);
      write_flag(s1, dflags + 0, seq);
      send_pieces(pieces, 1);
      CK(cudaStreamSynchronize(s2));
      CK(cudaStreamSynchronize(s1));
      std::vector<unsigned long long> h(n);
      CK(cudaMemcpy(h.data(), dt, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      if (r >= 2)
        for (int i = 0; i < n; ++i) arr[i] += (h[i] - h[0]) * 1e-3 / 8;
    }
    std::printf("ce_flags_P%d arrivals_us:", pieces);
    for (int i = 1; i < n; ++i) std::printf(" %.1f", arr[i]);
    std::printf("\n");
  }

  // 2. SMs over PCIe.
  float4 *hA4 = reinterpret_cast<float4*>(hA), *hC4 = reinterpret_cast<float4*>(hC);
  float4 *dA4 = reinterpret_cast<float4*>(dA), *dC4 = reinterpret_cast<float4*>(dC);
  for (int mult : {1, 2, 4, 8}) {
    for (int threads : {256, 1024}) {
      const int grid = sms * mult;
      t = event_us([&] { copy_kernel<<<grid, threads, 0, s1>>>(hA4, dA4, in_bytes / 16); }, s1);
      const double rd = in_bytes / t * 1e-3;
      t = event_us([&] { copy_kernel<<<grid, threads, 0, s1>>>(dC4, hC4, out_bytes / 16); }, s1);
      const double wr = out_bytes / t * 1e-3;
      t = event_us(
          [&] { copy2_kernel<<<2 * grid, threads, 0, s1>>>(hA4, dA4, in_bytes / 16, dC4, hC4, out_bytes / 16); },
          s1);
      std::printf("sm grid=%d threads=%d read_8MiB GB/s=%.1f write_4MiB GB/s=%.1f both_us=%.1f\n", grid, threads, rd,
                  wr, t);
    }
  }
  CK(cudaGetLastError());
  // SM writes beside a copy-engine H2D.
  t = event_us(
      [&] {
        CK(cudaEventRecord(e0, s1));
        CK(cudaStreamWaitEvent(s2, e0));
        copy_kernel<<<sms * 2, 1024, 0, s2>>>(dC4, hC4, out_bytes / 16);
        CK(cudaMemcpyAsync(dA, hA, in_bytes, cudaMemcpyHostToDevice, s1));
        CK(cudaEventRecord(e1, s2));
        CK(cudaStreamWaitEvent(s1, e1));
      },
      s1);
  std::printf("ce_h2d_8MiB+sm_write_4MiB us=%.1f\n", t);
  // Both copy engines at once: H2D 8 MiB on s1, D2H 4 MiB on s2 (full duplex or not).
  for (int split : {1, 4}) {
    t = event_us(
        [&] {
          CK(cudaEventRecord(e0, s1));
          CK(cudaStreamWaitEvent(s2, e0));
          for (int i = 0; i < split; ++i)
            CK(cudaMemcpyAsync(reinterpret_cast<char*>(hC) + i * (out_bytes / split),
                               reinterpret_cast<char*>(dC) + i * (out_bytes / split), out_bytes / split,
                               cudaMemcpyDeviceToHost, s2));
          CK(cudaMemcpyAsync(dA, hA, in_bytes, cudaMemcpyHostToDevice, s1));
          CK(cudaEventRecord(e1, s2));
          CK(cudaStreamWaitEvent(s1, e1));
        },
        s1);
    std::printf("ce_h2d_8MiB+ce_d2h_4MiB(%d copies) concurrent us=%.1f (alone 157.5+80)\n", split, t);
  }
  // SM reads of host memory beside a copy-engine D2H.
  t = event_us(
      [&] {
        CK(cudaEventRecord(e0, s1));
        CK(cudaStreamWaitEvent(s2, e0));
        CK(cudaMemcpyAsync(hC, dC, out_bytes, cudaMemcpyDeviceToHost, s2));
        copy_kernel<<<sms, 256, 0, s1>>>(hA4, dA4, in_bytes / 16);
        CK(cudaEventRecord(e1, s2));
        CK(cudaStreamWaitEvent(s1, e1));
      },
      s1);
  std::printf("sm_read_8MiB+ce_d2h_4MiB concurrent us=%.1f\n", t);
  // H2D 12 MiB alone (the same bytes in one direction) for comparison.
  {
    float* big = nullptr;
    float* hbig = nullptr;
    CK(cudaMalloc(&big, 12 * MiB));
    CK(cudaMallocHost(&hbig, 12 * MiB));
    t = event_us([&] { CK(cudaMemcpyAsync(big, hbig, 12 * MiB, cudaMemcpyHostToDevice, s1)); }, s1);
    std::printf("ce_h2d_12MiB_one_copy us=%.1f\n", t);
    CK(cudaFree(big));
    CK(cudaFreeHost(hbig));
  }

  // 3. Host overheads.
  std::vector<double> h;
  for (int r = 0; r < 200; ++r) {
    auto t0 = Clock::now();
    empty_kernel<<<1, 32, 0, s1>>>();
    CK(cudaStreamSynchronize(s1));
    if (r >= 20) h.push_back(us_since(t0));
  }
  std::printf("host_launch+sync_empty us=%.1f\n", median(h));
  h.clear();
  for (int r = 0; r < 200; ++r) {
    auto t0 = Clock::now();
    CK(cudaMemcpyAsync(dA, hA, 4096, cudaMemcpyHostToDevice, s1));
    CK(cudaStreamSynchronize(s1));
    if (r >= 20) h.push_back(us_since(t0));
  }
  std::printf("host_copy4KiB+sync us=%.1f\n", median(h));

  // 4. Flow skeletons, host clock.
  for (int pieces : {4, 8, 16}) {
    h.clear();
    for (int r = 0; r < 60; ++r) {
      ++seq;
      auto t0 = Clock::now();
      flow_flags_kernel<<<sms, 1024, 0, s2>>>(dflags, pieces, seq, dC4, hC4, out_bytes / 16 / pieces);
      send_pieces(pieces, 0);
      CK(cudaStreamSynchronize(s2));
      if (r >= 10) h.push_back(us_since(t0));
      CK(cudaStreamSynchronize(s1));
    }
    std::printf("flow_flags P=%d host_us=%.1f\n", pieces, median(h));
  }
  for (int pieces : {4, 8, 16}) {
    for (int mult : {1}) {
      h.clear();
      for (int r = 0; r < 60; ++r) {
        CK(cudaMemsetAsync(dcount, 0, 64 * sizeof(unsigned), s1));
        CK(cudaStreamSynchronize(s1));
        auto t0 = Clock::now();
        flow_sm_kernel<<<sms * mult, 1024, 0, s1>>>(hA4, dA4, 4 * MiB / 16, hA4 + 4 * MiB / 16, dA4 + 4 * MiB / 16,
                                                   4 * MiB / 16 / pieces, pieces, dC4, hC4,
                                                   out_bytes / 16 / pieces, dcount, 0);
        CK(cudaStreamSynchronize(s1));
        if (r >= 10) h.push_back(us_since(t0));
      }
      std::printf("flow_sm P=%d grid=%d host_us=%.1f\n", pieces, sms * mult, median(h));
    }
  }
  // The naive pinned flow for scale: copy in, nothing, copy out, one stream.
  h.clear();
  for (int r = 0; r < 60; ++r) {
    auto t0 = Clock::now();
    CK(cudaMemcpyAsync(dA, hA, in_bytes, cudaMemcpyHostToDevice, s1));
    empty_kernel<<<1, 32, 0, s1>>>();
    CK(cudaMemcpyAsync(hC, dC, out_bytes, cudaMemcpyDeviceToHost, s1));
    CK(cudaStreamSynchronize(s1));
    if (r >= 10) h.push_back(us_since(t0));
  }
  std::printf("naive_copies_only host_us=%.1f\n", median(h));
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int to = 0;
  CK(cudaMemcpyFromSymbol(&to, g_timed_out, sizeof(int)));
  std::printf("timed_out=%d\n", to);
  return 0;
}
