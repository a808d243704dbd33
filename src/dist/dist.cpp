// rungs::dist's dispatcher: the argument checks (each rank's own, then the collective agreement
// check), the workspace per communicator, and the call of the chosen rung.
#include "dist/dist_rung.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <type_traits>

namespace rungs::dist {

namespace detail {

void throw_nccl(ncclResult_t res, const char* what, const char* file, int line) {
  std::ostringstream os;
  os << "NCCL error " << static_cast<int>(res) << " (" << ncclGetErrorString(res) << ") in " << what << " at "
     << file << ":" << line;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
  const char* last = ncclGetLastError(nullptr);  // NCCL's own detail, where it keeps one
  if (last != nullptr && *last != '\0') os << ": " << last;
#endif
  throw Error(os.str());
}

void needs_nccl_2_28(const char* rung, const std::string& what) {
  rungs::detail::unsupported(rung, "needs NCCL 2.28 or newer " + what + "; this build has NCCL " +
                                       std::to_string(NCCL_VERSION_CODE));
}

Workspace::~Workspace() {
  try {
    free();
  } catch (...) {
    // A destructor cannot report a failed free: the memory goes with the context.
  }
  // free() waited for the last call's work, which the side streams joined; errors are ignored
  // for the same reason.
  for (cudaStream_t& s : side_) {
    if (s != nullptr) (void)cudaStreamDestroy(s);
    s = nullptr;
  }
  for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
  events_.clear();
  rung_states_.clear();  // each waits for its own last use
}

cudaStream_t Workspace::side_stream(int i) {
  if (side_[i] == nullptr) {
    int least = 0, greatest = 0;
    RUNGS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    RUNGS_CUDA(cudaStreamCreateWithPriority(&side_[i], cudaStreamNonBlocking, i == kComm ? greatest : least));
  }
  return side_[i];
}

cudaEvent_t Workspace::event(size_t i) {
  while (events_.size() <= i) {
    cudaEvent_t e = nullptr;
    RUNGS_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    events_.push_back(e);
  }
  return events_[i];
}

Fork::Fork(Workspace& ws, cudaStream_t caller) : ws_(ws), caller_(caller) {
  for (int i = 0; i < kSideStreams; ++i) side_[i] = ws.side_stream(i);
  cudaEvent_t start = ws.event(0);
  RUNGS_CUDA(cudaEventRecord(start, caller));
  for (cudaStream_t s : side_) RUNGS_CUDA(cudaStreamWaitEvent(s, start, 0));
}

void Fork::record(size_t i, cudaStream_t s) { RUNGS_CUDA(cudaEventRecord(event(i), s)); }
void Fork::wait(size_t i, cudaStream_t s) { RUNGS_CUDA(cudaStreamWaitEvent(s, event(i), 0)); }

void Fork::join() {
  joined_ = true;
  for (int i = 0; i < kSideStreams; ++i) {
    cudaEvent_t done = ws_.event(1 + static_cast<size_t>(i));
    RUNGS_CUDA(cudaEventRecord(done, side_[i]));
    RUNGS_CUDA(cudaStreamWaitEvent(caller_, done, 0));
  }
}

Fork::~Fork() {
  if (joined_) return;
  try {
    join();
  } catch (...) {
    // Already on the way out of an error: the first one is the one reported.
  }
}

namespace {
std::atomic<int> g_forced_pieces{0};
}

int pieces_of(int64_t rows, int64_t row_bytes, int64_t min_piece_bytes, int max_pieces) {
  if (rows <= 1) return 1;
  int64_t p = g_forced_pieces.load();
  if (p <= 0) {
    const int64_t bytes = rows * row_bytes;
    p = std::min<int64_t>(max_pieces, bytes / min_piece_bytes);
  }
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(p, rows)));
}

