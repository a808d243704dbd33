#include <rungs/reference.hpp>
#include <rungs/rungs.hpp>

#include <cstdio>

int main() {
  const auto v = rungs::variants(rungs::Op::gemm);
  float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8};
  double C[4] = {};
  rungs::reference::gemm(rungs::Trans::N, rungs::Trans::N, 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2, 1);
  std::printf("%zu gemm rungs; [[1 2][3 4]] x [[5 6][7 8]] = [[%g %g][%g %g]]\n", v.size(), C[0], C[1], C[2], C[3]);
  return (v.size() > 1 && C[0] == 19 && C[3] == 50) ? 0 : 1;
}
