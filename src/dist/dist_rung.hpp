// The contract between the dist dispatcher (dist.cpp) and each rung of the dist ladder: one list
// of rungs (ladder.cpp) for both operations; a rung fills the entry points of the operations and
// element types it does, and variants(Op::allgather_gemm) / variants(Op::gemm_reducescatter) list
// the rungs with that operation's entries. A new rung is its numbered file plus one line in
// ladder.cpp.
#pragma once

#include <rungs/dist.hpp>

#include "core/errors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rungs::dist::detail {

[[noreturn]] void throw_nccl(ncclResult_t res, const char* what, const char* file, int line);
// rungs::Unsupported naming `rung`: "needs NCCL 2.28 or newer <what>; this build has NCCL <version>"
// (the copy-engine rungs built with an older NCCL).
[[noreturn]] void needs_nccl_2_28(const char* rung, const std::string& what);

// The side streams of the overlapping rungs (Workspace::side_stream, Fork): the products, the
// transfers (NCCL's kernels; the device's greatest stream priority, so they take SMs as soon as a
// product's blocks retire) and the epilogues (alpha/beta and the rounding of the rows that landed).
enum SideStream : int { kCompute = 0, kComm = 1, kEpilogue = 2, kSideStreams = 3 };

// What a rung keeps per communicator beside memory (rung 4: a communicator split from the caller's
// and its registered buffer), made by the rung on its first call, destroyed with the workspace
// after the workspace's memory is freed and its side streams destroyed.
struct RungState {
  virtual ~RungState() = default;
};

// The workspace of one communicator (dist.cpp keeps one per ncclComm_t): one device allocation on
// the communicator's device, grown as needed, reused by the next calls. A rung asks for the bytes
// it needs and carves them up itself; the contents are not kept between calls. It also keeps the
// side streams and events of the overlapping rungs, created once and reused by every call.
class Workspace {
 public:
  explicit Workspace(int device) : device_(device) {}
  ~Workspace();  // frees the memory, then destroys the side streams and events
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  // At least `bytes` of device memory (256-byte aligned). Growing waits for the last call's work
  // that used the old allocation (the event the dispatcher records after each call), then frees
  // it. A rung asks once per call, for everything it needs: a second, larger request in the same
  // call would free memory that the call's own enqueued work still uses. Not for a stream being
  // captured (the dispatcher refuses capture).
  void* get(size_t bytes);
  // The dispatcher records this after each call on the call's stream: the old allocation's work.
  void used_on(cudaStream_t stream);
  size_t bytes() const { return bytes_; }
  // Waits for the work that used the memory and frees it.
  void free();
  // Side stream i (SideStream), non-blocking, created on first use on the communicator's device
  // (the current one: the dispatcher guarantees it) and kept until the workspace is destroyed.
  cudaStream_t side_stream(int i);
  // Event i of a pool kept with the workspace (timing off), created on first use. Reusing one in
  // the next call is safe: a wait takes the event's state when it is enqueued.
  cudaEvent_t event(size_t i);
  // The state rung `rung` keeps for this communicator (null until the rung makes it).
  std::unique_ptr<RungState>& rung_state(int rung) { return rung_states_[rung]; }

 private:
  int device_;
  void* p_ = nullptr;
  size_t bytes_ = 0;
  cudaEvent_t last_use_ = nullptr;
  cudaStream_t side_[kSideStreams] = {};
  std::vector<cudaEvent_t> events_;
  std::map<int, std::unique_ptr<RungState>> rung_states_;
};

// The side streams of one call, forked from the caller's stream: they start after the work
// enqueued on it so far. join() makes the caller's stream wait for everything enqueued on them, so
// the call stays one piece of the caller's stream (the dispatcher's workspace event and the
// caller's next work come after it). The destructor joins when join() was not reached (an
// exception on the way), so the caller's stream is never ahead of the side streams' work. Events
// 0..kSideStreams of the workspace's pool are the fork's; a rung's own are event(i), numbered past.
class Fork {
 public:
  Fork(Workspace& ws, cudaStream_t caller);
  ~Fork();
  Fork(const Fork&) = delete;
  Fork& operator=(const Fork&) = delete;
  cudaStream_t stream(SideStream i) const { return side_[i]; }
  cudaEvent_t event(size_t i) { return ws_.event(kSideStreams + 1 + i); }
  // Records event(i) on stream s (what s has enqueued so far); makes stream s wait for event(i)'s
  // last record; order(i, from, to): both, `to` waits for what `from` has enqueued so far.
  void record(size_t i, cudaStream_t s);
  void wait(size_t i, cudaStream_t s);
  void order(size_t i, cudaStream_t from, cudaStream_t to) {
    record(i, from);
    wait(i, to);
  }
  void join();

