// Rung 25, decode_splitk: rung 24 with k split over blocks when n is too short to fill the GPU;
// f16 and bf16, any layout; m > 128 and float inputs as rung 24.
// Adds over 24 decode_rows: split-K. Rung 24 has one block per 32 output columns (64 with W k x n), so
// n = 1024 is 32 blocks on 132 SMs that each need about two blocks' loads in flight to keep DRAM busy.
// Here k is cut into S slices of whole 1024-k chunks (W's 16-byte loads stay aligned), S the largest
// that keeps the grid within two blocks per SM (S = 2 SMs / column blocks, at most one slice per
// chunk). Block (x, s) runs rung 24's pass over its slice for every row of A and writes plain fp32
// sums to part[s][row][col], S m n floats of stream-ordered scratch (a CUDA graph captures the
// allocation with the kernels). A second kernel gives each output one thread, which adds its S
// partials in slice order and applies alpha / beta (beta == 0: C not read). S depends only on the
// shape and the device: the same bits every run, no atomics. Where no S >= 2 fits the grid or k is
// one chunk, the call is rung 24, unchanged.
// Bounded by: DRAM bandwidth on W plus the second pass: the partials (written and read once, mostly
// in L2) and a second launch the first kernel does not overlap (a programmatic dependent launch, as in
// gemv rung 7, would hide part of it). A is staged per slice: its L2 traffic is rung 24's.
// Measured: 1.03-1.04x cuBLAS at m = 1 where n is short enough to split (bench, H100 and H200).
#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/gemm_tc.cuh"
#include "detail/gemv_kernels.cuh"
#include "gemm/24_decode_rows.cuh"

namespace rungs::sgemm::decode_splitk {

namespace {

using detail::gemv::ceil_div;

constexpr int kFinishThreads = 256;
constexpr int64_t kBlocksPerSm = 2;  // the grid the split aims at: this many blocks per SM

// C[r, c] = alpha * sum_s part[(s * m + r) * n + c] + beta * C[r, c], one thread per output, s in order.
template <typename T>
__global__ void __launch_bounds__(kFinishThreads)
    finish_kernel(int64_t m, int64_t n, int S, const float* __restrict__ part, float alpha, float beta,
                  T* __restrict__ C, int64_t ldc) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kFinishThreads + threadIdx.x;
  const int64_t mn = m * n;
  if (o >= mn) return;
  float v = 0.0f;
  for (int s = 0; s < S; ++s) v += part[s * mn + o];
  detail::store_c(C, ldc, o / n, o % n, v, alpha, beta);
}

template <typename T>
void run_t(const ArgsT<T>& a) {
  decode_rows::check(a, "decode_splitk");
  const int64_t sms = detail::sm_count();
  const int64_t col_blocks = decode_rows::column_blocks(a.tb, a.n);
  const int64_t chunks = ceil_div(a.k, decode_rows::kChunk);
  int64_t S = kBlocksPerSm * sms / col_blocks;
  if (S > chunks) S = chunks;
  if (S <= 1) {  // rung 24 fills the GPU, or k is one chunk
    decode_rows::launch(a, 1, a.k, nullptr);
    return;
  }
  const int64_t slice = ceil_div(chunks, S) * decode_rows::kChunk;
  S = ceil_div(a.k, slice);  // no empty slice
  const int s32 = static_cast<int>(S);  // S <= 2 SMs: small
  detail::Scratch scratch(static_cast<size_t>(S * a.m * a.n) * sizeof(float), a.stream);
  float* part = scratch.as<float>();
  decode_rows::launch(a, s32, slice, part);
  const unsigned blocks = static_cast<unsigned>(ceil_div(a.m * a.n, kFinishThreads));  // m <= 128: < 2^31
  finish_kernel<T><<<blocks, kFinishThreads, 0, a.stream>>>(a.m, a.n, s32, part, a.alpha, a.beta, a.C, a.ldc);
  detail::check_launch("decode_splitk");
}

}  // namespace

void run_f16(const ArgsH& a) { run_t(a); }
void run_bf16(const ArgsBF& a) { run_t(a); }

}  // namespace rungs::sgemm::decode_splitk
