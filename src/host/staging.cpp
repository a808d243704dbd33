// The staged path of gemm_host's operands (staging.hpp): pinned or pageable, the copies, and the
// packing and unpacking of pageable memory through the context's pinned slots.
#include "host/staging.hpp"

#include "core/errors.hpp"
#include "host/context.hpp"
#include "host/stream_copy.hpp"
#include "host/trace.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace rungs::host {

namespace {

// rows x row_bytes from src (pitch sp) to dst (pitch dp) in `parts` parts of whole rows, with
// streaming stores (stream_copy) or memcpy: part(i) copies the i-th.
struct RowCopy {
  char* dst;
  const char* src;
  int64_t dp, sp, rows, row_bytes;
  int parts;
  bool streaming;
  void operator()(int part) const {
    const int64_t lo = rows * part / parts, hi = rows * (part + 1) / parts;
    auto copy = [&](char* d, const char* s_, size_t n) { streaming ? stream_copy(d, s_, n) : (void)std::memcpy(d, s_, n); };
    if (dp == row_bytes && sp == row_bytes) copy(dst + lo * dp, src + lo * sp, static_cast<size_t>((hi - lo) * row_bytes));
    else
      for (int64_t i = lo; i < hi; ++i) copy(dst + i * dp, src + i * sp, static_cast<size_t>(row_bytes));
    // This part's streaming stores visible before the DMA is issued (a slot) or the call returns (C):
    // they are not ordered by the pool's own release.
    if (streaming) stream_fence();
  }
};

// Below this a thread's start costs more than it saves: 2 MiB slots go out in parts of 128 KiB or
// more, so up to 16 threads share one (the pool spins during a call: a part starts in well under
// a microsecond).
RowCopy row_copy(char* dst, int64_t dp, const char* src, int64_t sp, int64_t rows, int64_t row_bytes, bool streaming,
                 int threads) {
  constexpr int64_t kPart = int64_t{128} << 10;
  const int parts = static_cast<int>(std::clamp<int64_t>(rows * row_bytes / kPart, 1, std::min<int64_t>(rows, threads)));
  return RowCopy{dst, src, dp, sp, rows, row_bytes, parts, streaming};
}

std::string span(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  return "[" + std::to_string(r0) + ":" + std::to_string(r1) + ", " + std::to_string(c0) + ":" + std::to_string(c1) +
         "]";
}

}  // namespace

bool is_pinned(const char* fn, const char* arg, const void* p, size_t bytes) {
  auto kind = [&](const void* q) {
    cudaPointerAttributes at{};
    if (cudaPointerGetAttributes(&at, q) != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaMemoryTypeUnregistered;
    }
    return at.type;
  };
  const cudaMemoryType first = kind(p);
  if (first == cudaMemoryTypeDevice)
    throw Error(std::string("rungs::") + fn + ": " + arg +
                " is device memory; gemm_host takes host pointers (rungs::gemm takes device pointers)");
  if (first != cudaMemoryTypeHost) return false;
  return kind(static_cast<const char*>(p) + (bytes - 1)) == cudaMemoryTypeHost;
}

void copy_async(void* dst, int64_t dpitch, const void* src, int64_t spitch, int64_t width, int64_t rows,
                cudaMemcpyKind kind, cudaStream_t s) {
  if (rows == 1 || (dpitch == width && spitch == width)) {
    RUNGS_CUDA(cudaMemcpyAsync(dst, src, static_cast<size_t>(width * rows), kind, s));
    return;
  }
  RUNGS_CUDA(cudaMemcpy2DAsync(dst, static_cast<size_t>(dpitch), src, static_cast<size_t>(spitch),
                               static_cast<size_t>(width), static_cast<size_t>(rows), kind, s));
}

std::string span(const Region& r) { return span(r.r0, r.r0 + r.rows, r.c0, r.c0 + r.cols); }
std::string span(Range rows, Range cols) { return span(rows.lo, rows.hi, cols.lo, cols.hi); }

template <typename T>
Stager<T>::Stager(Context& cx, const Staging& staging, const Operand<T>& c, CallInfo& info, Tracer& tracer)
    : cx_(cx), staging_(staging), C_(c), info_(info), tracer_(tracer) {
  for (size_t i = 0; i < cx_.down.size(); ++i) free_down_.push_back(static_cast<int>(i));
}

template <typename T>
Stager<T>::~Stager() {
  stop_unpacking();
}

template <typename T>
template <typename F>
void Stager<T>::for_chunks(const Region& r, F&& f) const {
  if (r.rows <= 0 || r.cols <= 0) return;
  const int64_t cap = static_cast<int64_t>(cx_.slot_bytes / sizeof(T));
  const int64_t cols = std::min(r.cols, cap), rows = std::max<int64_t>(1, cap / cols);
  for (int64_t c = 0; c < r.cols; c += cols)
    for (int64_t i = 0; i < r.rows; i += rows)
      f(Region{r.r0 + i, r.c0 + c, std::min(rows, r.rows - i), std::min(cols, r.cols - c)});
}

template <typename T>
void Stager<T>::copy_rows(char* dst, int64_t dp, const char* src, int64_t sp, int64_t rows, int64_t row_bytes,
                          bool streaming) {
  const RowCopy c = row_copy(dst, dp, src, sp, rows, row_bytes, streaming, staging_.threads);
  cx_.pool().run(c.parts, c);
}

