// The tuning experiment behind rung 8 (single_pass) of the reduction ladder (docs/reduce.md: grid-stride
// 1024 x 1 with 4 loads in flight, the only shape at or above CUB for every type at 2^24 and 2^28;
// `counter`: what the ticket counter's cudaMemsetAsync costs; `small`: 2^24 only): the same accurate
// single-pass sum (uint64 / double / double-double accumulators, last-block combine in a fixed
// order) under several work distributions and block shapes, each timed against CUB in the same
// loop. Not part of the library or its tests; built and run by scripts/experiments/reduce_sweep/reduce_sweep.sh
// on the GPU machine. Work distributions:
//   S  grid-stride: G = SMs x B blocks of NT threads stride over the 16-byte vectors, U loads in flight
//   C  even share: the same grid, each block a contiguous run of whole tiles (NT x U vectors)
//   P  one tile per block: G = number of tiles (not resident), one partial per tile
// Timing: median of 25 reps interleaved with cub::DeviceReduce, L2 flushed before each timed launch
// by READING 2x L2 of another buffer (clean lines); the flush by cudaMemset (dirty lines, written
// back while the timed kernel runs) is shown for comparison on the first configuration.
#include "detail/reduce_kernels.cuh"
#include "../ck.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda.h>
#include <cuda/std/functional>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace rungs::detail;


template <typename T> struct AccurateOf { using type = uint64_t; };
template <> struct AccurateOf<float> { using type = double; };
template <> struct AccurateOf<double> { using type = DD; };
template <typename T> struct OutOf { using type = int64_t; };
template <> struct OutOf<float> { using type = float; };
template <> struct OutOf<double> { using type = double; };

enum Mode { kStride, kContig, kPerTile };

template <int NT, int B> constexpr int min_blocks() { return B * NT > 2048 ? 2048 / NT : B; }

template <Mode M, int NT, int B, int U, typename T, typename Acc, typename Out>
__global__ void __launch_bounds__(NT, min_blocks<NT, B>())
    sweep_kernel(const T* __restrict__ in, VecSplit sp, Acc* partials, unsigned* counter, Out* __restrict__ out) {
  using V = typename Vec<T>::type;
  constexpr int N = Vec<T>::N;
  __shared__ Acc warp_part[NT / 32];
  __shared__ bool is_last;
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + sp.head);
  const int64_t gtid = int64_t{blockIdx.x} * NT + threadIdx.x;
  Acc total = acc_zero<Acc>();
  if constexpr (M == kStride) {
    const int64_t stride = int64_t{gridDim.x} * NT, step = stride * U, full = sp.nvec / step;
    for (int64_t it = 0; it < full; ++it) {
      const V* p = vin + it * step + gtid;
      V v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = __ldg(p + u * stride);
      Acc a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = vec_to_acc<Acc, T>(v[u]);
      total = merge(total, merge_tree(a));
    }
    const int64_t i0 = full * step + gtid;
    V v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i0 + u * stride < sp.nvec) v[u] = __ldg(vin + i0 + u * stride);
    Acc a[U];
#pragma unroll
    for (int u = 0; u < U; ++u) a[u] = i0 + u * stride < sp.nvec ? vec_to_acc<Acc, T>(v[u]) : acc_zero<Acc>();
    total = merge(total, merge_tree(a));
  } else {
    constexpr int64_t kTile = int64_t{NT} * U;
    const int64_t tiles = div_up(sp.nvec, kTile);
    int64_t t0, t1;
    if constexpr (M == kContig) {
      const int64_t per = div_up(tiles, gridDim.x);
      t0 = ::min(tiles, int64_t{blockIdx.x} * per);
      t1 = ::min(tiles, t0 + per);
    } else {
      t0 = blockIdx.x;
      t1 = t0 + 1;
    }
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t base = t * kTile + threadIdx.x;
      V v[U];
      Acc a[U];
      if ((t + 1) * kTile <= sp.nvec) {
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldg(vin + base + u * NT);
#pragma unroll
        for (int u = 0; u < U; ++u) a[u] = vec_to_acc<Acc, T>(v[u]);
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (base + u * NT < sp.nvec) v[u] = __ldg(vin + base + u * NT);
#pragma unroll
        for (int u = 0; u < U; ++u) a[u] = base + u * NT < sp.nvec ? vec_to_acc<Acc, T>(v[u]) : acc_zero<Acc>();
      }
      total = merge(total, merge_tree(a));
    }
  }
  if (gtid < sp.head) total = merge(total, acc_from<Acc>(in[gtid]));
  if (gtid < sp.tail) total = merge(total, acc_from<Acc>(in[sp.head + sp.nvec * N + gtid]));
  total = block_sum<NT>(total, warp_part);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
    __threadfence();
    const unsigned ticket = atomicAdd(counter, 1u);
    is_last = ticket == gridDim.x - 1;
    if (is_last) __threadfence();
  }
  __syncthreads();
  if (!is_last) return;
  const Acc sum = combine_partials<NT>(partials, static_cast<int>(gridDim.x), warp_part);
  if (threadIdx.x == 0) {
    *out = finish<Out>(sum);
    *counter = 0;  // for the zero_mode 1 experiment: the next launch finds it zeroed
  }
}

