// dist/peer_window.hpp: the one-sided rungs' state and operations.
#include "dist/peer_window.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <mutex>
#include <string>

#ifdef RUNGS_PEER_WINDOW
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop
#endif

namespace rungs::dist::detail {

#ifdef RUNGS_PEER_WINDOW

namespace {

constexpr int kKey = 7;  // the state's key in the workspace: rung 7's number, the first to use it

// The two stream memory operations, from the driver through the runtime.
struct MemOps {
  PFN_cuStreamWaitValue32_v11070 wait = nullptr;
  PFN_cuStreamWriteValue32_v11070 write = nullptr;
};
const MemOps& mem_ops() {
  static MemOps ops;
  static std::once_flag once;
  std::call_once(once, [] {
    ops.wait = reinterpret_cast<PFN_cuStreamWaitValue32_v11070>(
        rungs::detail::driver_entry_point("cuStreamWaitValue32", 11070));
    ops.write = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(
        rungs::detail::driver_entry_point("cuStreamWriteValue32", 11070));
  });
  return ops;
}

void check_cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw Error(std::string("rungs::dist: CUDA driver error ") + std::to_string(static_cast<int>(r)) + " in " + what);
}

CUdeviceptr dev(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// out[p] = the address of byte 0 of rank p's part of window w, in this rank's address space.
__global__ void peer_bases(ncclWindow_t w, int world, unsigned long long* out) {
  for (int p = static_cast<int>(threadIdx.x); p < world; p += static_cast<int>(blockDim.x))
    out[p] = reinterpret_cast<unsigned long long>(ncclGetPeerPointer(w, 0, p));
}

std::vector<char*> peer_pointers(ncclWindow_t w, int world, cudaStream_t stream) {
  unsigned long long* d = nullptr;
  RUNGS_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(unsigned long long) * world, stream));
  peer_bases<<<1, 128, 0, stream>>>(w, world, d);
  RUNGS_CUDA(cudaGetLastError());
  std::vector<unsigned long long> h(static_cast<size_t>(world));
  RUNGS_CUDA(cudaMemcpyAsync(h.data(), d, sizeof(unsigned long long) * world, cudaMemcpyDeviceToHost, stream));
  RUNGS_CUDA(cudaFreeAsync(d, stream));
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  std::vector<char*> out;
  for (unsigned long long v : h) out.push_back(reinterpret_cast<char*>(static_cast<uintptr_t>(v)));
  return out;
}

}  // namespace

PeerWindow::~PeerWindow() {
  // Errors are ignored: a destructor cannot report them, and the first one was reported already.
  if (last_use != nullptr) {
    (void)cudaEventSynchronize(last_use);
    (void)cudaEventDestroy(last_use);
  }
  if (put != nullptr) {
    (void)cudaStreamSynchronize(put);
    (void)cudaStreamDestroy(put);
  }
  if (data_win != nullptr) (void)ncclCommWindowDeregister(comm, data_win);
  if (flags_win != nullptr) (void)ncclCommWindowDeregister(comm, flags_win);
  if (comm != nullptr) (void)ncclCommDestroy(comm);
  if (data != nullptr) (void)ncclMemFree(data);
  if (flags != nullptr) (void)ncclMemFree(flags);
}

void PeerWindow::init(ncclComm_t parent, int r, int w, cudaStream_t stream) {
  rank = r;
  world = w;
  RUNGS_NCCL(ncclCommSplit(parent, 0, rank, &comm, nullptr));
  RUNGS_CUDA(cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming));
  const size_t fbytes = size_t{2} << 20;
  RUNGS_NCCL(ncclMemAlloc(&flags, fbytes));
  RUNGS_CUDA(cudaMemsetAsync(flags, 0, fbytes, stream));
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  RUNGS_NCCL(ncclCommWindowRegister(comm, flags, fbytes, &flags_win, NCCL_WIN_COLL_SYMMETRIC));
  lsa = ncclTeamLsa(comm).nRanks == world;
  if (!lsa) return;
  flags_peer = peer_pointers(flags_win, world, stream);
  // Every rank's flags are zero before any rank writes one: a barrier after the zeroing.
  RUNGS_NCCL(ncclAllReduce(ack(), ack(), 1, ncclUint32, ncclSum, comm, stream));
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  RUNGS_CUDA(cudaStreamCreateWithFlags(&put, cudaStreamNonBlocking));
}

