// gemm_host's knobs and its report of the last call, for the tests and `rungs bench gemm_host`
// (not part of the public API). Among them the experiment hooks (a forced plan, traced calls, an
// injected failure): in every build, unset unless a test or a probe sets them; the CLI's flags that
// set them (--plan, --trace) are added by a RUNGS_EXPERIMENTS build.
#pragma once

#include "host/schedule.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rungs::host {

// Process-wide overrides (nullopt / 0 = the library's own choice). Set them before calls start.
struct Tuning {
  size_t device_bytes = 0;       // device memory a call may hold for A, B and C (forces out-of-core paths)
  size_t staging_bytes = 0;      // bytes of one pinned staging slot
  int staging_threads = 0;       // threads that stage pageable memory, the caller included (bench --host-threads)
  bool streaming_pack = true;    // pack staging slots with streaming stores (false: memcpy; experiments)
  bool streaming_unpack = true;  // unpack C's staged blocks into the caller's C with streaming stores (false: memcpy)
  int unpack_threads = -1;       // C's staged blocks unpacked in the background by this many of the staging
                                 // threads while the others pack (0: by all of them, in turn with packing;
                                 // -1: the library's choice)
  bool graph = true;             // false: never capture or replay a CUDA graph (bench --no-graph)
  // The experiment hooks. A call with an injected failure or traced is not captured or replayed.
  std::optional<Plan> plan;      // the piece schedule of every job (bench --plan)
  bool trace = false;            // time every copy and product of each call with CUDA events (events
                                 // cost ~2 us each to issue): CallInfo::trace (bench --trace)
  int64_t fail_at_step = -1;     // throw rungs::Error before this step (counted over the call's jobs)
};

// One copy or product of a traced call (Tuning::trace), timed on the GPU.
struct TraceOp {
  char engine = 'H';      // 'H' a host-to-device copy, 'K' a multiplication, 'D' a device-to-host copy
  std::string what;       // the stored region moved, or the block of C and the k range multiplied
  double amount = 0;      // copies: bytes; products: multiply-adds
  double start_ms = 0, end_ms = 0;  // after an event recorded on the H2D stream before the call's first piece
};
void set_tuning(const Tuning& t);
Tuning tuning();

// What the calling thread's last gemm_host call did.
struct CallInfo {
  Plan plan;                     // of the first job
  int64_t jobs = 0;              // sub-problems (1 unless out of device memory)
  int64_t steps = 0;             // pieces sent, all jobs
  bool staged_a = false, staged_b = false, staged_c = false;  // pageable: copied through pinned slots
  int host_threads = 0;          // staging threads (the caller included)
  int unpack_threads = 0;        // of those, unpacking C in the background (Tuning::unpack_threads)
  bool graph = false;            // replayed the CUDA graph captured from an identical earlier call
  // Where the host's time went (ms): set-up before the first piece, issuing the pieces (gemm and
  // copy calls included), packing / unpacking pageable memory (a background unpack: from its start until
  // the caller saw it done), waiting at the end; and the whole call.
  double setup_ms = 0, issue_ms = 0, gemm_calls_ms = 0, copy_calls_ms = 0, pack_ms = 0, unpack_ms = 0, wait_ms = 0,
         total_ms = 0;
  std::vector<TraceOp> trace;    // Tuning::trace: the call's copies and products in issue order
};
CallInfo last_call();

}  // namespace rungs::host