// auto, one rule per row (docs/bench/dist.md, allgather_gemm and gemm_reducescatter, H100 and H200):
//  - fewer per-rank multiply-adds than measured (2^39 on 2 ranks, 2^38 on more): rung 1, whose gemm is
//    the single-GPU auto's bit for bit;
//  - allgather_gemm: rung 8 (own_last), 1.17-1.69x rung 1 on 2 and 4 GPUs, the fastest row or level;
//  - gemm_reducescatter, f16: rung 8 (own_last), one rounding (rungs 5, 6 and 9 round the partials);
//  - gemm_reducescatter, bf16: rung 9 (narrow_own_last), 1.39-2.21x rung 1 on the H200 against rung
//    8's 1.36-1.59x: world + 1 roundings, as tensor-parallel layers round (PyTorch's: 2 * world).
// Rungs 4, 7, 8 and 9 need NCCL 2.28 (copy-engine collectives; rungs 7 to 9 its device API too):
// without the device API rung 4 takes their place (one rounding in bf16 too), with an older NCCL
// rung 2 takes all of them.
size_t auto_rung(bool allgather, bool bf16, int64_t m, int64_t n, int64_t k, int world) {
  const double per_rank = (allgather ? static_cast<double>(world) * static_cast<double>(m) : static_cast<double>(m)) *
                          static_cast<double>(n) * static_cast<double>(k);
  constexpr double kMinWork2Ranks = 549755813888.0;          // 2^39 multiply-adds per rank
  constexpr double kMinWorkMoreRanks = kMinWork2Ranks / 2.0;  // 2^38
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0) && __has_include(<nccl_device.h>)
  constexpr size_t kOwnLast = 7, kNarrowOwnLast = 8;
#elif NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  constexpr size_t kOwnLast = 3, kNarrowOwnLast = 3;  // rung 4
#else
  constexpr size_t kOwnLast = 1, kNarrowOwnLast = 1;  // rung 2
#endif
  if (world < 2) return 0;
  if (per_rank < (world == 2 ? kMinWork2Ranks : kMinWorkMoreRanks)) return 0;
  if (allgather) return kOwnLast;
  return bf16 ? kNarrowOwnLast : kOwnLast;
}

void force_pieces(int pieces) { g_forced_pieces.store(pieces > 0 ? pieces : 0); }

void Workspace::free() {
  if (last_use_ != nullptr) {
    RUNGS_CUDA(cudaEventSynchronize(last_use_));
    RUNGS_CUDA(cudaEventDestroy(last_use_));
    last_use_ = nullptr;
  }
  if (p_ != nullptr) {
    void* p = p_;
    p_ = nullptr;
    bytes_ = 0;
    RUNGS_CUDA(cudaFree(p));
  }
}

void* Workspace::get(size_t bytes) {
  bytes = (bytes + 255) / 256 * 256;
  if (bytes <= bytes_) return p_;
  int prev = 0;
  RUNGS_CUDA(cudaGetDevice(&prev));
  if (prev != device_) RUNGS_CUDA(cudaSetDevice(device_));
  struct Restore {
    int dev, prev;
    ~Restore() {
      if (dev != prev) cudaSetDevice(prev);
    }
  } restore{device_, prev};
  free();
  RUNGS_CUDA(cudaMalloc(&p_, bytes));
  bytes_ = bytes;
  return p_;
}

void Workspace::used_on(cudaStream_t stream) {
  if (p_ == nullptr) return;
  if (last_use_ == nullptr) RUNGS_CUDA(cudaEventCreateWithFlags(&last_use_, cudaEventDisableTiming));
  RUNGS_CUDA(cudaEventRecord(last_use_, stream));
}

Group::Group() {
  RUNGS_NCCL(ncclGroupStart());
  open_ = true;
}
Group::~Group() {
  if (open_) (void)ncclGroupEnd();
}
void Group::end() {
  open_ = false;
  RUNGS_NCCL(ncclGroupEnd());
}

}  // namespace detail

namespace {

using detail::ArgsT;
using detail::Rung;
using detail::Workspace;
using rungs::detail::fail_arg;

enum class Kind { allgather_gemm, gemm_reducescatter };

// Per communicator: the rungs' workspace, the agreement check's small buffers and whether it runs.
struct CommState {
  explicit CommState(int dev) : device(dev), ws(dev) {}
  ~CommState() {
    if (check_dev != nullptr) cudaFree(check_dev);
    if (check_host != nullptr) cudaFreeHost(check_host);
  }
  int device;
  Workspace ws;
  bool check = true;
  int64_t* check_dev = nullptr;
  int64_t* check_host = nullptr;
};

std::mutex g_mu;
std::map<ncclComm_t, std::unique_ptr<CommState>>& states() {
  static auto* m = new std::map<ncclComm_t, std::unique_ptr<CommState>>();  // outlives static destructors
  return *m;
}

// A communicator is used by one call at a time (NCCL's rule), so its state is used unlocked once found.
CommState& state_of(ncclComm_t comm, int device) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& m = states();
  auto it = m.find(comm);
  // A communicator destroyed without release() whose address came back for a new one on another
  // device: the old state is of no use to it.
  if (it != m.end() && it->second->device != device) m.erase(it), it = m.end();
  if (it == m.end()) it = m.emplace(comm, std::make_unique<CommState>(device)).first;
  return *it->second;
}

