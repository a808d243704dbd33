// Rung 3, ring: the collective matmul of XLA and cuBLASMp. Every transfer goes to a ring neighbour
// only (ncclSend to rank r+1, ncclRecv from r-1, grouped), world-1 steps, the chunk in hand multiplied
// while the next one moves.
// Adds over 2 chunked_overlap: rung 2 exchanges with every rank and keeps a slot per rank; the ring
// needs links to its neighbours only (any topology NCCL's rings run on: PCIe, several hosts) and two
// chunk slots of workspace at any world size, and its reduce-scatter sums as it goes: the add is the
// gemm's own epilogue (beta = 1), no NCCL reduction kernel runs.
//
// allgather_gemm: at step j rank r holds rank (r-j)'s rows (its own A_local at step 0, read in place)
// and multiplies them into their rows of C while sending them on to r+1 and receiving (r-j-1)'s from
// r-1 into the other of two slots (step j's receive waits, by event, for the product that read that
// slot at step j-1; step 1 overwrites nothing still read, as step 0 reads A_local).
//
// gemm_reducescatter: the ring reduce-scatter fused with the product. At step j (j < world-1) rank r
// computes the fp32 partial of block b = (r-j-1) mod world (rank b's rows; dist::detail::partial_gemm)
// with beta = 1 into the running sum received from r-1 at step j-1 (step 0: beta = 0) and sends it to
// r+1; after world-1 steps the sum arriving is its own block's from every other rank, to which it adds
// its own partial before the epilogue stream writes C_local (alpha / beta, one rounding, scale.cu).
// Blocks go in pieces (pieces_of: >= 8 MiB of fp32, at most 8), each sent as soon as multiplied. Two
// running-sum slots (m/world x n fp32 each) alternate between steps: step j receives
// into the slot step j-1 sent from (the communication stream's order keeps that send done first).
// Summed in ring order: the result differs from rung 1's by fp32 rounding only.
//
// Bounded by: each step is max(one chunk's transfer, its product), plus a piece at the ends; the
// running sums move one neighbour at a time; NCCL's kernels need SMs, as in rung 2.
// Prediction (2 GPUs): level with rung 2 for allgather_gemm, 1.6-1.7x rung 1 for gemm_reducescatter;
// measured (2 H200): 1.30x and 1.11x rung 1, the reduce-scatter slower than rung 2's 1.26x.
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail::ring {

namespace {

constexpr const char* kName = "ring";

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  if (a.world == 1 || a.k == 0) {
    // Nothing to move: one rank's own rows, or k == 0 (C = beta * C, A not read).
    rank_product(a, a.world * a.m, a.A, a.lda, a.C, a.stream);
    return;
  }
  const int64_t chunk = a.m * a.k;  // elements of one rank's rows, tight
  T* slots = static_cast<T*>(a.ws->get(2 * static_cast<size_t>(chunk) * sizeof(T)));
  T* const slot[2] = {slots, slots + chunk};
  const int right = (a.rank + 1) % a.world, left = (a.rank - 1 + a.world) % a.world;
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm);
  // Events: 2j = step j's receive landed, 2j+1 = step j's product done.
  auto landed = [](int j) { return 2 * static_cast<size_t>(j); };
  auto computed = [](int j) { return 2 * static_cast<size_t>(j) + 1; };
  // Step 0 sends A_local itself when its rows are tight, else a tight copy in slot 0 (which step 1
  // receives into, after step 0's send on the same stream).
  const T* send = a.A;
  if (a.lda != a.k) {
    RUNGS_CUDA(cudaMemcpy2DAsync(slot[0], a.k * sizeof(T), a.A, a.lda * sizeof(T), a.k * sizeof(T), a.m,
                                 cudaMemcpyDeviceToDevice, comm));
    send = slot[0];
  }
  for (int j = 0; j < a.world; ++j) {
    const int owner = (a.rank - j + a.world) % a.world;  // whose rows are in hand at step j
    const T* hand = j == 0 ? a.A : slot[j % 2];            // step j-1's receive
    if (j >= 1) send = hand;                               // sent on to rank r+1
    // The transfer of step j first, so NCCL's kernel is queued before the product fills the SMs.
    if (j < a.world - 1) {
      T* recv = slot[(j + 1) % 2];
      if (j >= 2) f.wait(computed(j - 1), comm);  // step j-1's product read `recv`
      Group g;
      RUNGS_NCCL(ncclSend(send, static_cast<size_t>(chunk), nccl_type<T>(), right, a.comm, comm));
      RUNGS_NCCL(ncclRecv(recv, static_cast<size_t>(chunk), nccl_type<T>(), left, a.comm, comm));
      g.end();
      f.record(landed(j), comm);
    }
    if (j >= 1) f.wait(landed(j - 1), comp);
    rank_product(a, a.m, hand, j == 0 ? a.lda : a.k, a.C + owner * a.m * a.ldc, comp);
    f.record(computed(j), comp);
  }
  f.join();
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a) {
  const int64_t mb = a.m / a.world;  // rows of each rank's block (C_local)
  const int pieces = pieces_of(mb, a.n * static_cast<int64_t>(sizeof(float)));
  const int steps = a.world - 1;
  const size_t block = static_cast<size_t>(mb) * static_cast<size_t>(a.n);
  float* sums = static_cast<float*>(a.ws->get((steps > 0 ? 2 : 1) * block * sizeof(float)));
  float* const slot[2] = {sums, sums + (steps > 0 ? block : 0)};
  const int right = (a.rank + 1) % a.world, left = (a.rank - 1 + a.world) % a.world;
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm), epi = f.stream(kEpilogue);
  // Events: per step and piece, the product done and the receive landed; then the final products.
  auto computed = [&](int j, int p) { return 2 * (static_cast<size_t>(j) * pieces + p); };
  auto landed = [&](int j, int p) { return 2 * (static_cast<size_t>(j) * pieces + p) + 1; };
  auto final_done = [&](int p) { return 2 * static_cast<size_t>(steps) * pieces + p; };
  for (int j = 0; j < steps; ++j) {
    const int b = (a.rank - j - 1 + a.world) % a.world;  // the block summed at this step
    float* x = slot[j % 2];        // step j-1's receive, summed into and sent on
    float* y = slot[(j + 1) % 2];  // step j's receive
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      if (j >= 1) f.wait(landed(j - 1, p), comp);
      partial_gemm(kName, rows, a.n, a.k, a.A + (b * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, j >= 1, x + lo * a.n,
                   a.n, 0, 1, comp);
      f.order(computed(j, p), comp, comm);
      const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(a.n);
      Group g;
      RUNGS_NCCL(ncclSend(x + lo * a.n, count, ncclFloat32, right, a.comm, comm));
      RUNGS_NCCL(ncclRecv(y + lo * a.n, count, ncclFloat32, left, a.comm, comm));
      g.end();
      f.record(landed(j, p), comm);
    }
  }
  // The own block, added into the sum of the others' partials as its pieces land (alone with one rank).
  float* sum = slot[steps % 2];
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    if (steps > 0) f.wait(landed(steps - 1, p), comp);
    partial_gemm(kName, rows, a.n, a.k, a.A + (a.rank * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, steps > 0,
                 sum + lo * a.n, a.n, 0, 1, comp);
    f.order(final_done(p), comp, epi);
    scale_into(rows, a.n, a.alpha, sum + lo * a.n, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  f.join();
}

}  // namespace

void allgather_gemm_bf16(const ArgsBF& a) { allgather_gemm(a); }
void allgather_gemm_f16(const ArgsH& a) { allgather_gemm(a); }
void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }
void gemm_reducescatter_f16(const ArgsH& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::ring
