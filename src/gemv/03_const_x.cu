// Rung 3, const_x: rung 2 with x read from constant memory (article 000, algorithm 3).
// Constant memory is 64 KiB and one symbol per process and device, so x goes through a 32 KiB
// buffer c_x in chunks of kChunk = 8192 floats: per chunk, x[c0 .. c0 + len) is copied into c_x on
// the caller's stream (cudaMemcpyToSymbolAsync; gathered first into scratch when incx != 1) and one
// launch adds the chunk's dot products. Chunk partials stay in a float per output in scratch (read
// back by the same thread or warp at the next chunk, in chunk order: deterministic); the last chunk
// applies the alpha/beta epilogue.
// What the constant cache does: it serves one address per request and serializes distinct ones.
//   Trans::T (thread per column): all lanes of a warp read the same c_x[i] -> one broadcast, the
//   article's case, and A's loads are rung 2's.
//   Trans::N (warp per row): lane l reads c_x[j + l], 32 distinct addresses -> 32 serialized
//   constant-cache reads per step: this rung is slower than rung 2 for N, the lesson's other half.
// Sharing the one symbol: a process-wide mutex is held while a call enqueues its copies and
// launches, and the call first makes its stream wait (cudaStreamWaitEvent) on an event the previous
// user recorded after its last launch, so a copy never overwrites c_x under a kernel still reading
// it, whichever streams or host threads are involved. No host thread blocks on the device.
// That order is made at enqueue time, so a CUDA graph replay could not keep it (its copies into
// c_x could land under another call's kernels): on a capturing stream the rung throws
// rungs::Unsupported.
// Bounded by: for N the serialized constant reads; for both, one launch and one copy per 8192
// elements of x (n = 2^20 is 128 launches), calls on different streams serialize on the device,
// and for T only out_len threads, as in rung 2.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "core/scratch.hpp"
#include "gemv/gemv_rung.hpp"

#include <mutex>
#include <vector>

namespace rungs::sgemv::const_x {

namespace {

namespace g = detail::gemv;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kChunk = 8192;  // floats of x per launch: 32 KiB of the 64 KiB constant bank

__constant__ float c_x[kChunk];

// Per output o: dot = (acc_in ? acc_in[o] : 0) + this chunk's dot; then acc_out[o] = dot, or, on the
// last chunk (acc_out == nullptr), y[o] = alpha * dot + beta * y[o]. acc_in and acc_out may alias
// (each element is read then written by the same thread).

// Trans::N: a warp per row, columns c0 .. c0 + len of row r against c_x[0 .. len).
__global__ void __launch_bounds__(kThreads)
    row_warp_kernel(int64_t m, int64_t c0, int len, float alpha, const float* __restrict__ A, int64_t lda,
                    const float* acc_in, float* acc_out, float beta, float* __restrict__ y, int64_t incy) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32; r < m; r += warps) {
    const float* a = A + r * lda + c0;
    float acc = 0.0f;
    for (int j = lane; j < len; j += 32) acc = fmaf(a[j], c_x[j], acc);  // 32 distinct c_x addresses
    acc = g::warp_sum(acc);
    if (lane == 0) {
      if (acc_in) acc = acc_in[r] + acc;
      if (acc_out)
        acc_out[r] = acc;
      else
        g::store_y(y, r, incy, acc, alpha, beta);
    }
  }
}

// Trans::T: a thread per column, rows r0 .. r0 + len against c_x[0 .. len).
__global__ void __launch_bounds__(kThreads)
    col_thread_kernel(int64_t n, int64_t r0, int len, float alpha, const float* __restrict__ A, int64_t lda,
                      const float* acc_in, float* acc_out, float beta, float* __restrict__ y, int64_t incy) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; c < n;
       c += static_cast<int64_t>(gridDim.x) * kThreads) {
    const float* a = A + r0 * lda + c;
    float acc = 0.0f;
    for (int i = 0; i < len; ++i) acc = fmaf(a[i * lda], c_x[i], acc);  // one c_x address per warp
    if (acc_in) acc = acc_in[c] + acc;
    if (acc_out)
      acc_out[c] = acc;
    else
      g::store_y(y, c, incy, acc, alpha, beta);
  }
}