 private:
  Workspace& ws_;
  cudaStream_t caller_;
  cudaStream_t side_[kSideStreams] = {};
  bool joined_ = false;
};

// How many pieces the pipelined rungs cut `rows` rows of `row_bytes` bytes into (one transfer and
// one product per piece): pieces of at least `min_piece_bytes` (kMinPieceBytes; rung 4's
// all-gather kMinCePieceBytes), at most kMaxPieces, at most `rows`, at least 1. The same on every rank for the same agreed sizes. force_pieces(p) (p > 0)
// forces min(p, rows) pieces in every call of this process (the tests, to reach the pipelines on
// small shapes; rungs bench --pieces, to measure the rule); 0 goes back to the rule.
constexpr int64_t kMinPieceBytes = int64_t{8} << 20;
// Rung 4's all-gather: each copy-engine collective costs about 0.1 ms more beside the products than
// its bytes (docs/dist.md, "Pieces"), so its pieces are at least 128 MiB.
constexpr int64_t kMinCePieceBytes = int64_t{128} << 20;
constexpr int kMaxPieces = 8;
// Rung 7's pieces: at most 4 (8 measured slower for both operations on 4 H100; docs/dist.md).
constexpr int kOneSidedMaxPieces = 4;
// Rungs 8's and 9's reduce-scatter: at most 2 pieces a destination's block (1 or 4 measured slower at
// k_local 2048 on 4 H200; docs/dist.md): fewer, larger products, and one piece's sum after the last.
constexpr int kOwnLastMaxPieces = 2;
int pieces_of(int64_t rows, int64_t row_bytes, int64_t min_piece_bytes = kMinPieceBytes, int max_pieces = kMaxPieces);
void force_pieces(int pieces);
// Rows [first, last) of piece p of `rows` rows cut into `pieces` (the first pieces one row shorter
// where they do not divide).
inline int64_t piece_begin(int64_t rows, int pieces, int p) { return rows * p / pieces; }

// One validated call. The dispatcher guarantees before a rung sees it: every rank passed the same
// shape and variant (checked collectively) and its own arguments are valid (sizes >= 0, ld's large
// enough, pointers non-null where read or written); the current device is comm's; the stream is
// not being captured. The rung enqueues everything on `stream` (or on streams that join it before
// it returns) and may use `ws`. Same BLAS semantics as gemm: beta == 0 means C is not read.
//
// allgather_gemm: m = m_local (rows of A per rank), n = n_local, k; C is world*m x n.
// gemm_reducescatter: m = the full m (a multiple of world), n, k = k_local; C is m/world x n.
template <typename T>
struct ArgsT {
  int64_t m, n, k;
  float alpha;
  const T* A;
  int64_t lda;
  const T* B;
  int64_t ldb;
  float beta;
  T* C;
  int64_t ldc;
  ncclComm_t comm;
  int rank, world;
  cudaStream_t stream;
  Workspace* ws;
};
using ArgsBF = ArgsT<__nv_bfloat16>;
using ArgsH = ArgsT<__half>;
using RunBF = void (*)(const ArgsBF&);
using RunH = void (*)(const ArgsH&);

// allgather_gemm's product of `rows` rows of A (lda apart) with this rank's B into C (rows x n, the
// call's ldc): C = alpha A B_r + beta C through the library's gemm (auto), on `stream`.
template <typename T>
void rank_product(const ArgsT<T>& a, int64_t rows, const T* A, int64_t lda, T* C, cudaStream_t stream) {
  Options o;
  o.stream = stream;
  gemm(Trans::N, Trans::N, rows, a.n, a.k, a.alpha, A, lda, a.B, a.ldb, a.beta, C, a.ldc, o);
}

struct Rung {
  const char* name;
  const char* parent;  // the rung this one builds on ("" for the baseline)
  const char* summary;
  int min_sm;     // major*10+minor
  bool baseline;  // what users write today (ncclAllGather / ncclReduceScatter beside the best gemm)
  RunBF allgather_gemm_bf16;
  RunH allgather_gemm_f16;
  RunBF gemm_reducescatter_bf16;
  RunH gemm_reducescatter_f16;
  // allgather_gemm's C is rungs::gemm's (variant auto) of the gathered A and B_r bit for bit (the
  // same products summed in the same order); the tests compare within 16-bit tolerance otherwise.
  bool allgather_bitwise = false;
};

