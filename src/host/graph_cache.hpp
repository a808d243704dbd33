// The CUDA graph of a context's repeated calls. Pinned-memory calls repeated with identical
// arguments replay a graph captured from the second such call: the first runs eagerly and leaves
// its key, the second is captured (its work recorded on the context's three streams, then
// launched), the later ones only launch it. The replay needs neither the device's free memory nor
// the jobs: the graph runs in the context's buffers of its capture. One graph per context; a key
// whose capture failed (a rung that synchronizes, ...) runs eagerly from then on.
#pragma once

#include <rungs/rungs.hpp>

#include "host/gemm_host.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rungs::host {

// What makes two calls the same call for a replay: transposes, shape, leading dimensions, the
// three pointers, alpha and beta, the rung and math mode, the element size, the device budget set
// in Tuning (a small one splits the call into several jobs) and a forced plan.
std::string call_key(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                     const void* A, const void* B, const void* C, float alpha, float beta, const Options& opts,
                     size_t elem_bytes, const Tuning& tune);

class GraphCache {
 public:
  GraphCache() = default;
  ~GraphCache() { forget(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // A graph captured from a call of this key is ready to replay.
  bool has(const std::string& key) const { return exec_ != nullptr && key == key_; }
  // Replays it on s, the stream its capture started from.
  void launch(cudaStream_t s) const;
  CallInfo info;  // what the captured call reported (a replay reports it too)

  // Whether the call of `key` is to be captured: the last call had the same key, and its capture
  // has not failed before. Remembers key as the last call's; a capture forgets the old graph first.
  // An empty key is never captured.
  bool capture_next(const std::string& key);
  // Records the call's work from here on: h2d is the origin, comp and d2h join the capture
  // through the event `fork`.
  void begin_capture(cudaStream_t h2d, cudaStream_t comp, cudaStream_t d2h, cudaEvent_t fork);
  // Joins comp and d2h back into h2d (through the events ev_comp and ev_d2h), ends the capture,
  // keeps the graph under key and launches it on h2d.
  void end_capture(cudaStream_t h2d, cudaStream_t comp, cudaStream_t d2h, cudaEvent_t ev_comp, cudaEvent_t ev_d2h,
                   const std::string& key);
  // After a failure: a capture under way is ended and its graph thrown away.
  void abandon_capture(cudaStream_t h2d) noexcept;
  // The capture of `key` failed: the graph and the last key are dropped, and calls of this key
  // are not captured again.
  void refuse(const std::string& key);

  void forget();  // the graph only (the next identical call captures again)
  void drop();    // the graph and the last call's key

 private:
  cudaGraphExec_t exec_ = nullptr;
  std::string key_;          // the call whose graph exec_ is
  std::string last_key_;     // the last call's (a second call of it is captured)
  std::string refused_key_;  // a call whose capture failed
  bool capturing_ = false;
};

}  // namespace rungs::host
