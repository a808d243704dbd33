// One cuBLAS handle per host thread and device (default math: true fp32), shared by the
// cublas rungs of every ladder, so concurrent callers never share one.
#pragma once

#include <cublas_v2.h>

namespace rungs::detail {
// The calling thread's handle for the current device, bound to `stream`. cublasSetStream is
// called only when the stream changes: it resets the handle's workspace each time (cuBLAS docs),
// which made every call cost ~16 us of host time in gemm_host's stream of small products.
cublasHandle_t cublas_handle(cudaStream_t stream);
}