__global__ void read_flush(const float4* __restrict__ p, size_t n4, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n4; i += size_t{gridDim.x} * blockDim.x) {
    const float4 a = p[i];
    acc += a.x + a.y + a.z + a.w;
  }
  if (acc == -1.0f) *sink = acc;
}

template <typename T>
__global__ void fill(T* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t h = (uint64_t(i) + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    const int v = static_cast<int>(h % 2001) - 1000;
    p[i] = static_cast<T>(v) / (std::is_floating_point_v<T> ? T(7) : T(1));
  }
}

struct Env {
  int sms = 0;
  float4* flush_buf = nullptr;
  size_t flush_n4 = 0;
  float* sink = nullptr;
  void* scratch = nullptr;  // counter (16 B) + partials
  size_t scratch_bytes = size_t{64} << 20;
  void* cub_temp = nullptr;
  size_t cub_bytes = size_t{16} << 20;
  bool memset_flush = false;
  int zero_mode = 0;  // the ticket counter before each launch: 0 cudaMemsetAsync, 1 none (reset by
                      // the last block), 2 cuStreamWriteValue32 (a stream memory operation)
  CUresult (*write_value32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  void flush(cudaStream_t s) {
    if (memset_flush) {
      CK(cudaMemsetAsync(flush_buf, 0, flush_n4 * 16, s));
    } else {
      read_flush<<<sms * 8, 256, 0, s>>>(flush_buf, flush_n4, sink);
    }
  }
};

template <Mode M, int NT, int B, int U, typename T>
void launch(Env& env, const T* in, int64_t n, typename OutOf<T>::type* out, cudaStream_t s) {
  using Acc = typename AccurateOf<T>::type;
  using Out = typename OutOf<T>::type;
  const VecSplit sp = vec_split(in, n);
  int64_t grid;
  if constexpr (M == kPerTile) {
    grid = std::max<int64_t>(1, div_up(sp.nvec, int64_t{NT} * U));
  } else {
    grid = std::clamp<int64_t>(div_up(sp.nvec, int64_t{NT} * U), 1, int64_t{env.sms} * B);
  }
  if (env.zero_mode == 0) {
    CK(cudaMemsetAsync(env.scratch, 0, 16, s));
  } else if (env.zero_mode == 2) {
    if (env.write_value32(s, reinterpret_cast<CUdeviceptr>(env.scratch), 0, 0) != CUDA_SUCCESS) {
      std::printf("cuStreamWriteValue32 failed\n");
      std::exit(1);
    }
  }
  auto* counter = static_cast<unsigned*>(env.scratch);
  auto* partials = reinterpret_cast<Acc*>(static_cast<char*>(env.scratch) + 16);
  sweep_kernel<M, NT, B, U, T, Acc, Out><<<static_cast<unsigned>(grid), NT, 0, s>>>(in, sp, partials, counter, out);
}

struct ToU64 {
  template <typename T>
  __host__ __device__ uint64_t operator()(T x) const { return static_cast<uint64_t>(x); }
};

template <typename T>
void cub_sum(Env& env, const T* in, int64_t n, typename OutOf<T>::type* out, cudaStream_t s) {
  size_t bytes = env.cub_bytes;
  if constexpr (std::is_integral_v<T>) {
    CK(cub::DeviceReduce::TransformReduce(env.cub_temp, bytes, in, reinterpret_cast<uint64_t*>(out), n,
                                          cuda::std::plus<uint64_t>{}, ToU64{}, uint64_t{0}, s));
  } else {
    CK(cub::DeviceReduce::Sum(env.cub_temp, bytes, in, out, n, s));
  }
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename T, typename F>
void time_one(Env& env, const char* name, const T* in, int64_t n, typename OutOf<T>::type* out, F&& f,
              cudaStream_t s) {
  using Out = typename OutOf<T>::type;
  constexpr int kReps = 25;
  // Correctness against CUB (integers bitwise; floats relative 1e-6 / 1e-12).
  f();
  cub_sum(env, in, n, out + 1, s);
  Out r[2];
  CK(cudaMemcpyAsync(r, out, sizeof r, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  const double diff = std::abs(static_cast<double>(r[0]) - static_cast<double>(r[1]));
  const double tol = std::is_integral_v<T> ? 0.0 : (sizeof(T) == 4 ? 1e-5 : 1e-12) * std::abs(double(r[1])) + 1e-3;
  const bool ok = diff <= tol;
  for (int w = 0; w < 3; ++w) {
    f();
    cub_sum(env, in, n, out + 1, s);
  }
  std::vector<cudaEvent_t> ev(4 * kReps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int r2 = 0; r2 < kReps; ++r2) {
    env.flush(s);
    CK(cudaEventRecord(ev[4 * r2], s));
    f();
    CK(cudaEventRecord(ev[4 * r2 + 1], s));
    env.flush(s);
    CK(cudaEventRecord(ev[4 * r2 + 2], s));
    cub_sum(env, in, n, out + 1, s);
    CK(cudaEventRecord(ev[4 * r2 + 3], s));
  }
  CK(cudaStreamSynchronize(s));
  std::vector<float> a, b;
  for (int r2 = 0; r2 < kReps; ++r2) {
    float x, y;
    CK(cudaEventElapsedTime(&x, ev[4 * r2], ev[4 * r2 + 1]));
    CK(cudaEventElapsedTime(&y, ev[4 * r2 + 2], ev[4 * r2 + 3]));
    a.push_back(x);
    b.push_back(y);
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  const double ma = median(a), mb = median(b), bytes = double(n) * sizeof(T);
  std::printf("  %-22s %9.2f us %7.0f GB/s | cub %9.2f us %7.0f GB/s | x cub %.3f %s\n", name, ma * 1e3,
              bytes / ma / 1e6, mb * 1e3, bytes / mb / 1e6, mb / ma, ok ? "" : "WRONG");
}

template <typename T>
void sweep(Env& env, const char* tname, int64_t n, int misalign, cudaStream_t s) {
  using Out = typename OutOf<T>::type;
  T* buf;
  Out* out;
  CK(cudaMalloc(&buf, (n + 4) * sizeof(T)));
  CK(cudaMalloc(&out, 2 * sizeof(Out)));
  fill<<<1024, 256, 0, s>>>(buf, n + 4, 42);
  const T* in = buf + misalign;
  std::printf("%s n=%lld%s\n", tname, static_cast<long long>(n), misalign ? " (in + 1)" : "");
#define RUN(M, NT, B, U)                                                                          \
  time_one<T>(env, #M " " #NT "x" #B " u" #U, in, n, out, [&] { launch<M, NT, B, U, T>(env, in, n, out, s); }, s)
  env.memset_flush = true;
  time_one<T>(env, "kStride 256x4 u4 MEMSET", in, n, out, [&] { launch<kStride, 256, 4, 4, T>(env, in, n, out, s); }, s);
  env.memset_flush = false;
  RUN(kStride, 256, 4, 4);
  RUN(kStride, 256, 4, 8);
  RUN(kStride, 512, 2, 4);
  RUN(kStride, 512, 2, 8);
  RUN(kStride, 128, 8, 4);
  RUN(kStride, 256, 8, 4);
  RUN(kStride, 256, 16, 4);
  RUN(kStride, 1024, 1, 4);
  RUN(kStride, 256, 2, 8);
  RUN(kContig, 256, 4, 4);
  RUN(kContig, 256, 4, 8);
  RUN(kContig, 512, 2, 8);
  RUN(kContig, 256, 16, 4);
  RUN(kPerTile, 256, 1, 8);
  RUN(kPerTile, 512, 1, 8);
  RUN(kPerTile, 256, 1, 16);
#undef RUN
  CK(cudaFree(buf));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  Env env;
  CK(cudaDeviceGetAttribute(&env.sms, cudaDevAttrMultiProcessorCount, 0));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  env.flush_n4 = 2 * size_t(l2) / 16;
  CK(cudaMalloc(&env.flush_buf, env.flush_n4 * 16));
  CK(cudaMemset(env.flush_buf, 0, env.flush_n4 * 16));
  CK(cudaMalloc(&env.sink, 4));
  CK(cudaMalloc(&env.scratch, env.scratch_bytes));
  CK(cudaMalloc(&env.cub_temp, env.cub_bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  if (argc >= 2 && std::strcmp(argv[1], "counter") == 0) {
    cudaDriverEntryPointQueryResult q;
    void* fn = nullptr;
    CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || fn == nullptr) {
      std::printf("no cuStreamWriteValue32\n");
      return 1;
    }
    env.write_value32 = reinterpret_cast<decltype(env.write_value32)>(fn);
    for (int64_t n : {int64_t{1} << 20, int64_t{1} << 24}) {
      for (int mode : {0, 1, 2, 0}) {
        env.zero_mode = mode;
        float* bf;
        float* of;
        CK(cudaMalloc(&bf, n * 4));
        CK(cudaMalloc(&of, 8));
        fill<<<1024, 256, 0, s>>>(bf, n, 42);
        CK(cudaMemsetAsync(env.scratch, 0, 16, s));
        std::printf("f32 n=%lld zero_mode %d\n", static_cast<long long>(n), mode);
        time_one<float>(env, "kStride 1024x1 u4", bf, n, of, [&] { launch<kStride, 1024, 1, 4, float>(env, bf, n, of, s); }, s);
        CK(cudaFree(bf));
        CK(cudaFree(of));
      }
    }
    return 0;
  }
  const bool big = argc < 2 || std::strcmp(argv[1], "small") != 0;
  for (int64_t n : {int64_t{1} << 24, int64_t{1} << 28}) {
    if (n > (int64_t{1} << 24) && !big) break;
    sweep<float>(env, "f32", n, 0, s);
    sweep<double>(env, "f64", n, 0, s);
    sweep<int32_t>(env, "i32", n, 0, s);
  }
  sweep<float>(env, "f32", (int64_t{1} << 24) + 3, 1, s);
  return 0;
}
