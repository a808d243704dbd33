// How fast can a few warps per SM copy a 16-bit matrix whose rows are not 16-byte aligned into an
// aligned copy? docs/gemm_tc.md: ~0.38 TB/s of reads within the producer's registers, where 0.75-1.5
// are needed, so the in-product copy was not built. Rung 23 copies such an operand with its own kernel
// before the product (~28 us for 4095 x 4093 bf16, the whole GPU at ~2.4 TB/s); the copy could
// instead run inside the product, done by the producer warpgroup's idle warps (3 warps of 384
// threads, 56 registers) a k chunk at a time ahead of the TMA loads. That pays only if those warps
// copy about as fast as the product consumes new chunks in its first round of tiles (~1.5 TB/s of
// reads at 4095 x 4097 x 4093 in k-major order). This measures it, with the block shape of the
// product (one block of 384 threads and ~200 KB of shared memory per SM, so nothing else fits):
//   ref      the library's copy kernel (pack.cu's copy_rows: one thread per 16 bytes, 2-byte loads)
//   bg W U   W copying warps per block (warps 1 .. W; the others exit), U rows in flight per warp
//   all U    all 12 warps copying (what a prologue by the whole block would reach)
//   grid N U the same warps in N blocks of 256 threads per SM, grid-stride (a stand-alone copy)
// A warp copies one row's run of 32 16-byte chunks at a time: lane q loads aligned source chunk q,
// takes chunk q + 1 from lane q + 1 (lane 31 loads it), and shifts the pair by the row's offset.
// Jobs (a k chunk of 256 elements x 32 rows of A stored m x k) are taken from a ticket in k-chunk
// order. Output: time (median of 15, L2 flushed), GB/s of bytes read + written, mismatches.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

constexpr int KC = 256;       // elements of k per chunk (32 chunks of 16 bytes)
constexpr int ROWS_JOB = 32;  // rows per job

// Elements s .. s + 7 of the 16 elements in (lo, hi), s in 0 .. 7 (little-endian halves).
__device__ __forceinline__ uint4 shift_pair(uint4 lo, uint4 hi, int s) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int j = s >> 1;
  uint32_t x[6], y[5];
#pragma unroll
  for (int i = 0; i < 6; ++i) x[i] = (j & 2) ? w[i + 2] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) y[i] = (j & 1) ? x[i + 1] : x[i];
  const int sh = (s & 1) * 16;
  return make_uint4(__funnelshift_r(y[0], y[1], sh), __funnelshift_r(y[1], y[2], sh), __funnelshift_r(y[2], y[3], sh),
                    __funnelshift_r(y[3], y[4], sh));
}

// The aligned 16 bytes at p, or (the chunk reaches outside [lo, hi)) its bytes inside, zeros elsewhere.
__device__ __forceinline__ uint4 load_chunk(const uint16_t* p, const uint16_t* lo, const uint16_t* hi) {
  if (p >= lo && p + 8 <= hi) return __ldg(reinterpret_cast<const uint4*>(p));
  uint16_t e[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = (p + i >= lo && p + i < hi) ? p[i] : 0;
  uint4 v;
  v.x = e[0] | uint32_t(e[1]) << 16, v.y = e[2] | uint32_t(e[3]) << 16;
  v.z = e[4] | uint32_t(e[5]) << 16, v.w = e[6] | uint32_t(e[7]) << 16;
  return v;
}

struct Mat {
  const uint16_t* src;
  int64_t ld;
  int rows, cols;
  uint16_t* dst;
  int64_t ldd;
};

// Warp-wide: rows r .. r + U - 1 (those < rows), elements [x0, x0 + 256) clipped to cols.
template <int U>
__device__ __forceinline__ void copy_runs(const Mat& m, int r, int x0, int lane) {
  const uint16_t* lo = m.src;
  const uint16_t* hi = m.src + (int64_t(m.rows) - 1) * m.ld + m.cols;
  uint4 v[U], nx[U];
  int s[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint16_t* p = m.src + int64_t(r + u) * m.ld + x0;  // element x0 of row r + u
    s[u] = int((reinterpret_cast<uintptr_t>(p) & 15) >> 1);
    const uint16_t* a = p - s[u];                             // its aligned chunk
    if (r + u < m.rows) {
      v[u] = load_chunk(a + 8 * lane, lo, hi);
      if (lane == 31) nx[u] = load_chunk(a + 256, lo, hi);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    uint4 n;
    n.x = __shfl_down_sync(~0u, v[u].x, 1), n.y = __shfl_down_sync(~0u, v[u].y, 1);
    n.z = __shfl_down_sync(~0u, v[u].z, 1), n.w = __shfl_down_sync(~0u, v[u].w, 1);
    if (lane == 31) n = nx[u];
    const int c = x0 + 8 * lane;
    if (r + u < m.rows && c < m.cols) {
      uint4 o = shift_pair(v[u], n, s[u]);
      const int valid = m.cols - c;  // elements past cols: zeros (the copy's row padding)
      if (valid < 8) {
        uint32_t* w = &o.x;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (2 * i >= valid) w[i] = 0;
          else if (2 * i + 1 >= valid) w[i] &= 0xffffu;
        }
      }
      *reinterpret_cast<uint4*>(m.dst + int64_t(r + u) * m.ldd + c) = o;
    }
  }
}

template <int U>
__global__ void __launch_bounds__(384, 1) probe(Mat m, int first_warp, int last_warp, int* ticket) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp < first_warp || warp > last_warp) return;
  const int row_jobs = (m.rows + ROWS_JOB - 1) / ROWS_JOB, chunks = (m.cols + KC - 1) / KC;
  const int jobs = row_jobs * chunks;
  for (;;) {
    int j = 0;
    if (lane == 0) j = atomicAdd(ticket, 1);
    j = __shfl_sync(~0u, j, 0);
    if (j >= jobs) break;
    const int c = j / row_jobs, g = j % row_jobs;
    for (int r = g * ROWS_JOB; r < min(m.rows, (g + 1) * ROWS_JOB); r += U) copy_runs<U>(m, r, c * KC, lane);
  }
}

