// CK(call): the experiment programs' CUDA error check (reduce_sweep.cu, sm_rate.hpp, register_probe.cpp,
// pcie_probe.cu, read_probe.cuh, nccl_probe.hpp): print the error and where, and end the program.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