template <typename T>
void Stager<T>::upload(const Operand<T>& op, const std::string& name, const Region& r) {
  const size_t sz = sizeof(T);
  for_chunks(r, [&](const Region& q) {
    Context::Slot& s = cx_.up[up_next_++ % cx_.up.size()];
    for (;;) {  // the slot's previous DMA must have read it
      const cudaError_t e = cudaEventQuery(s.ev);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) detail::throw_cuda(e, "cudaEventQuery", __FILE__, __LINE__);
      if (!service()) std::this_thread::yield();
    }
    {
      Timed t(info_.pack_ms);
      copy_rows(static_cast<char*>(s.buf), q.cols * sz, reinterpret_cast<const char*>(op.host_at(q.r0, q.c0)),
                op.ld * sz, q.rows, q.cols * sz, staging_.stream_pack);
    }
    tracer_.time(cx_.h2d, 'H', double(sz) * q.rows * q.cols, [&] { return name + span(q) + " staged"; }, [&] {
      copy_async(op.dev_at(q.r0, q.c0), op.dev_ld * sz, s.buf, q.cols * sz, q.cols * sz, q.rows,
                 cudaMemcpyHostToDevice, cx_.h2d);
    });
    RUNGS_CUDA(cudaEventRecord(s.ev, cx_.h2d));
  });
}

template <typename T>
void Stager<T>::download(const Region& r, cudaEvent_t after) {
  for_chunks(r, [&](const Region& q) { pending_.push_back({q, after, 0}); });
}

// With Staging::unpack_threads, a block is unpacked in the background (one at a time) while the
// caller goes on packing; once nothing is left to pack (drain), by the caller's threads.
template <typename T>
bool Stager<T>::service() {
  bool moved = false;
  const size_t sz = sizeof(T);
  for (bool again = true; again;) {
    again = false;
    if (unpacking_ && (draining_ || cx_.unpack_pool().done())) {  // the background block: done, or waited for
      cx_.unpack_pool().finish();
      unpacking_ = false;
      info_.unpack_ms += ms_between(unpack_t0_, Clock::now());
      free_down_.push_back(unpacking_slot_);
      again = moved = true;
    }
    while (!inflight_.empty() && !unpacking_) {
      const Transfer& f = inflight_.front();
      Context::Slot& s = cx_.down[f.slot];
      const cudaError_t e = cudaEventQuery(s.ev);
      if (e == cudaErrorNotReady) break;
      if (e != cudaSuccess) detail::throw_cuda(e, "cudaEventQuery", __FILE__, __LINE__);
      char* dst = reinterpret_cast<char*>(C_.host_at(f.r.r0, f.r.c0));
      const char* src = static_cast<const char*>(s.buf);
      if (staging_.unpack_threads > 0 && !draining_) {
        const RowCopy c = row_copy(dst, C_.ld * sz, src, f.r.cols * sz, f.r.rows, f.r.cols * sz,
                                   staging_.stream_unpack, staging_.unpack_threads);
        unpack_t0_ = Clock::now();
        cx_.unpack_pool().start(c.parts, c);
        unpacking_ = true;
        unpacking_slot_ = f.slot;
      } else {
        Timed t(info_.unpack_ms);
        copy_rows(dst, C_.ld * sz, src, f.r.cols * sz, f.r.rows, f.r.cols * sz, staging_.stream_unpack);
        free_down_.push_back(f.slot);
      }
      inflight_.pop_front();
      again = moved = true;
    }
    while (!pending_.empty() && !free_down_.empty()) {
      Transfer t = pending_.front();
      pending_.pop_front();
      t.slot = free_down_.back();
      free_down_.pop_back();
      Context::Slot& s = cx_.down[t.slot];
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.d2h, t.after, 0));
      tracer_.time(cx_.d2h, 'D', double(sz) * t.r.rows * t.r.cols, [&] { return "C" + span(t.r) + " staged"; }, [&] {
        copy_async(s.buf, t.r.cols * sz, C_.dev_at(t.r.r0, t.r.c0), C_.dev_ld * sz, t.r.cols * sz, t.r.rows,
                   cudaMemcpyDeviceToHost, cx_.d2h);
      });
      RUNGS_CUDA(cudaEventRecord(s.ev, cx_.d2h));
      inflight_.push_back(t);
      again = moved = true;
    }
  }
  return moved;
}

template <typename T>
void Stager<T>::drain() {
  draining_ = true;
  while (!pending_.empty() || !inflight_.empty() || unpacking_)
    if (!service()) std::this_thread::yield();
  draining_ = false;
}

template <typename T>
void Stager<T>::stop_unpacking() noexcept {
  if (!unpacking_) return;
  cx_.unpack_pool().finish();
  unpacking_ = false;
  free_down_.push_back(unpacking_slot_);
}

template <typename T>
void Stager<T>::reset() noexcept {
  pending_.clear();
  inflight_.clear();
  free_down_.clear();
  for (size_t i = 0; i < cx_.down.size(); ++i) free_down_.push_back(static_cast<int>(i));
}

template class Stager<float>;
template class Stager<__half>;
template class Stager<__nv_bfloat16>;

}  // namespace rungs::host