// The same warp runs over a whole grid of small blocks (no shared memory: up to 64 warps an SM), each
// warp taking groups of U rows x one run, grid-stride: how fast a stand-alone copy could go.
template <int U>
__global__ void __launch_bounds__(256) grid_copy(Mat m) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  const int runs = (m.cols + KC - 1) / KC, groups = (m.rows + U - 1) / U;
  for (int64_t j = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; j < int64_t(groups) * runs; j += warps)
    copy_runs<U>(m, int(j / runs) * U, int(j % runs) * KC, lane);
}

// pack.cu's copy_rows_kernel (16-bit), for reference.
__global__ void ref_copy(const uint16_t* __restrict__ src, int64_t ld, int rows, int cols, uint16_t* __restrict__ dst,
                         int64_t ldd) {
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  if (c0 >= cols) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const uint16_t* s = src + r * ld + c0;
    if (c0 + 8 <= cols) {
      union {
        uint4 u;
        uint16_t e[8];
      } v;
#pragma unroll
      for (int i = 0; i < 8; ++i) v.e[i] = s[i];
      *reinterpret_cast<uint4*>(dst + r * ldd + c0) = v.u;
    } else {
      for (int64_t i = 0; c0 + i < cols; ++i) dst[r * ldd + c0 + i] = s[i];
    }
  }
}

int main(int argc, char** argv) {
  const int rows = argc > 1 ? std::atoi(argv[1]) : 4095, cols = argc > 2 ? std::atoi(argv[2]) : 4093;
  const int64_t ld = cols, ldd = (cols + 7) / 8 * 8;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // The source one element past a 16-byte boundary, so even row 0 is unaligned.
  uint16_t *src_alloc, *dst, *flush;
  CK(cudaMalloc(&src_alloc, (size_t(rows) * ld + 8) * 2));
  CK(cudaMalloc(&dst, size_t(rows) * ldd * 2));
  CK(cudaMalloc(&flush, size_t(256) << 20));
  const uint16_t* src = src_alloc + 1;
  std::vector<uint16_t> h(size_t(rows) * ld);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t((i * 2654435761u) >> 7);
  CK(cudaMemcpy(src_alloc + 1, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  int* ticket;
  CK(cudaMalloc(&ticket, sizeof(int)));
  const int smem = 200 * 1024;  // one block per SM, as the product's
  CK(cudaFuncSetAttribute(probe<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(probe<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(probe<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const Mat m{src, ld, rows, cols, dst, ldd};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const double bytes = 2.0 * rows * cols * 2;
  auto run = [&](const char* name, auto launch) {
    std::vector<float> t;
    int bad = 0;
    for (int rep = 0; rep < 16; ++rep) {
      CK(cudaMemset(dst, 0xff, size_t(rows) * ldd * 2));
      CK(cudaMemset(flush, rep, size_t(256) << 20));
      CK(cudaMemset(ticket, 0, sizeof(int)));
      CK(cudaEventRecord(e0));
      launch();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (rep > 0) t.push_back(ms);
      if (rep == 15) {
        std::vector<uint16_t> o(size_t(rows) * ldd);
        CK(cudaMemcpy(o.data(), dst, o.size() * 2, cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) bad += o[size_t(r) * ldd + c] != h[size_t(r) * ld + c];
      }
    }
    std::sort(t.begin(), t.end());
    const float med = t[t.size() / 2];
    std::printf("%-14s %8.1f us  %7.0f GB/s  mismatches %d\n", name, med * 1e3, bytes / (med * 1e-3) / 1e9, bad);
  };
  std::printf("%d x %d 16-bit, ld %lld -> %lld, %d SMs\n", rows, cols, (long long)ld, (long long)ldd, sms);
  run("ref", [&] {
    const dim3 grid((cols + 8 * 256 - 1) / (8 * 256), std::min(rows, 65535));
    ref_copy<<<grid, 256>>>(src, ld, rows, cols, dst, ldd);
  });
  char name[32];
  for (int w : {3, 4}) {
    auto bg = [&](auto u) {
      constexpr int U = decltype(u)::value;
      std::snprintf(name, sizeof name, "bg %d warps U%d", w, U);
      run(name, [&] { probe<U><<<sms, 384, smem>>>(m, w == 4 ? 0 : 1, w == 4 ? 3 : 3, ticket); });
    };
    bg(std::integral_constant<int, 1>{});
    bg(std::integral_constant<int, 2>{});
    bg(std::integral_constant<int, 4>{});
  }
  for (int per_sm : {8, 16}) {
    std::snprintf(name, sizeof name, "grid %d/SM U2", per_sm);
    run(name, [&] { grid_copy<2><<<sms * per_sm, 256>>>(m); });
    std::snprintf(name, sizeof name, "grid %d/SM U4", per_sm);
    run(name, [&] { grid_copy<4><<<sms * per_sm, 256>>>(m); });
  }
  run("all 12 U2", [&] { probe<2><<<sms, 384, smem>>>(m, 0, 11, ticket); });
  run("all 12 U4", [&] { probe<4><<<sms, 384, smem>>>(m, 0, 11, ticket); });
  return 0;
}
