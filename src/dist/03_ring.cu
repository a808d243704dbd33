// Rung 3, ring: what it adds over rung 2 (chunked_overlap): the collective matmul of XLA and
// cuBLASMp. Every transfer goes to a ring neighbour only (ncclSend to rank r+1 and ncclRecv from
// rank r-1, grouped with ncclGroupStart/End), world-1 steps, and the chunk in hand is multiplied
// while the next one moves. Rung 2 exchanges with every rank and keeps a slot per rank; the ring
// needs links to the neighbours only (any topology NCCL's rings run on: PCIe, several hosts) and two
// chunk slots of workspace, whatever the world size; and its reduce-scatter sums as it goes, so no
// NCCL reduction kernel runs: the add is the gemm's own epilogue (beta = 1).
//
// allgather_gemm: at step j rank r holds rank (r-j)'s rows (its own A_local at step 0, read in
// place), multiplies them into their rows of C on the compute stream, and meanwhile sends them on to
// rank r+1 and receives rank (r-j-1)'s from rank r-1 into the other of two slots (double buffered:
// step j's receive waits, by event, for the product that read that slot at step j-1; step 1's
// receive overwrites nothing still read, as step 0 reads A_local). Bound: each step takes
// max(one chunk's transfer, one chunk's product); with the product the longer (the issue's shapes),
// the time is the world products of m rows, as in rung 2, with no exposed transfer beyond the
// first chunk's (which hides under the own product). Same SM caveat as rung 2: NCCL's kernels need
// SMs, which a persistent gemm kernel does not leave.
//
// gemm_reducescatter: the classic ring reduce-scatter fused with the product. At step j (j < world-1)
// rank r computes the fp32 partial of block b = (r-j-1) mod world (the rows of rank b) with cuBLAS
// (dist::detail::partial_gemm), with beta = 1 into the running sum it received from rank r-1 at step
// j-1 (step 0: beta = 0), and sends it to rank r+1; after world-1 steps the sum arriving at rank r is
// that of its own block from every other rank, to which it adds its own partial (beta = 1 again)
// before the epilogue stream writes C_local (alpha/beta and the one rounding, scale.cu). Each block
// is cut into pieces (pieces_of: >= 8 MiB of fp32, at most 8), each piece sent as soon as its product
// is done, so the transfer of piece p overlaps the product of piece p+1, and the next step's piece p
// starts as soon as it has landed. Two running-sum slots (m/world x n fp32 each; one with one rank)
// alternate between the steps: step j receives into the slot step j-1 sent from (stream order on
// the communication stream keeps that send done first). Bound: max(product, world-1 block transfers)
// plus one piece's transfer and product at the ends. fp32 partials and sums as rung 1, summed in
// ring order (the result differs from rung 1's by fp32 rounding only).
//
// Prediction (2 H100, bf16; issue 37 measured all-gather 560 us, product 1,430 us, one after the
// other 2,050 us at M = 16384, k = 8192, n_local = 4096): with 2 ranks the ring is rung 2's single
// exchange, allgather_gemm about 1,500-1,600 us like rung 2; it should pull ahead of rung 2 only
// where pairwise exchanges cross slower links. gemm_reducescatter at m = 16384, k_local = 4096,
// n = 8192: the peer's block (715 us of product) streamed in 8 pieces, its 256 MiB fp32 transfer
// (about 1,100 us at 240 GB/s, an estimate) under that product and the own block's, which adds into
// the pieces as they land: about 1,500-1,650 us (rung 1: about 2,600 us).
// Measured on 2 H200 (dd3d148, as rung 2): allgather_gemm 1.401 ms (1.30x rung 1, level with rung
// 2); gemm_reducescatter 2.381 ms (1.11x rung 1, slower than rung 2's 2.094: the running sums'
// fp32 pieces move one neighbour at a time). A second run: 1.363 and 2.358 ms.
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
