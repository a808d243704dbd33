// RUNGS_HD: a function both the host and the device run (the CPU tests replay device arithmetic).
#pragma once

#if defined(__CUDACC__)
#define RUNGS_HD __host__ __device__ __forceinline__
#else
#define RUNGS_HD inline
#endif
