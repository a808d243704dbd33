// rungs::dist with one process per GPU, the way several hosts run it: rank 0 makes the NCCL unique
// id and hands it to the others through a file (on a filesystem every host sees) or through
// stdout/stdin, every rank joins the communicator with ncclCommInitRank, calls
// rungs::dist::allgather_gemm and rungs::dist::gemm_reducescatter, and checks its own result
// against rungs::gemm of the gathered operands on its GPU (every rank can make every rank's inputs:
// they come from the seed).
//
//   dist_two_process --rank R --world W --id FILE [--device D] [--m M] [--n N] [--k K] [--seed S]
//                    [--variant NAME]
//
// --rank, --world and --device default to the launchers' variables: RANK, WORLD_SIZE and
// LOCAL_RANK (torchrun), OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE and
// OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's mpirun), PMI_RANK and PMI_SIZE (MPICH). --id FILE must
// not exist yet (a stale id would be read before rank 0 writes the new one). --id -: rank 0 writes
// the id in hex as one line on stdout and the other ranks read it from stdin.
// Shapes: allgather_gemm with m_local = M, n_local = N, k = K; gemm_reducescatter with
// m = W * M, n = N, k_local = K. --variant: a rung of `rungs list allgather_gemm` (every rank the
// same; default auto). Exit status 0 when every check passed.
#include <rungs/dist.hpp>
#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                                            \
  do {                                                                                              \
    cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)
#define CHECK_NCCL(call)                                                                            \
  do {                                                                                              \
    ncclResult_t r_ = (call);                                                                       \
    if (r_ != ncclSuccess) throw std::runtime_error(std::string(#call) + ": " + ncclGetErrorString(r_)); \
  } while (0)

int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const char* v = std::getenv(n)) return std::atoi(v);
  return fallback;
}

