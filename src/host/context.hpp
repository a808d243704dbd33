// The resources of one host thread's gemm_host calls on one device: three streams (H2D copies,
// products, D2H copies) and their events, the device buffers of A, B and C, the pinned staging
// slots, the staging threads and the CUDA graph of repeated calls. Made by the thread's first call
// on the device and kept for its next ones (steady state allocates nothing); given back by
// rungs::gemm_host_release() or when the thread exits.
#pragma once

#include "host/graph_cache.hpp"
#include "host/worker_pool.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace rungs::host {

// Best effort, for clean-up that must not throw (a destructor may run at thread or process exit):
// f's error is cleared, not thrown.
template <typename F>
void quietly(F&& f) {
  if (f() != cudaSuccess) (void)cudaGetLastError();
}

class Context {
 public:
  explicit Context(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cudaStream_t h2d = nullptr, comp = nullptr, d2h = nullptr;
  cudaEvent_t ev_up = nullptr, ev_sync = nullptr, ev_join = nullptr;
  GraphCache graph;

  // The i-th event of this call (created on first need, reused by later calls).
  cudaEvent_t event(size_t i);

  // Device buffer `which` (0 A, 1 B, 2 C) of at least `bytes`; grows by reallocating.
  void* device(int which, size_t bytes);
  size_t device_held() const { return dev_[0].bytes + dev_[1].bytes + dev_[2].bytes; }

  // The pinned staging slots, a ring per direction.
  struct Slot {
    void* buf = nullptr;
    cudaEvent_t ev = nullptr;  // the last DMA that used the slot
  };
  std::vector<Slot> up, down;
  size_t slot_bytes = 0;
  void ensure_slots(size_t bytes);

  // The staging threads, the caller included: a pool of `threads` (policy.hpp's pool_threads).
  void ensure_pool(int threads);
  WorkerPool& pool() { return *pool_; }
  // The background unpackers of a call: the first n poll (the pool made by the first call that needs it).
  void set_unpack_spinning(int n);
  WorkerPool& unpack_pool() { return *unpack_pool_; }  // made by set_unpack_spinning(n > 0)

 private:
  void free_slots();
  struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;
  };
  int device_;
  Buffer dev_[3];
  std::vector<cudaEvent_t> events_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<WorkerPool> unpack_pool_;  // C's blocks unpacked in the background (Staging::unpack_threads)
};

// The calling thread's context on the current device (made on first use).
Context& context_for_current_device();
// Gives the calling thread's context on the current device back (rungs::gemm_host_release).
void release_context_for_current_device();

}  // namespace rungs::host
