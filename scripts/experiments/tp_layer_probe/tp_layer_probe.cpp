// Does one rungs::dist call slow the next on the same communicator? A tensor-parallel MLP runs its
// two products in turn: allgather_gemm (the up projection) then gemm_reducescatter (the down
// projection), layer after layer. `rungs bench` times each rung on its own, rung after rung, and
// there rung 7's all-gather ran 1.67-1.72 ms right after rung 8's against 1.48-1.54 after itself or
// after rung 4 (2 H200, 8192 x 4096 x 8192 per rank; docs/dist.md, Measured). This times, with
// random bf16 inputs, one thread per GPU, events on each rank's stream, the slowest rank's median of
// 20 after 3 (ranks released together by a host barrier before each timed call):
//   alone:      allgather_gemm(VAG) repeated, then gemm_reducescatter(VRS) repeated
//   alternated: allgather_gemm(VAG), gemm_reducescatter(VRS), ... each call timed on its own
//   after:      allgather_gemm(VPREV) untimed, then allgather_gemm(VAG) timed, repeated (if VPREV)
//   idle:       the same with GAP_MS milliseconds of host sleep between the two (if GAP_MS): a slowdown
//               that outlasts the idle time is state the earlier call left, not a transient (clocks,
//               work still draining)
// Build and run on the GPUs (after the library's build in build-gpu):
//   g++ -O2 -std=c++17 -Iinclude -I/usr/local/cuda/include -I$NCCL/include
//     scripts/experiments/tp_layer_probe/tp_layer_probe.cpp build-gpu/librungs.a -L/usr/local/cuda/lib64 -lcublas
//     -lcublasLt -lcudart -lcuda $NCCL/lib/libnccl.so.2 -lpthread -ldl -Wl,-rpath,$NCCL/lib
//     -o build-gpu/tp_layer_probe
//   (NCCL from the wheel: NCCL=$(python3 -c 'import nvidia.nccl as n; print(n.__path__[0])'))
//   build-gpu/tp_layer_probe WORLD AG_M_LOCAL AG_N_LOCAL AG_K RS_M RS_N RS_K_LOCAL VAG VRS [VPREV [GAP_MS]]
//   e.g. build-gpu/tp_layer_probe 2 8192 4096 8192 16384 8192 4096 one_sided narrow_own_last own_last
#include <rungs/dist.hpp>
#include <rungs/rungs.hpp>

#include "../nccl_probe.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace nccl_probe;
using bf16 = __nv_bfloat16;

namespace {

// `count` bf16 values uniform in [-1, 1] (an LCG; the same bits on every rank and operand: random
// enough for the tensor cores' power draw, which is what sets the clocks).
std::vector<uint16_t> random_bf16(size_t count) {
  std::vector<uint16_t> v(count);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < count; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float f = static_cast<float>(static_cast<int32_t>(s >> 32)) / 2147483648.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    v[i] = static_cast<uint16_t>(bits >> 16);
  }
  return v;
}

bf16* device_copy(const std::vector<uint16_t>& host, size_t count) {
  void* p = nullptr;
  CK(cudaMalloc(&p, count * sizeof(bf16)));
  CK(cudaMemcpy(p, host.data(), count * sizeof(bf16), cudaMemcpyHostToDevice));
  return static_cast<bf16*>(p);
}

