// One cuBLAS handle per host thread and device (default math: true fp32), shared by the
// cublas rungs of every ladder, so concurrent callers never share one.
#pragma once

#include <cublas_v2.h>

namespace rungs::detail {
cublasHandle_t cublas_handle();
}
