// gemm_host's copies into a pinned staging slot that a DMA reads next, and from a slot into the caller's C
// (host/stream_copy.cpp).
#pragma once

#include <cstddef>

namespace rungs::host {

// n bytes from src to dst (any alignment, no overlap), dst written with streaming (non-temporal)
// stores where the host has them (x86-64), else memcpy. Call stream_fence() before another thread
// or a DMA may read dst.
void stream_copy(char* dst, const char* src, size_t n);
// Orders the calling thread's streaming stores before its later stores.
void stream_fence();

}  // namespace rungs::host
