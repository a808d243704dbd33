// The one-sided rungs' state per communicator (rungs 7 and 8 share one, peer_window.cu) and the
// few operations they build on: copies straight into the peers' symmetric windows and flags that
// the peers' streams wait for. docs/dist.md (rung 7) says how they fit together.
#pragma once

#include "dist/dist_rung.hpp"

#include <cstdint>
#include <vector>

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0) && __has_include(<nccl_device.h>)
#define RUNGS_PEER_WINDOW 1
#endif

namespace rungs::dist::detail {

#ifdef RUNGS_PEER_WINDOW

// Rung 4's entries by element type: rungs 7's and 8's path where the ranks are not all in one
// NVLink domain (no peer addresses).
inline void rung4_allgather(const ArgsBF& a) { copy_engine::allgather_gemm_bf16(a); }
inline void rung4_allgather(const ArgsH& a) { copy_engine::allgather_gemm_f16(a); }
inline void rung4_reducescatter(const ArgsBF& a) { copy_engine::gemm_reducescatter_bf16(a); }
inline void rung4_reducescatter(const ArgsH& a) { copy_engine::gemm_reducescatter_f16(a); }

// One communicator's state: a communicator split once from the caller's, the flag window, the data
// window (grown like the workspace), the peers' addresses of both, the copy stream and the
// counters. Flags, per rank: ready[s], the last piece value source s has put here; done[d], the
// last call whose pieces destination d has finished with. The values come from counters that every
// rank advances alike (the calls are collective and their sizes agree) and are compared cyclically
// (CU_STREAM_WAIT_VALUE_GEQ), so they are never reset.
struct PeerWindow : RungState {
  ncclComm_t comm = nullptr;
  int rank = 0, world = 0;
  void* flags = nullptr;
  ncclWindow_t flags_win = nullptr;
  std::vector<char*> flags_peer;
  void* data = nullptr;
  size_t bytes = 0;
  ncclWindow_t data_win = nullptr;
  std::vector<char*> data_peer;
  cudaStream_t put = nullptr;  // the copies and flags to the peers
  cudaEvent_t last_use = nullptr;
  uint32_t calls = 0, pieces = 0;  // the calls made, the pieces put (the flags' values)
  bool lsa = false;                // every rank in this rank's NVLink domain (NCCL's LSA team)

  // The flag window's words: ready[s], done[d], word (the value of this rank's piece flags), ack
  // (the value of its acknowledgements).
  uint32_t* ready(int s) const { return static_cast<uint32_t*>(flags) + s; }
  uint32_t* done(int d) const { return static_cast<uint32_t*>(flags) + world + d; }
  uint32_t* word() const { return static_cast<uint32_t*>(flags) + 2 * world; }
  uint32_t* ack() const { return static_cast<uint32_t*>(flags) + 2 * world + 1; }