void PeerWindow::grow(size_t need, cudaStream_t stream) {
  if (grow_window(comm, need, last_use, data, bytes, data_win)) data_peer = peer_pointers(data_win, world, stream);
}

PeerWindow& peer_window(Workspace& ws, ncclComm_t parent, int rank, int world, size_t bytes, cudaStream_t stream,
                        const char* rung) {
  const MemOps& ops = mem_ops();
  if (ops.wait == nullptr || ops.write == nullptr)
    rungs::detail::unsupported(rung, "needs cuStreamWaitValue32 and cuStreamWriteValue32, which this driver lacks");
  std::unique_ptr<RungState>& held = ws.rung_state(kKey);
  if (!held) {
    auto s = std::make_unique<PeerWindow>();
    s->init(parent, rank, world, stream);
    held = std::move(s);
  }
  PeerWindow& st = static_cast<PeerWindow&>(*held);
  if (st.lsa) st.grow(bytes, stream);
  return st;
}

void wait_flag(cudaStream_t s, const uint32_t* flag, uint32_t value) {
  check_cu(mem_ops().wait(reinterpret_cast<CUstream>(s), dev(flag), value, CU_STREAM_WAIT_VALUE_GEQ),
           "cuStreamWaitValue32");
}

void Batch::enqueue(cudaStream_t s) {
  if (!dst_.empty()) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t first = 0;
    RUNGS_CUDA(cudaMemcpyBatchAsync(dst_.data(), src_.data(), bytes_.data(), dst_.size(), &attr, &first, 1, s));
  }
  dst_.clear();
  src_.clear();
  bytes_.clear();
}

namespace {

// `value` into this rank's word `local` on stream s, after what s holds before it.
void write_word(cudaStream_t s, uint32_t* local, uint32_t value) {
  check_cu(mem_ops().write(reinterpret_cast<CUstream>(s), dev(local), value, CU_STREAM_WRITE_VALUE_DEFAULT),
           "cuStreamWriteValue32");
}

// `value` into the flag at byte `at` of every peer's flag window, after the copies enqueued on s:
// the value into the local word `local`, then one 4-byte copy to each peer, in a batch of its own.
void flag_peers(const PeerWindow& st, cudaStream_t s, uint32_t* local, size_t at, uint32_t value) {
  write_word(s, local, value);
  Batch b;
  for (int j = 1; j < st.world; ++j) b.add(st.flags_peer[(st.rank + j) % st.world] + at, local, sizeof(uint32_t));
  b.enqueue(s);
}

}  // namespace

void piece_landed(const PeerWindow& st, uint32_t value) {
  flag_peers(st, st.put, st.word(), sizeof(uint32_t) * st.rank, value);
}

void piece_landed_at(const PeerWindow& st, int d, uint32_t value) {
  write_word(st.put, st.word(), value);
  RUNGS_CUDA(cudaMemcpyAsync(st.flags_peer[d] + sizeof(uint32_t) * st.rank, st.word(), sizeof(uint32_t),
                             cudaMemcpyDeviceToDevice, st.put));
}

void acknowledge(const PeerWindow& st, cudaStream_t s, uint32_t call) {
  flag_peers(st, s, st.ack(), sizeof(uint32_t) * (st.world + st.rank), call);
}

void wait_for_peers(const PeerWindow& st, uint32_t call) {
  for (int j = 1; j < st.world; ++j) wait_flag(st.put, st.done((st.rank + j) % st.world), call - 1);
}

void wait_for_pieces(const PeerWindow& st, cudaStream_t s, uint32_t value) {
  for (int j = 1; j < st.world; ++j) wait_flag(s, st.ready((st.rank + j) % st.world), value);
}

#endif

}  // namespace rungs::dist::detail
