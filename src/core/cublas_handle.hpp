// One cuBLAS handle per host thread and device (default math: true fp32), shared by the
// cublas rungs of every ladder, so concurrent callers never share one; likewise one cuBLASLt
// handle per host thread and device for the fp8 baseline.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

namespace rungs::detail {
// The calling thread's handle for the current device, bound to `stream`. cublasSetStream is
// called only when the stream changes: it resets the handle's workspace each time (cuBLAS docs),
// which made every call cost ~16 us of host time in gemm_host's stream of small products.
cublasHandle_t cublas_handle(cudaStream_t stream);
// The calling thread's cuBLASLt handle for the current device. A cuBLASLt handle holds no stream
// and no workspace (both are arguments of cublasLtMatmul), so it needs no binding per call.
cublasLtHandle_t cublaslt_handle();
}
