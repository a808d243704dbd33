// The operands of a gemm_host call on their way between host and device: the stored regions that
// move, the caller's host matrix with the device window of the current job, whether host memory is
// pinned (DMA reads it directly) or pageable (staged), and the staged path: pageable memory packed
// by the staging threads into the context's pinned slots before each slot's DMA, and C's blocks
// unpacked from the slots into the caller's C on the way back (by the caller's staging threads in
// turn with packing, or by a few of them in the background while the others pack).
#pragma once

#include "host/clock.hpp"
#include "host/gemm_host.hpp"
#include "host/schedule.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace rungs::host {

class Context;
class Tracer;

// A rectangle of a stored matrix: rows [r0, r0 + rows), columns [c0, c0 + cols).
struct Region {
  int64_t r0 = 0, c0 = 0, rows = 0, cols = 0;
};

// One operand: the user's host matrix and the device window of the current job.
template <typename T>
struct Operand {
  T* host = nullptr;
  int64_t ld = 0;
  bool staged = false;  // pageable: through the pinned slots
  T* dev = nullptr;
  int64_t dev_ld = 0, org_r = 0, org_c = 0;  // the window's top-left in stored coordinates
  T* dev_at(int64_t r, int64_t c) const { return dev + (r - org_r) * dev_ld + (c - org_c); }
  T* host_at(int64_t r, int64_t c) const { return host + r * ld + c; }
};

// How one call stages pageable memory (policy.hpp's choose_staging).
struct Staging {
  int threads = 1;           // the caller included
  bool stream_pack = true;   // slots packed with streaming stores (Tuning::streaming_pack)
  bool stream_unpack = true; // C's blocks unpacked with streaming stores (Tuning::streaming_unpack)
  int unpack_threads = 0;    // >0: C's blocks unpacked in the background by this many threads
                             // (Context::unpack_pool) while the caller's group packs
};

// Pinned (page-locked or registered) host memory over the whole stored matrix of `bytes`: DMA
// reads it directly. Device memory is refused (rungs::Error naming fn and arg): gemm_host takes
// host pointers.
bool is_pinned(const char* fn, const char* arg, const void* p, size_t bytes);

// A 2D copy, or a 1D one when both sides are contiguous (the 2D path ran ~20 % slower even then).
void copy_async(void* dst, int64_t dpitch, const void* src, int64_t spitch, int64_t width, int64_t rows,
                cudaMemcpyKind kind, cudaStream_t s);

// A region as a trace names it: "[r0:r1, c0:c1]".
std::string span(const Region& r);
std::string span(Range rows, Range cols);

// The staged transfers of one call of element type T: uploads of pageable operands through the
// context's `up` slots, and the return of a pageable C through its `down` slots, which service()
// moves along (unpacks the blocks whose DMA has finished, starts DMAs into free slots) whenever
// the call waits. Operations go to tracer.time (Tuning::trace); pack and unpack times to info.
template <typename T>
class Stager {
 public:
  // c: the flow's C, whose device window moves from job to job.
  Stager(Context& cx, const Staging& staging, const Operand<T>& c, CallInfo& info, Tracer& tracer);
  ~Stager();  // a background unpack still writing into the caller's C is waited for
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  // op[r] (a pageable operand called `name`) to its device window: slot-sized chunks, each packed
  // into the next up slot once that slot's last DMA has read it, then sent on the H2D stream.
  void upload(const Operand<T>& op, const std::string& name, const Region& r);
  // C[r] (pageable) goes back once `after` (the products that finished it) has completed.
  void download(const Region& r, cudaEvent_t after);
  // Moves C's return along; returns whether anything moved.
  bool service();
  // Nothing is left to pack: the rest of C is unpacked by the caller's threads.
  void drain();
  // A background unpack writes into the caller's C: it must end before the call does.
  void stop_unpacking() noexcept;
  // After a failure, once the streams are idle: no transfer is queued and every down slot is free.
  void reset() noexcept;

 private:
  struct Transfer {
    Region r;
    cudaEvent_t after;
    int slot;
  };
  // Sub-regions of r that fit one slot (rows first; a row longer than a slot is cut too).
  template <typename F>
  void for_chunks(const Region& r, F&& f) const;
  // The rows of a slot or of C copied by the caller's staging threads, returning when done.
  void copy_rows(char* dst, int64_t dp, const char* src, int64_t sp, int64_t rows, int64_t row_bytes, bool streaming);

  Context& cx_;
  const Staging& staging_;
  const Operand<T>& C_;
  CallInfo& info_;
  Tracer& tracer_;
  size_t up_next_ = 0;
  std::deque<Transfer> pending_, inflight_;
  std::vector<int> free_down_;
  bool draining_ = false;   // drain(): nothing left to pack
  bool unpacking_ = false;  // a block of C is being unpacked in the background into slot unpacking_slot_
  int unpacking_slot_ = -1;
  Clock::time_point unpack_t0_;
};

}  // namespace rungs::host