template <typename T>
struct TypeCode;
template <>
struct TypeCode<__nv_bfloat16> {
  static constexpr int64_t code = 1;
  static constexpr const char* name = "bf16";
};
template <>
struct TypeCode<__half> {
  static constexpr int64_t code = 2;
  static constexpr const char* name = "f16";
};

template <typename T>
auto entry(const Rung& r, Kind kind) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return kind == Kind::allgather_gemm ? r.allgather_gemm_bf16 : r.gemm_reducescatter_bf16;
  else
    return kind == Kind::allgather_gemm ? r.allgather_gemm_f16 : r.gemm_reducescatter_f16;
}

void check_ld(const char* fn, const char* arg, int64_t ld, int64_t row_len) {
  const int64_t need = row_len > 1 ? row_len : 1;
  if (ld < need) fail_arg(fn, arg, ld, ">= max(1, " + std::to_string(row_len) + ")");
}

// Each rank's own checks, before any NCCL call: sizes, ld's, pointers, math, the variant's name.
// Returns the variant's index in the ladder (0 = auto, else rung number).
template <typename T>
int64_t check_local(Kind kind, const char* fn, int64_t m, int64_t n, int64_t k, float alpha, const T* A,
                    int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc, const Options& opts) {
  const bool ag = kind == Kind::allgather_gemm;
  if (m < 0) fail_arg(fn, ag ? "m_local" : "m", m, ">= 0");
  if (n < 0) fail_arg(fn, ag ? "n_local" : "n", n, ">= 0");
  if (k < 0) fail_arg(fn, ag ? "k" : "k_local", k, ">= 0");
  check_ld(fn, "lda", lda, k);
  check_ld(fn, "ldb", ldb, n);
  check_ld(fn, "ldc", ldc, n);
  if (opts.math != Math::fp32)
    throw Error(std::string("rungs::") + fn + ": invalid argument opts.math (must be Math::fp32: math modes apply "
                "to float inputs only)");
  rungs::detail::refuse_epilogue(fn, opts);
  const char* dev = "a device pointer";
  if (ag) {
    // A_local goes to every rank, whatever this rank's alpha; B and C are this rank's alone.
    if (m > 0 && k > 0 && A == nullptr) fail_arg(fn, "A_local", "nullptr", std::string(dev) + " (m_local*k > 0)");
    if (m > 0 && n > 0 && C == nullptr) fail_arg(fn, "C", "nullptr", std::string(dev) + " (m_local*n_local > 0)");
    if (m > 0 && n > 0 && k > 0 && alpha != 0.0f && B == nullptr)
      fail_arg(fn, "B", "nullptr", std::string(dev) + " (k > 0, alpha != 0)");
  } else {
    // This rank's partial product feeds the other ranks' rows, whatever this rank's alpha.
    if (m > 0 && n > 0 && k > 0 && A == nullptr) fail_arg(fn, "A", "nullptr", std::string(dev) + " (m*n*k_local > 0)");
    if (m > 0 && n > 0 && k > 0 && B == nullptr) fail_arg(fn, "B", "nullptr", std::string(dev) + " (m*n*k_local > 0)");
    if (m > 0 && n > 0 && C == nullptr) fail_arg(fn, "C_local", "nullptr", std::string(dev) + " (m*n > 0)");
  }
  if (opts.variant == "auto") return 0;
  const auto& l = detail::ladder();
  std::ostringstream known;
  known << "auto";
  for (size_t i = 0; i < l.size(); ++i) {
    if (entry<__nv_bfloat16>(l[i], kind) == nullptr && entry<__half>(l[i], kind) == nullptr) continue;
    // A rung of this operation that does not take T (rung 5 with f16) passes here: after the
    // agreement every rank throws Unsupported alike.
    if (opts.variant == l[i].name) return static_cast<int64_t>(i) + 1;
    known << ", " << l[i].name;
  }
  throw Error(std::string("rungs::") + fn + ": unknown variant \"" + opts.variant + "\" (known: " + known.str() +
              ")");
}

