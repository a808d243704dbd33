// Testing the test: deliberately broken kernels must fail the check that the ladder passes.
//  * tf32: rounds both inputs to tf32 before multiplying (what a tensor-core path would do);
//  * dropped: skips the last term of every dot product;
//  * off_by_one_row: the last row of C is never written (poison must catch it).
// The element-wise (k+4)u|A||B| bound alone lets the tf32 kernel through at this k; the
// normwise check does not. If a change to gemm_check.cpp weakens it, these tests fail.
#include "check/gemm_check.hpp"
#include "gpu_env.hpp"

namespace rungs::test {
namespace {

enum class Fault { none, tf32, dropped, skip_last_row };

__device__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

__global__ void broken_gemm(Fault f, int m, int n, int k, const float* A, const float* B, float* C) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m || j >= n) return;
  if (f == Fault::skip_last_row && i == m - 1) return;
  float acc = 0.0f;
  const int kk = f == Fault::dropped ? k - 1 : k;
  for (int p = 0; p < kk; ++p) {
    float a = A[int64_t(i) * k + p], b = B[int64_t(p) * n + j];
    if (f == Fault::tf32) a = to_tf32(a), b = to_tf32(b);
    acc = fmaf(a, b, acc);
  }
  C[int64_t(i) * n + j] = acc;
}

check::GemmErrors run_broken(Fault f, int m, int n, int k) {
  check::GemmShape s;
  s.m = m, s.n = n, s.k = k;
  s = check::normalized(s);
  const check::GemmData d = check::make_gemm_data(s, 4242);
  DeviceFloats A(d.A.size()), B(d.B.size()), C(d.C0.size());
  A.upload(d.A), B.upload(d.B), C.poison();
  broken_gemm<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(f, m, n, k, A.data(), B.data(), C.data());
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const auto out = C.download();
  return check::compare_gemm(s, check::gemm_reference(s, d), out.data());
}

TEST(TestTheTest, CorrectKernelPasses) {
  RUNGS_REQUIRE_GPU();
  const auto e = run_broken(Fault::none, 200, 190, 1024);
  EXPECT_TRUE(e.pass) << e.reason;
}

TEST(TestTheTest, Tf32InputsFailNormwiseButNotElementwise) {
  RUNGS_REQUIRE_GPU();
  const auto e = run_broken(Fault::tf32, 128, 120, 4096);
  EXPECT_FALSE(e.pass);
  EXPECT_LE(e.bound_ratio, 1.0) << "the element-wise bound alone would have caught it here; pick a larger k";
  EXPECT_GT(e.normwise, check::normwise_tolerance(4096));
}

TEST(TestTheTest, DroppedTermFails) {
  RUNGS_REQUIRE_GPU();
  const auto e = run_broken(Fault::dropped, 200, 190, 4000);
  EXPECT_FALSE(e.pass);
  EXPECT_GT(e.normwise, check::normwise_tolerance(4000));
}

TEST(TestTheTest, UnwrittenRowFails) {
  RUNGS_REQUIRE_GPU();
  const auto e = run_broken(Fault::skip_last_row, 65, 70, 33);
  EXPECT_FALSE(e.pass);
  EXPECT_EQ(e.bad, 70);
}

}  // namespace
}  // namespace rungs::test
