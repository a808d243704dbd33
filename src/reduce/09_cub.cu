// Rung 9, cub: cub::DeviceReduce (CCCL in CUDA 13), the vendor baseline. The temporary storage
// comes from detail::Scratch (stream-ordered pool), its size queried with a null pointer on every
// call. num_items is passed as int64_t: CUB then indexes with 64-bit offsets (n >= 2^31 works).
//  * f32, f64: DeviceReduce::Sum, plain sums in the input type (CUB's accumulator for float is
//    float): not `accurate`; run-to-run deterministic on one device, as CUB documents.
//  * i32, i64: DeviceReduce::TransformReduce with a cast to uint64 and init 0: the accumulator
//    is uint64, so int32 values are sign-extended and summed exactly and int64 wraps modulo 2^64
//    without signed-overflow UB; the uint64 result has the int64 result's bits. The cast happens
//    after CUB's (vectorized) loads of the raw pointer.
//
// Bounded by: DRAM bandwidth; two launches (CUB's tile kernel over an even share of the input per
// block, then a single-block pass over the block partials), as rung 7.
#include "core/errors.hpp"
#include "detail/reduce_kernels.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

namespace rungs::reduce::cub {

namespace {

// int32 / int64 -> uint64 (modulo 2^64: sign extension for int32).
struct ToU64 {
  template <typename T>
  __host__ __device__ uint64_t operator()(T x) const {
    return static_cast<uint64_t>(x);
  }
};

template <typename T, typename Out>
void cub_sum(const T* in, int64_t n, Out* out, cudaStream_t stream) {
  size_t bytes = 0;
  if constexpr (std::is_integral_v<T>) {
    RUNGS_CUDA(::cub::DeviceReduce::TransformReduce(nullptr, bytes, in, out, n, ::cuda::std::plus<uint64_t>{},
                                                    ToU64{}, uint64_t{0}, stream));
    detail::Scratch temp(bytes, stream);
    RUNGS_CUDA(::cub::DeviceReduce::TransformReduce(temp.get(), bytes, in, out, n, ::cuda::std::plus<uint64_t>{},
                                                    ToU64{}, uint64_t{0}, stream));
  } else {
    RUNGS_CUDA(::cub::DeviceReduce::Sum(nullptr, bytes, in, out, n, stream));
    detail::Scratch temp(bytes, stream);
    RUNGS_CUDA(::cub::DeviceReduce::Sum(temp.get(), bytes, in, out, n, stream));
  }
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) { cub_sum(in, a.n, out, a.stream); });
}

}  // namespace rungs::reduce::cub
