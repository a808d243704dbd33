// gemm_host's choices for one call and the measurements behind them: the device memory a call may
// hold, the rate the planning assumes for the multiplication, each job's plan, the staging
// threads (how many stage, how many of them unpack C in the background) and the size of a staging
// slot. Tuning's fields override them.
#pragma once

#include <rungs/rungs.hpp>

#include "host/gemm_host.hpp"
#include "host/schedule.hpp"
#include "host/staging.hpp"

#include <cstddef>

namespace rungs::host {

constexpr size_t kSlotBytes = size_t{2} << 20;  // one pinned staging slot (a piece or part of one)
constexpr int kMaxUnpackThreads = 4;            // at most this many unpack C in the background

// Device memory a call may hold for A, B and C, in bytes: Tuning::device_bytes, or what the device
// has free plus what the context holds already, less what is left to the context and cuBLAS.
double device_budget(const Tuning& tune, size_t held_bytes);

// Rough rate of the multiplication in flop/s, for planning only: 3/4 of the current device's
// fp32 FMA peak, times the speed of the math mode beside fp32 FMA (fp32: elements are float).
double multiply_rate(bool fp32, Math math);

// The plan of one job: choose_plan (host/schedule.hpp) on its estimated multiplication and
// transfer times, cut to the steps the host can issue in that transfer time.
Plan job_plan(const Job& job, bool reads_c, size_t elem_bytes, bool a_transposed, bool b_transposed, double rate,
              int sms);

// The size of a context's staging pool, the caller included: Tuning::staging_threads, or the
// library's choice.
int pool_threads(int forced);

// How a call stages pageable memory: the threads of a pool of pool_threads that pack (the caller
// included) and unpack C in the background, and whether they copy with streaming stores. staged_bytes:
// what goes through the slots; c_staged: C is pageable.
Staging choose_staging(const Tuning& tune, int pool_threads, double staged_bytes, bool c_staged);

}  // namespace rungs::host
