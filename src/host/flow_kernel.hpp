// gemm_host's flow kernel: one persistent launch that multiplies a job's products as their pieces
// arrive, in place of one rungs::gemm launch per product (src/host/flow_kernel.cu says why and how).
// The host side: the products in the kernel's tiles, the counters it shares with the copy streams,
// and the stream memory operations (cuStreamWriteValue32 / cuStreamWaitValue32) that tie them.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace rungs::host {

// One product of a job's schedule (schedule.hpp) in the flow kernel's tiles.
struct FlowProduct {
  int ti0 = 0, ti1 = 0, tj0 = 0, tj1 = 0;  // tiles [ti0, ti1) x [tj0, tj1) of C (ragged at m and n)
  int k0 = 0, k1 = 0;                      // its k range (job-relative)
  int step = 0;      // its pieces are on the device once the arrival counter is >= step + 1
  int chunk = 0;     // its tiles' place in their k order: each tile's counter must equal it first
  int first_k = 0;   // 1: C = alpha op(A) op(B) + beta C (beta == 0: C not read); 0: C += alpha op(A) op(B)
  int band = -1;     // >= 0: the product finishes its tiles; tile row ti counts into band + ti - ti0
  int items_before = 0;  // tiles of the products before it
};
constexpr int kMaxFlowProducts = 192;

// The counters (32-bit words of device memory, zeroed before each launch): the ticket that hands out
// tiles, the arrival counter (the H2D stream writes step + 1 after each step's pieces; kFlowAbort
// stops the kernel), then one word per band (tiles of that tile row finished: the D2H stream waits
// for their count) and one per tile of C (k chunks done).
constexpr int kFlowTicket = 0, kFlowArrived = 1, kFlowHead = 4;
constexpr unsigned kFlowAbort = 0x7fffffffu;
// What the kernel reports through a mapped pinned word (0: finished).
constexpr int kFlowAborted = 1, kFlowTimedOut = 2;

struct FlowLaunch {
  Trans ta = Trans::N, tb = Trans::N;
  const float* A = nullptr;  // device windows of op(A) (m x k), op(B) (k x n) and C, stored as for gemm
  const float* B = nullptr;
  float* C = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  int products = 0, items = 0, bands = 0;
  const FlowProduct* prod = nullptr;  // host array of `products` (copied into the launch's parameters)
  unsigned* counters = nullptr;       // device: flow_counter_words(...) words, zeroed
  int* status = nullptr;              // device pointer of a mapped pinned word, zero before the launch
};

// The kernel's tile for these transposes (rows x columns of C).
struct FlowTile {
  int bm, bn;
};
FlowTile flow_tile(Trans tb);
// How many words `counters` must hold.
inline int64_t flow_counter_words(int bands, int64_t tiles) { return kFlowHead + bands + tiles; }
// Launches the persistent kernel (as many blocks as fit at once) on s; it returns when every tile is
// done, or at once after kFlowAbort, or after a wait of ~20 s with no progress (kFlowTimedOut).
void launch_flow(const FlowLaunch& f, cudaStream_t s);
// Blocks of the persistent grid (SMs x blocks per SM).
int flow_blocks(Trans tb);

// Stream memory operations through the driver's entry points. available(): both were found (CUDA 12+
// driver); the others throw rungs::Error with the driver's error code.
bool stream_memops_available();
void stream_write_u32(cudaStream_t s, unsigned* p, unsigned v);
void stream_wait_geq_u32(cudaStream_t s, unsigned* p, unsigned v);

}  // namespace rungs::host