// The ladder in order; index + 1 = rung number (file prefix).
const std::vector<Rung>& ladder();
// The ladder index `auto` runs for these agreed sizes and element type (so every rank picks the
// same rung): allgather_gemm (m = m_local, n = n_local, k) or gemm_reducescatter (m, n, k =
// k_local), bf16 or f16, on `world` ranks. dist.cpp says which measurement backs each choice.
size_t auto_rung(bool allgather, bool bf16, int64_t m, int64_t n, int64_t k, int world);
// variants(op) for the two dist operations: the rungs with that operation's entries.
std::vector<VariantInfo> variants(Op op);

// The element type's NCCL type.
template <typename T>
ncclDataType_t nccl_type();
template <>
inline ncclDataType_t nccl_type<__nv_bfloat16>() { return ncclBfloat16; }
template <>
inline ncclDataType_t nccl_type<__half>() { return ncclFloat16; }

// While alive, an NCCL group is open; the destructor closes it (ncclGroupEnd) when end() was not
// reached, so a rung that throws between ncclGroupStart and ncclGroupEnd leaves no group open.
class Group {
 public:
  Group();
  ~Group();
  void end();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  bool open_ = false;
};

// C (rows x cols, ldc) = alpha * P (fp32, ldp) + beta * C, rounded once to T; beta == 0: C not read.
void scale_into(int64_t rows, int64_t cols, float alpha, const float* P, int64_t ldp, float beta, __nv_bfloat16* C,
                int64_t ldc, cudaStream_t stream);
void scale_into(int64_t rows, int64_t cols, float alpha, const float* P, int64_t ldp, float beta, __half* C,
                int64_t ldc, cudaStream_t stream);
// The same from a bf16 P (rung 5's sums).
void scale_into(int64_t rows, int64_t cols, float alpha, const __nv_bfloat16* P, int64_t ldp, float beta,
                __nv_bfloat16* C, int64_t ldc, cudaStream_t stream);
// C = alpha * (P_0 + ... + P_{parts-1}) + beta * C, P_q at P + q * part_stride, added in that order in
// fp32, one rounding (rung 4's sums of the partials its copy engines brought).
void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const float* P, int64_t ldp,
              float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream);
void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const float* P, int64_t ldp,
              float beta, __half* C, int64_t ldc, cudaStream_t stream);
// The same from bf16 partials (rung 6), still added in fp32 and rounded once.
void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const __nv_bfloat16* P,
              int64_t ldp, float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream);

// The fp32 partial products of the reduce-scatter rungs through cuBLAS (16-bit inputs, fp32
// accumulation and output: rungs::gemm writes 16-bit C only), `batch` row blocks in one call: for
// b < batch, P_b (rows x n, ldp) = A_b (rows x k, lda) * B (k x n, ldb), plus P_b when `accumulate`,
// with A_b = A + b*strideA and P_b = P + b*strideP (elements). k == 0: P_b = 0, or unchanged when
// accumulating. Sizes or ld's past cuBLAS's 32-bit ints: Unsupported naming `rung`.
void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __nv_bfloat16* A, int64_t lda,
                  int64_t strideA, const __nv_bfloat16* B, int64_t ldb, bool accumulate, float* P, int64_t ldp,
                  int64_t strideP, int batch, cudaStream_t stream);
void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __half* A, int64_t lda, int64_t strideA,
                  const __half* B, int64_t ldb, bool accumulate, float* P, int64_t ldp, int64_t strideP, int batch,
                  cudaStream_t stream);
// gemm_reducescatter on one rank (nothing to move): its fp32 partial in the workspace, then
// alpha, beta and one rounding into C, on the call's stream (rungs 4, 7 and 8).
template <typename T>
void one_rank_reducescatter(const ArgsT<T>& a, const char* rung) {
  float* p = static_cast<float*>(a.ws->get(static_cast<size_t>(a.m) * static_cast<size_t>(a.n) * sizeof(float)));
  partial_gemm(rung, a.m, a.n, a.k, a.A, a.lda, 0, a.B, a.ldb, false, p, a.n, 0, 1, a.stream);
  scale_into(a.m, a.n, a.alpha, p, a.n, a.beta, a.C, a.ldc, a.stream);
}