// xg[i] = x[(c0 + i) * incx], i < len: a strided x made contiguous for the copy into c_x.
__global__ void gather_kernel(int len, const float* __restrict__ x, int64_t c0, int64_t incx,
                              float* __restrict__ xg) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) xg[i] = x[(c0 + i) * incx];
}

// The one c_x per device: who used it last.
struct Owner {
  std::mutex mu;
  std::vector<cudaEvent_t> done;  // per device: recorded after the last launch that read c_x
};
Owner& owner() {
  static Owner o;  // never destroyed before the process's last CUDA call could need it
  return o;
}

// Records `done` on the stream when the call leaves, also by an exception, so the next user
// waits for whatever this call did enqueue.
struct RecordOnExit {
  cudaEvent_t ev;
  cudaStream_t stream;
  ~RecordOnExit() { cudaEventRecord(ev, stream); }
};

}  // namespace

void run(const Args& a) {
  detail::refuse_capture(a.stream, "const_x",
                         "its one constant-memory x is shared by every call, ordered by events at enqueue time");
  const int64_t out_len = a.out_len(), dot_len = a.dot_len();
  const int64_t chunks = g::ceil_div(dot_len, kChunk);
  detail::Scratch acc(chunks > 1 ? static_cast<size_t>(out_len) * sizeof(float) : 0, a.stream);
  detail::Scratch gathered(a.incx != 1 ? static_cast<size_t>(kChunk) * sizeof(float) : 0, a.stream);
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));

  Owner& o = owner();
  std::lock_guard<std::mutex> lock(o.mu);
  if (o.done.size() <= static_cast<size_t>(dev)) o.done.resize(static_cast<size_t>(dev) + 1, nullptr);
  cudaEvent_t& done = o.done[static_cast<size_t>(dev)];
  if (done == nullptr)
    RUNGS_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  else
    RUNGS_CUDA(cudaStreamWaitEvent(a.stream, done, 0));  // the previous user's kernels are done with c_x
  const RecordOnExit record{done, a.stream};

  const unsigned blocks = static_cast<unsigned>(
      a.trans == Trans::N ? g::ceil_div(a.m, kWarps) : g::ceil_div(a.n, kThreads));  // <= 2^28
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t c0 = c * kChunk;
    const int len = static_cast<int>(dot_len - c0 < kChunk ? dot_len - c0 : kChunk);
    const float* src = a.x + c0;
    if (a.incx != 1) {
      gather_kernel<<<static_cast<unsigned>(g::ceil_div(len, kThreads)), kThreads, 0, a.stream>>>(len, a.x, c0, a.incx,
                                                                          gathered.as<float>());
      RUNGS_LAUNCHED();
      src = gathered.as<float>();
    }
    RUNGS_CUDA(cudaMemcpyToSymbolAsync(c_x, src, static_cast<size_t>(len) * sizeof(float), 0,
                                       cudaMemcpyDeviceToDevice, a.stream));
    const float* acc_in = c > 0 ? acc.as<float>() : nullptr;
    float* acc_out = c + 1 < chunks ? acc.as<float>() : nullptr;
    if (a.trans == Trans::N)
      row_warp_kernel<<<blocks, kThreads, 0, a.stream>>>(a.m, c0, len, a.alpha, a.A, a.lda, acc_in, acc_out, a.beta,
                                                         a.y, a.incy);
    else
      col_thread_kernel<<<blocks, kThreads, 0, a.stream>>>(a.n, c0, len, a.alpha, a.A, a.lda, acc_in, acc_out,
                                                           a.beta, a.y, a.incy);
    RUNGS_LAUNCHED();
  }
}

}  // namespace rungs::sgemv::const_x