  ~PeerWindow() override;
  // Splits the communicator, registers the zeroed flag window (then a barrier), reads the peers'
  // addresses; where the ranks are not all in one NVLink domain it stops after the split and
  // registration with lsa = false.
  void init(ncclComm_t parent, int rank, int world, cudaStream_t stream);
  // The data window grown to `need` bytes, on every rank in the same call (registration is
  // collective), after this rank's last call (which waited for every peer's copies into it).
  void grow(size_t need, cudaStream_t stream);
};

// This communicator's state, made on first use, its data window grown to at least `bytes` where
// lsa; rungs::Unsupported naming `rung` where the driver lacks the stream memory operations.
PeerWindow& peer_window(Workspace& ws, ncclComm_t parent, int rank, int world, size_t bytes, cudaStream_t stream,
                        const char* rung);

// allgather_gemm's start in rungs 7 and 8: this communicator's state with its data window grown
// for the gathered A ([source][m][k]), or null where the call is done already: nothing to move
// (one rank, k == 0 with C = beta * C and A not read, or no rows: the own product alone) or no
// peer addresses (rung 4 ran the call).
template <typename T>
PeerWindow* gather_window(const ArgsT<T>& a, const char* rung) {
  if (a.world == 1 || a.k == 0 || a.m == 0) {
    rank_product(a, a.world * a.m, a.A, a.lda, a.C, a.stream);
    return nullptr;
  }
  const size_t bytes = static_cast<size_t>(a.world * a.m) * static_cast<size_t>(a.k) * sizeof(T);
  PeerWindow& st = peer_window(*a.ws, a.comm, a.rank, a.world, bytes, a.stream, rung);
  if (!st.lsa) {
    rung4_allgather(a);
    return nullptr;
  }
  return &st;
}

// The copy stream of one call: it starts after the caller's work so far; join() (or the
// destructor, on the way out of an exception) makes the caller's stream wait for it.
class Puts {
 public:
  Puts(PeerWindow& st, Fork& f, cudaStream_t caller, size_t first_event)
      : st_(st), f_(f), caller_(caller), e_(first_event) {
    f_.order(e_, caller_, st_.put);
  }
  ~Puts() {
    if (!joined_) {
      try {
        join();
      } catch (...) {
      }
    }
  }
  Puts(const Puts&) = delete;
  Puts& operator=(const Puts&) = delete;
  void join() {
    joined_ = true;
    f_.order(e_ + 1, st_.put, caller_);
  }

 private:
  PeerWindow& st_;
  Fork& f_;
  cudaStream_t caller_;
  size_t e_;
  bool joined_ = false;
};

// s waits until *flag >= value (cyclically: CU_STREAM_WAIT_VALUE_GEQ).
void wait_flag(cudaStream_t s, const uint32_t* flag, uint32_t value);

// The copies src[i] -> dst[i] of bytes[i] as one cudaMemcpyBatchAsync on s: copy engines preferred
// over SMs, the sources read in stream order (after the work enqueued on s before it).
class Batch {
 public:
  void add(void* to, const void* from, size_t bytes) {
    if (bytes == 0) return;
    dst_.push_back(to);
    src_.push_back(from);
    bytes_.push_back(bytes);
  }
  void enqueue(cudaStream_t s);

 private:
  std::vector<void*> dst_;
  std::vector<const void*> src_;
  std::vector<size_t> bytes_;
};

// A piece's flag: every peer's ready[rank] = value, behind the copies enqueued on the copy stream.
void piece_landed(const PeerWindow& st, uint32_t value);
// The same for one peer only: peer d's ready[rank] = value.
void piece_landed_at(const PeerWindow& st, int d, uint32_t value);
// After the call's last use of the window on s: every peer's done[rank] = call.
void acknowledge(const PeerWindow& st, cudaStream_t s, uint32_t call);
// The copy stream waits until every peer has finished with the previous call's pieces.
void wait_for_peers(const PeerWindow& st, uint32_t call);
// s waits until every peer has put its piece numbered `value` here (ready[source] >= value).
// Enqueue it after this rank's own puts that the peers wait for: streams may share a hardware queue
// (more streams than CUDA_DEVICE_MAX_CONNECTIONS), where a flag wait holds back what is enqueued
// after it, and two ranks each waiting ahead of their own puts never proceed.
void wait_for_pieces(const PeerWindow& st, cudaStream_t s, uint32_t value);

// A call's end: every peer told this rank is done with the call's pieces (after the work on s),
// the copy stream and the side streams joined back to the caller's, the window's last use there.
inline void end_call(PeerWindow& st, Puts& puts, Fork& f, cudaStream_t s, uint32_t call, cudaStream_t caller) {
  acknowledge(st, s, call);
  puts.join();
  f.join();
  RUNGS_CUDA(cudaEventRecord(st.last_use, caller));
}

#endif

// What rungs 7 to 9 say, as rungs::Unsupported, where NCCL lacks the device API.
constexpr const char* kNeedsDeviceApi = "with its device API (nccl_device.h: the peers' addresses in a symmetric window)";

}  // namespace rungs::dist::detail