// The agreement check: one ncclAllReduce (max) of the fields and their negations, so every rank
// learns the largest and the smallest value each rank passed, then a wait for it. Every rank
// throws the same way when they disagree or any rank rejected its own arguments.
constexpr int kFields = 7;
const char* const kFieldNames[2][kFields] = {
    {"(own arguments)", "operation", "element type", "variant", "m_local", "n_local", "k"},
    {"(own arguments)", "operation", "element type", "variant", "m", "n", "k_local"}};

void agree(CommState& st, Kind kind, const char* fn, ncclComm_t comm, int rank, cudaStream_t stream,
           const int64_t (&f)[kFields], const std::string& own_error) {
  constexpr int kCount = 2 * kFields + 1;
  if (st.check_dev == nullptr) RUNGS_CUDA(cudaMalloc(&st.check_dev, kCount * sizeof(int64_t)));
  if (st.check_host == nullptr) RUNGS_CUDA(cudaMallocHost(&st.check_host, kCount * sizeof(int64_t)));
  int64_t* h = st.check_host;
  for (int i = 0; i < kFields; ++i) {
    h[i] = f[i];
    h[kFields + i] = -f[i];
  }
  h[2 * kFields] = own_error.empty() ? -1 : rank;  // max: a rank that rejected its arguments
  RUNGS_CUDA(cudaMemcpyAsync(st.check_dev, h, kCount * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
  RUNGS_NCCL(ncclAllReduce(st.check_dev, st.check_dev, kCount, ncclInt64, ncclMax, comm, stream));
  RUNGS_CUDA(cudaMemcpyAsync(h, st.check_dev, kCount * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  ncclResult_t async = ncclSuccess;
  RUNGS_NCCL(ncclCommGetAsyncError(comm, &async));
  if (async != ncclSuccess) detail::throw_nccl(async, "the agreement check's ncclAllReduce", __FILE__, __LINE__);
  if (!own_error.empty())
    throw Error(own_error + " (the other ranks were told and threw too; no rank ran the call)");
  if (h[2 * kFields] >= 0) {
    std::ostringstream os;
    os << "rungs::" << fn << ": rank " << h[2 * kFields]
       << " rejected its own arguments (its error says which); no rank ran the call";
    throw Error(os.str());
  }
  std::ostringstream os;
  for (int i = 1; i < kFields; ++i) {
    const int64_t hi = h[i], lo = -h[kFields + i];
    if (hi != lo)
      os << (os.tellp() > 0 ? "; " : "") << kFieldNames[kind == Kind::allgather_gemm ? 0 : 1][i] << " from " << lo
         << " to " << hi << " (this rank: " << f[i] << ")";
  }
  if (os.tellp() > 0)
    throw Error(std::string("rungs::") + fn + ": the ranks disagree on " + os.str() +
                "; every rank must pass the same sizes, element type and variant (no rank ran the call)");
}

template <typename T>
void dispatch(Kind kind, int64_t m, int64_t n, int64_t k, float alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, float beta, T* C, int64_t ldc, ncclComm_t comm, const Options& opts) {
  const char* fn = kind == Kind::allgather_gemm ? "dist::allgather_gemm" : "dist::gemm_reducescatter";
  // Each rank's own checks; with a communicator, a failure is reported to the others through the
  // agreement check rather than leaving them waiting in it.
  std::string own_error;
  int64_t variant = 0;
  try {
    variant = check_local(kind, fn, m, n, k, alpha, A, lda, B, ldb, C, ldc, opts);
  } catch (const Error& e) {
    own_error = e.what();
  }
  if (comm == nullptr) {
    if (!own_error.empty()) throw Error(own_error);
    fail_arg(fn, "comm", "nullptr", "an initialized ncclComm_t");
  }
  int world = 0, rank = 0, comm_dev = 0, dev = 0;
  RUNGS_NCCL(ncclCommCount(comm, &world));
  RUNGS_NCCL(ncclCommUserRank(comm, &rank));
  RUNGS_NCCL(ncclCommCuDevice(comm, &comm_dev));
  RUNGS_CUDA(cudaGetDevice(&dev));
  if (dev != comm_dev) {
    std::ostringstream os;
    os << "rungs::" << fn << ": the current device is " << dev << " but comm's is " << comm_dev
       << " (cudaSetDevice to the communicator's device before the call)";
    throw Error(os.str());
  }
  const cudaStream_t stream = opts.stream;
  rungs::detail::refuse_capture(stream, fn, "the call waits for its agreement check and may grow its workspace");
  if (own_error.empty() && kind == Kind::gemm_reducescatter && m % world != 0) {
    std::ostringstream os;
    os << "rungs::" << fn << ": invalid argument m = " << m << " (must be a multiple of the world size " << world
       << ")";
    own_error = os.str();
  }
  CommState& st = state_of(comm, comm_dev);
  if (st.check) {
    const int64_t f[kFields] = {own_error.empty() ? 1 : 0, static_cast<int64_t>(kind), TypeCode<T>::code, variant,
                                m, n, k};
    agree(st, kind, fn, comm, rank, stream, f, own_error);
  } else if (!own_error.empty()) {
    throw Error(own_error);
  }
  if (m == 0 || n == 0) return;  // C is empty on every rank (the sizes agree)
  // auto: from the agreed sizes only, so every rank picks the same rung (detail::auto_rung).
  const bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  const Rung& r = detail::ladder()[variant == 0 ? detail::auto_rung(kind == Kind::allgather_gemm, bf16, m, n, k, world)
                                                : static_cast<size_t>(variant - 1)];
  const auto run = entry<T>(r, kind);
  if (run == nullptr) rungs::detail::unsupported(r.name, std::string("does not do ") + TypeCode<T>::name);
  rungs::detail::require_sm(fn, r.name, r.min_sm);
  const ArgsT<T> args{m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, comm, rank, world, stream, &st.ws};
  try {
    run(args);
  } catch (...) {
    try {
      st.ws.used_on(stream);
    } catch (...) {
    }
    throw;
  }
  st.ws.used_on(stream);
}

}  // namespace

void allgather_gemm(int64_t m_local, int64_t n_local, int64_t k, float alpha, const __nv_bfloat16* A_local,
                    int64_t lda, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
                    ncclComm_t comm, const Options& opts) {
  dispatch(Kind::allgather_gemm, m_local, n_local, k, alpha, A_local, lda, B, ldb, beta, C, ldc, comm, opts);
}
void allgather_gemm(int64_t m_local, int64_t n_local, int64_t k, float alpha, const __half* A_local, int64_t lda,
                    const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, ncclComm_t comm,
                    const Options& opts) {
  dispatch(Kind::allgather_gemm, m_local, n_local, k, alpha, A_local, lda, B, ldb, beta, C, ldc, comm, opts);
}
void gemm_reducescatter(int64_t m, int64_t n, int64_t k_local, float alpha, const __nv_bfloat16* A, int64_t lda,
                        const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C_local, int64_t ldc,
                        ncclComm_t comm, const Options& opts) {
  dispatch(Kind::gemm_reducescatter, m, n, k_local, alpha, A, lda, B, ldb, beta, C_local, ldc, comm, opts);
}
void gemm_reducescatter(int64_t m, int64_t n, int64_t k_local, float alpha, const __half* A, int64_t lda,
                        const __half* B, int64_t ldb, float beta, __half* C_local, int64_t ldc, ncclComm_t comm,
                        const Options& opts) {
  dispatch(Kind::gemm_reducescatter, m, n, k_local, alpha, A, lda, B, ldb, beta, C_local, ldc, comm, opts);
}

void set_collective_check(ncclComm_t comm, bool on) {
  if (comm == nullptr) fail_arg("dist::set_collective_check", "comm", "nullptr", "an initialized ncclComm_t");
  int dev = 0;
  RUNGS_NCCL(ncclCommCuDevice(comm, &dev));
  state_of(comm, dev).check = on;
}

void release(ncclComm_t comm) {
  std::unique_ptr<CommState> st;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = states().find(comm);
    if (it == states().end()) return;
    st = std::move(it->second);
    states().erase(it);
  }
  st->ws.free();
}

size_t workspace_bytes(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = states().find(comm);
  return it == states().end() ? 0 : it->second->ws.bytes();
}

}  // namespace rungs::dist
