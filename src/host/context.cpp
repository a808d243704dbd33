// gemm_host's per-thread, per-device resources (context.hpp).
#include "host/context.hpp"

#include "core/errors.hpp"
#include "host/policy.hpp"

#include <map>

namespace rungs::host {

namespace {

constexpr int kSlots = 8;  // pinned staging slots per direction

thread_local std::map<int, std::unique_ptr<Context>> t_contexts;

}  // namespace

Context::Context(int device) : device_(device) {
  RUNGS_CUDA(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
  RUNGS_CUDA(cudaStreamCreateWithFlags(&comp, cudaStreamNonBlocking));
  RUNGS_CUDA(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking));
  RUNGS_CUDA(cudaEventCreateWithFlags(&ev_up, cudaEventDisableTiming));
  RUNGS_CUDA(cudaEventCreateWithFlags(&ev_sync, cudaEventDisableTiming));
  RUNGS_CUDA(cudaEventCreateWithFlags(&ev_join, cudaEventDisableTiming));
  ensure_pool(pool_threads(0));
}

Context::~Context() {
  int cur = 0;
  const bool have_dev = cudaGetDevice(&cur) == cudaSuccess;
  quietly([&] { return cudaSetDevice(device_); });
  for (cudaStream_t s : {h2d, comp, d2h})
    if (s) quietly([&] { return cudaStreamSynchronize(s); });
  for (cudaStream_t s : {h2d, comp, d2h})
    if (s) quietly([&] { return cudaStreamDestroy(s); });
  for (cudaEvent_t e : events_) quietly([&] { return cudaEventDestroy(e); });
  graph.drop();
  for (cudaEvent_t e : {ev_up, ev_sync, ev_join})
    if (e) quietly([&] { return cudaEventDestroy(e); });
  free_slots();
  for (Buffer& b : dev_)
    if (b.p) quietly([&] { return cudaFree(b.p); });
  if (have_dev) quietly([&] { return cudaSetDevice(cur); });
}

cudaEvent_t Context::event(size_t i) {
  while (events_.size() <= i) {
    cudaEvent_t e = nullptr;
    RUNGS_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    events_.push_back(e);
  }
  return events_[i];
}

void* Context::device(int which, size_t bytes) {
  Buffer& b = dev_[which];
  if (b.bytes < bytes) {
    graph.forget();  // it copies into the old buffers
    if (b.p) RUNGS_CUDA(cudaFree(b.p));
    b.p = nullptr;
    b.bytes = 0;
    RUNGS_CUDA(cudaMalloc(&b.p, bytes));
    b.bytes = bytes;
  }
  return b.p;
}

void Context::ensure_slots(size_t bytes) {
  if (slot_bytes == bytes && !up.empty()) return;
  free_slots();
  for (std::vector<Slot>* ring : {&up, &down})
    for (int i = 0; i < kSlots; ++i) {
      Slot s;
      RUNGS_CUDA(cudaEventCreateWithFlags(&s.ev, cudaEventDisableTiming));
      const cudaError_t e = cudaHostAlloc(&s.buf, bytes, cudaHostAllocDefault);
      if (e != cudaSuccess) {
        (void)cudaEventDestroy(s.ev);
        detail::throw_cuda(e, "cudaHostAlloc (gemm_host staging slot)", __FILE__, __LINE__);
      }
      ring->push_back(s);
    }
  slot_bytes = bytes;
}

void Context::ensure_pool(int threads) {
  if (!pool_ || pool_->threads() != threads) {
    pool_.reset();  // its workers joined before the new ones start
    pool_ = std::make_unique<WorkerPool>(threads - 1);
  }
}

void Context::set_unpack_spinning(int n) {
  if (n > 0 && !unpack_pool_) unpack_pool_ = std::make_unique<WorkerPool>(kMaxUnpackThreads);
  if (unpack_pool_) unpack_pool_->set_spinning(n > 0, n);
}

void Context::free_slots() {
  for (std::vector<Slot>* ring : {&up, &down}) {
    for (Slot& s : *ring) {
      if (s.ev) quietly([&] { return cudaEventSynchronize(s.ev); });
      if (s.ev) quietly([&] { return cudaEventDestroy(s.ev); });
      if (s.buf) quietly([&] { return cudaFreeHost(s.buf); });
    }
    ring->clear();
  }
  slot_bytes = 0;
}

Context& context_for_current_device() {
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  std::unique_ptr<Context>& cx = t_contexts[dev];
  if (!cx) cx = std::make_unique<Context>(dev);
  return *cx;
}

void release_context_for_current_device() {
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  t_contexts.erase(dev);
}

}  // namespace rungs::host