constexpr int kWarmup = 3, kReps = 20;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 10) {
    std::printf("usage: %s WORLD AG_M_LOCAL AG_N_LOCAL AG_K RS_M RS_N RS_K_LOCAL VAG VRS [VPREV [GAP_MS]]\n", argv[0]);
    return 2;
  }
  multicast_off();
  const int world = std::atoi(argv[1]);
  const int64_t am = std::atoll(argv[2]), an = std::atoll(argv[3]), ak = std::atoll(argv[4]);
  const int64_t rm = std::atoll(argv[5]), rn = std::atoll(argv[6]), rk = std::atoll(argv[7]);
  const std::string vag = argv[8], vrs = argv[9], vprev = argc > 10 ? argv[10] : "";
  const int gap_ms = argc > 11 ? std::atoi(argv[11]) : 0;
  std::vector<ncclComm_t> comms = init_all(world);
  for (ncclComm_t c : comms) rungs::dist::set_collective_check(c, false);

  const size_t biggest = std::max({static_cast<size_t>(am * ak), static_cast<size_t>(ak * an),
                                   static_cast<size_t>(rm * rk), static_cast<size_t>(rk * rn)});
  const std::vector<uint16_t> host = random_bf16(biggest);

  // times[phase][rep][rank]
  enum { kAgAlone, kRsAlone, kAgAlternated, kRsAlternated, kAgAfter, kAgAfterIdle, kPhases };
  std::vector<std::vector<std::vector<float>>> times(kPhases, std::vector<std::vector<float>>(kReps, std::vector<float>(world)));
  Barrier barrier(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      cudaEvent_t start, stop;
      CK(cudaEventCreate(&start));
      CK(cudaEventCreate(&stop));
      bf16* A = device_copy(host, am * ak);
      bf16* B = device_copy(host, ak * an);
      bf16* C = nullptr;  // beta = 0: written only
      CK(cudaMalloc(&C, world * am * an * sizeof(bf16)));
      bf16* RA = device_copy(host, rm * rk);
      bf16* RB = device_copy(host, rk * rn);
      bf16* RC = nullptr;
      CK(cudaMalloc(&RC, (rm / world) * rn * sizeof(bf16)));
      auto opts = [&](const std::string& v) {
        rungs::Options o;
        o.variant = v;
        o.stream = s;
        return o;
      };
      const auto ag = [&](const std::string& v) {
        rungs::dist::allgather_gemm(am, an, ak, 1.0f, A, ak, B, an, 0.0f, C, an, comms[r], opts(v));
      };
      const auto rs = [&](const std::string& v) {
        rungs::dist::gemm_reducescatter(rm, rn, rk, 1.0f, RA, rk, RB, rn, 0.0f, RC, rn, comms[r], opts(v));
      };
      const auto timed = [&](int phase, int rep, const std::function<void()>& call) {
        barrier.wait();
        CK(cudaEventRecord(start, s));
        call();
        CK(cudaEventRecord(stop, s));
        CK(cudaEventSynchronize(stop));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start, stop));
        if (rep >= 0) times[phase][rep][r] = ms;
      };
      for (int i = -kWarmup; i < kReps; ++i) timed(kAgAlone, i, [&] { ag(vag); });
      for (int i = -kWarmup; i < kReps; ++i) timed(kRsAlone, i, [&] { rs(vrs); });
      for (int i = -kWarmup; i < kReps; ++i) {
        timed(kAgAlternated, i, [&] { ag(vag); });
        timed(kRsAlternated, i, [&] { rs(vrs); });
      }
      if (!vprev.empty())
        for (int i = -kWarmup; i < kReps; ++i) {
          ag(vprev);
          CK(cudaStreamSynchronize(s));
          timed(kAgAfter, i, [&] { ag(vag); });
        }
      if (!vprev.empty() && gap_ms > 0)
        for (int i = -kWarmup; i < kReps; ++i) {
          ag(vprev);
          CK(cudaStreamSynchronize(s));
          std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
          timed(kAgAfterIdle, i, [&] { ag(vag); });
        }
      rungs::dist::release(comms[r]);
      for (void* p : {static_cast<void*>(A), static_cast<void*>(B), static_cast<void*>(C), static_cast<void*>(RA),
                      static_cast<void*>(RB), static_cast<void*>(RC)})
        CK(cudaFree(p));
      CK(cudaStreamDestroy(s));
    });
  for (std::thread& t : threads) t.join();
  for (ncclComm_t c : comms) NK(ncclCommDestroy(c));

  const char* names[kPhases] = {"allgather_gemm alone", "gemm_reducescatter alone", "allgather_gemm alternated",
                                "gemm_reducescatter alternated", "allgather_gemm after VPREV",
                                "allgather_gemm after VPREV, idle"};
  std::printf("%d GPUs; allgather_gemm %s %lldx%lldx%lld, gemm_reducescatter %s %lldx%lldx%lld, VPREV %s\n", world,
              vag.c_str(), static_cast<long long>(am), static_cast<long long>(an), static_cast<long long>(ak),
              vrs.c_str(), static_cast<long long>(rm), static_cast<long long>(rn), static_cast<long long>(rk),
              vprev.empty() ? "-" : vprev.c_str());
  for (int p = 0; p < kPhases; ++p) {
    if (p == kAgAfter && vprev.empty()) continue;
    if (p == kAgAfterIdle && (vprev.empty() || gap_ms <= 0)) continue;
    std::vector<float> slowest(kReps);
    for (int i = 0; i < kReps; ++i) slowest[i] = *std::max_element(times[p][i].begin(), times[p][i].end());
    std::printf("  %-32s %.3f ms\n", names[p], median(slowest));
  }
  return 0;
}