std::string to_hex(const ncclUniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    const unsigned char b = static_cast<unsigned char>(id.internal[i]);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

ncclUniqueId from_hex(const std::string& s) {
  ncclUniqueId id;
  if (s.size() != 2 * sizeof id.internal) throw std::runtime_error("the unique id read is not " +
                                                                   std::to_string(2 * sizeof id.internal) + " hex digits");
  for (size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return id;
}

// Rank 0 makes the id; it travels as one line of hex, in FILE (written to FILE.tmp and renamed, so
// a reader never sees half of it) or on stdout/stdin.
ncclUniqueId exchange_id(int rank, const std::string& where) {
  ncclUniqueId id;
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&id));
    if (where == "-") {
      std::cout << to_hex(id) << std::endl;
    } else {
      const std::string tmp = where + ".tmp";
      std::ofstream(tmp) << to_hex(id) << "\n";
      if (std::rename(tmp.c_str(), where.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
    }
    return id;
  }
  std::string line;
  if (where == "-") {
    std::getline(std::cin, line);
    return from_hex(line);
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    std::ifstream in(where);
    if (in && std::getline(in, line) && !line.empty()) return from_hex(line);
    if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("no unique id in " + where + " after 120 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Element i of rank r's operand `which`: a hash of the seed, in [-1, 1].
float value(uint64_t seed, int which, int r, int64_t i) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(which) << 56) ^ (static_cast<uint64_t>(r) << 48) ^
               static_cast<uint64_t>(i);
  x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
  return static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

using T = __nv_bfloat16;

// A device copy of `rows x cols` values of rank r's operand `which`, rows `ld` apart (ld >= cols).
T* upload(uint64_t seed, int which, int r, int64_t rows, int64_t cols, int64_t ld) {
  std::vector<T> h(static_cast<size_t>(rows * ld), __float2bfloat16(0.0f));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) h[i * ld + j] = __float2bfloat16(value(seed, which, r, i * cols + j));
  T* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> download(const T* d, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// The largest difference over the largest reference magnitude.
double rel_diff(const std::vector<float>& got, const std::vector<float>& ref) {
  double d = 0, mx = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    d = std::max(d, static_cast<double>(std::fabs(got[i] - ref[i])));
    mx = std::max(mx, static_cast<double>(std::fabs(ref[i])));
  }
  return mx > 0 ? d / mx : d;
}

int run(int argc, char** argv) {
  // NVLink multicast (NVLS) stays off on these machines, whatever the environment says.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int rank = env_int({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}, -1);
  int world = env_int({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, -1);
  int device = env_int({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}, -1);
  std::string id_path;
  int64_t m = 256, n = 384, k = 512;
  uint64_t seed = 42;
  std::string variant = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::runtime_error("flag " + a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--rank") rank = std::stoi(v);
    else if (a == "--world") world = std::stoi(v);
    else if (a == "--device") device = std::stoi(v);
    else if (a == "--id") id_path = v;
    else if (a == "--m") m = std::stoll(v);
    else if (a == "--n") n = std::stoll(v);
    else if (a == "--k") k = std::stoll(v);
    else if (a == "--seed") seed = std::stoull(v);
    else if (a == "--variant") variant = v;
    else throw std::runtime_error("unknown flag " + a);
  }
  if (rank < 0 || world < 1 || rank >= world || id_path.empty())
    throw std::runtime_error("usage: dist_two_process --rank R --world W --id FILE|- [--device D] [--m M --n N --k K]");
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  if (device < 0) device = rank % count;
  CHECK_CUDA(cudaSetDevice(device));

  const ncclUniqueId id = exchange_id(rank, id_path);
  ncclComm_t comm = nullptr;
  CHECK_NCCL(ncclCommInitRank(&comm, world, id, rank));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  rungs::Options opts;
  opts.stream = stream;
  opts.variant = variant;
  rungs::Options single;  // the references: the single-GPU gemm (its own auto choice), same stream
  single.stream = stream;
  bool ok = true;

  {  // allgather_gemm: A is the W*m x k stack of the ranks' A_local; this rank's B_r is k x n.
    T* A_local = upload(seed, 0, rank, m, k, k);
    T* B = upload(seed, 1, rank, k, n, n);
    T* C = nullptr;
    CHECK_CUDA(cudaMalloc(&C, static_cast<size_t>(world * m * n) * sizeof(T)));
    rungs::dist::allgather_gemm(m, n, k, 1.0f, A_local, k, B, n, 0.0f, C, n, comm, opts);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    T* A_full = nullptr;
    CHECK_CUDA(cudaMalloc(&A_full, static_cast<size_t>(world * m * k) * sizeof(T)));
    for (int r = 0; r < world; ++r) {
      T* part = upload(seed, 0, r, m, k, k);
      CHECK_CUDA(cudaMemcpy(A_full + r * m * k, part, static_cast<size_t>(m * k) * sizeof(T), cudaMemcpyDeviceToDevice));
      CHECK_CUDA(cudaFree(part));
    }
    T* C_ref = nullptr;
    CHECK_CUDA(cudaMalloc(&C_ref, static_cast<size_t>(world * m * n) * sizeof(T)));
    rungs::gemm(rungs::Trans::N, rungs::Trans::N, world * m, n, k, 1.0f, A_full, k, B, n, 0.0f, C_ref, n, single);
    const double d = rel_diff(download(C, world * m * n), download(C_ref, world * m * n));
    std::printf("rank %d: allgather_gemm (%s) %lldx%lldx%lld: max |C - C_ref| / max |C_ref| = %.3g\n", rank,
                variant.c_str(), static_cast<long long>(world * m), static_cast<long long>(n),
                static_cast<long long>(k), d);
    // Rung 1 (and auto, which runs it) is rungs::gemm of the gathered operands, bit for bit; the
    // later rungs multiply each rank's rows apart (another gemm kernel may sum in another order).
    const bool bitwise = variant == "auto" || variant == "nccl_then_gemm";
    ok = ok && (bitwise ? d == 0.0 : d <= 1.0 / 128);
    for (T* p : {A_local, B, C, A_full, C_ref}) CHECK_CUDA(cudaFree(p));
  }
  // A rung may do allgather_gemm only (rung 4, copy_engine): then gemm_reducescatter is skipped.
  bool reducescatter = variant == "auto";
  for (const rungs::VariantInfo& v : rungs::variants(rungs::Op::gemm_reducescatter))
    reducescatter = reducescatter || v.name == variant;
  if (!reducescatter) std::printf("rank %d: gemm_reducescatter has no rung %s: skipped\n", rank, variant.c_str());
  if (reducescatter) {
    // gemm_reducescatter: A_r is W*m x k, B_r is k x n; this rank gets rows [rank*m, (rank+1)*m) of the sum.
    const int64_t M = world * m;
    T* A = upload(seed, 2, rank, M, k, k);
    T* B = upload(seed, 3, rank, k, n, n);
    T* C_local = nullptr;
    CHECK_CUDA(cudaMalloc(&C_local, static_cast<size_t>(m * n) * sizeof(T)));
    rungs::dist::gemm_reducescatter(M, n, k, 1.0f, A, k, B, n, 0.0f, C_local, n, comm, opts);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    // The reference: [A_0 ... A_{W-1}] (M x W*k) times [B_0; ...; B_{W-1}] (W*k x n), this rank's rows.
    T *A_cat = nullptr, *B_cat = nullptr, *C_ref = nullptr;
    CHECK_CUDA(cudaMalloc(&A_cat, static_cast<size_t>(m * world * k) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&B_cat, static_cast<size_t>(world * k * n) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&C_ref, static_cast<size_t>(m * n) * sizeof(T)));
    for (int r = 0; r < world; ++r) {
      T* a = upload(seed, 2, r, M, k, k);
      CHECK_CUDA(cudaMemcpy2D(A_cat + r * k, world * k * sizeof(T), a + rank * m * k, k * sizeof(T), k * sizeof(T), m,
                              cudaMemcpyDeviceToDevice));
      T* b = upload(seed, 3, r, k, n, n);
      CHECK_CUDA(cudaMemcpy(B_cat + r * k * n, b, static_cast<size_t>(k * n) * sizeof(T), cudaMemcpyDeviceToDevice));
      CHECK_CUDA(cudaFree(a));
      CHECK_CUDA(cudaFree(b));
    }
    rungs::gemm(rungs::Trans::N, rungs::Trans::N, m, n, world * k, 1.0f, A_cat, world * k, B_cat, n, 0.0f, C_ref, n,
                single);
    const double d = rel_diff(download(C_local, m * n), download(C_ref, m * n));
    std::printf("rank %d: gemm_reducescatter (%s) %lldx%lldx%lld: max |C - C_ref| / max |C_ref| = %.3g\n", rank,
                variant.c_str(), static_cast<long long>(M), static_cast<long long>(n),
                static_cast<long long>(world * k), d);
    ok = ok && d <= 1.0 / 128;  // fp32 sums in another order, each rounded once to bf16
    for (T* p : {A, B, C_local, A_cat, B_cat, C_ref}) CHECK_CUDA(cudaFree(p));
  }

  rungs::dist::release(comm);
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_NCCL(ncclCommDestroy(comm));
  std::printf("rank %d: %s\n", rank, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_two_process: %s\n", e.what());
    return 2;
  }
}