// C_b = alpha A_b B + beta C_b for b < batch, A_b = A + b * strideA, C_b = C + b * strideC (rows x n
// each, row-major): one strided-batched cuBLAS call (fp32 accumulation), rung 4's products of the
// rows several ranks sent in one piece.
void batched_product(int64_t rows, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
                     int64_t strideA, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
                     int64_t strideC, int batch, cudaStream_t stream);
void batched_product(int64_t rows, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda, int64_t strideA,
                     const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, int64_t strideC, int batch,
                     cudaStream_t stream);
// The same, each partial rounded once to bf16 (rung 5), never accumulating.
void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __nv_bfloat16* A, int64_t lda,
                  int64_t strideA, const __nv_bfloat16* B, int64_t ldb, __nv_bfloat16* P, int64_t ldp, int64_t strideP,
                  int batch, cudaStream_t stream);

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
// The copy-engine rungs' state per communicator (ce_window.cpp; rungs 4 and 6 share one): a
// communicator split once from the caller's with CTAPolicy = NCCL_CTA_POLICY_ZERO and a buffer from
// ncclMemAlloc registered with it as a symmetric window (NCCL_WIN_COLL_SYMMETRIC), on which NCCL 2.28
// runs ncclAllGather and ncclAlltoAll by copy engines when all ranks share one NVLink domain. The
// window grows like the workspace: after the last call's work (`last_use`, which the rung records
// on the caller's stream after its call), and on every rank in the same call (the sizes agree), as
// registration is collective.
struct CeWindow : RungState {
  ncclComm_t comm = nullptr;
  void* buf = nullptr;
  size_t bytes = 0;
  ncclWindow_t win = nullptr;
  cudaEvent_t last_use = nullptr;
  ~CeWindow() override;
  void ensure(ncclComm_t parent, int rank, size_t need);
};
// This communicator's window, split and grown to at least `bytes` on first use.
CeWindow& ce_window(Workspace& ws, ncclComm_t parent, int rank, size_t bytes);
// A buffer registered with comm as a symmetric window (ncclMemAlloc, ncclCommWindowRegister)
// grown to at least `need` bytes (2 MiB grains), after `last_use` (the last call's work on it):
// the old one deregistered and freed, a new one allocated and registered. Registration is
// collective: every rank grows in the same call. Returns whether it grew (the addresses changed).
bool grow_window(ncclComm_t comm, size_t need, cudaEvent_t last_use, void*& buf, size_t& bytes, ncclWindow_t& win);
#endif

// Rung 1, 01_nccl_then_gemm.cu.
namespace nccl_then_gemm {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace nccl_then_gemm

// Rung 2, 02_chunked_overlap.cu.
namespace chunked_overlap {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace chunked_overlap

// Rung 3, 03_ring.cu.
namespace ring {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace ring

// Rung 4, 04_copy_engine.cu.
namespace copy_engine {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace copy_engine

// Rung 5, 05_narrow_partials.cu (gemm_reducescatter, bf16 only).
namespace narrow_partials {
void gemm_reducescatter_bf16(const ArgsBF&);
}  // namespace narrow_partials
// Rung 6, 06_narrow_copy_engine.cu (gemm_reducescatter, bf16 only).
namespace narrow_copy_engine {
void gemm_reducescatter_bf16(const ArgsBF&);
}  // namespace narrow_copy_engine

// Rung 7, 07_one_sided.cu.
namespace one_sided {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace one_sided

// Rung 8, 08_own_last.cu.
namespace own_last {
void allgather_gemm_bf16(const ArgsBF&);
void allgather_gemm_f16(const ArgsH&);
void gemm_reducescatter_bf16(const ArgsBF&);
void gemm_reducescatter_f16(const ArgsH&);
}  // namespace own_last

// Rung 9, 09_narrow_own_last.cu (gemm_reducescatter, bf16 only).
namespace narrow_own_last {
void gemm_reducescatter_bf16(const ArgsBF&);
}  // namespace narrow_own_last

}  // namespace rungs::dist::detail

#define RUNGS_NCCL(call)                                                                             \
  do {                                                                                               \
    ncclResult_t rungs_nccl_res_ = (call);                                                           \
    if (rungs_nccl_res_ != ncclSuccess)                                                              \
      ::rungs::dist::detail::throw_nccl(rungs_nccl_res_, #call, __FILE__, __LINE__);                 \
  } while (0)
