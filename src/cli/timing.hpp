// The project's timing method: L2 flush, CUDA events around each launch, warm-up, timed
// repetitions interleaved with the baseline; median, min, max.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace rungs::cli {

struct Stats {
  double median = 0, min = 0, max = 0;
};
// Median (mean of the middle two for an even count), min and max. Pure; {} for an empty list.
Stats summarize(std::vector<double> ms);

// A warm-up run over kSlowRunMs cuts the repetitions to what fits in kSlowBudgetMs, never
// below kMinSlowReps (nor above the requested count). Pure.
constexpr double kSlowRunMs = 1000.0;
constexpr double kSlowBudgetMs = 10000.0;
constexpr int kMinSlowReps = 3;
int reps_for(double one_run_ms, int reps);

// Before each timed launch (outside the events) a kernel READS a buffer of 2x the L2 size
// (probes.cu, read_flush): the L2 then holds clean lines of that buffer only, and whatever the
// previous launch wrote has been written back during the flush. A cudaMemsetAsync flush would
// leave the L2 full of dirty lines, written back to DRAM while the next timed kernel runs: on H100
// that cost every bandwidth-bound launch ~8 us (a 64 MiB sum measured 37.5 us instead of 29.4 us,
// scripts/experiments/reduce_sweep/reduce_sweep.cu), an error that does not cancel in a ratio to the baseline.
class L2Flusher {
 public:
  L2Flusher(bool enabled, int64_t l2_bytes);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream);
  int64_t bytes() const { return bytes_; }

 private:
  void* buf_ = nullptr;
  float* sink_ = nullptr;
  int64_t bytes_ = 0;
};

using Launch = std::function<void()>;

// One launch between two events; synchronizes and returns milliseconds.
double time_once(const Launch& f, cudaStream_t stream);

struct Measurement {
  std::vector<double> rung_ms, base_ms;  // base_ms empty without a baseline
  int reps = 0;                          // repetitions done
  int warmup = 0;                        // warm-up runs done
  bool cut = false;                      // repetitions cut (a warm-up run took > kSlowRunMs)
  double warm_ms = 0;                    // the timed warm-up run (or first_run_ms without warm-up)
};

// Warm-up (the first warm-up run is timed; if it is slow the rest are skipped and the
// repetitions cut), then `reps` x (flush, event, rung, event, flush, event, baseline, event).
// first_run_ms: the correctness run's time, the slowness signal when warmup == 0.
Measurement measure(const Launch& rung, const Launch* baseline, int reps, int warmup, L2Flusher& flusher,
                    cudaStream_t stream, double first_run_ms);

}  // namespace rungs::cli
