// The copy-engine rungs' state per communicator (rungs 4 and 6 share it): a communicator split once
// from the caller's with CTAPolicy = NCCL_CTA_POLICY_ZERO and one ncclMemAlloc buffer registered
// with it as a symmetric window, so that NCCL 2.28 runs ncclAllGather and ncclAlltoAll between
// buffers of the window on the copy engines.
#include "dist/dist_rung.hpp"

#include <memory>

namespace rungs::dist::detail {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)

namespace {
constexpr int kKey = 4;  // the state's key in the workspace: rung 4's number, the first to use it
}  // namespace

CeWindow::~CeWindow() {
  // Errors are ignored: a destructor cannot report them, and the first one was reported already.
  if (last_use != nullptr) {
    (void)cudaEventSynchronize(last_use);
    (void)cudaEventDestroy(last_use);
  }
  if (win != nullptr) (void)ncclCommWindowDeregister(comm, win);
  if (comm != nullptr) (void)ncclCommDestroy(comm);
  if (buf != nullptr) (void)ncclMemFree(buf);
}

void CeWindow::ensure(ncclComm_t parent, int rank, size_t need) {
  if (comm == nullptr) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
    RUNGS_NCCL(ncclCommSplit(parent, 0, rank, &comm, &cfg));
    RUNGS_CUDA(cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming));
  }
  grow_window(comm, need, last_use, buf, bytes, win);
}

bool grow_window(ncclComm_t comm, size_t need, cudaEvent_t last_use, void*& buf, size_t& bytes, ncclWindow_t& win) {
  if (need <= bytes) return false;
  constexpr size_t kGrain = size_t{2} << 20;
  need = (need + kGrain - 1) / kGrain * kGrain;
  RUNGS_CUDA(cudaEventSynchronize(last_use));
  if (win != nullptr) {
    ncclWindow_t w = win;
    win = nullptr;
    RUNGS_NCCL(ncclCommWindowDeregister(comm, w));
  }
  if (buf != nullptr) {
    void* b = buf;
    buf = nullptr;
    bytes = 0;
    RUNGS_NCCL(ncclMemFree(b));
  }
  RUNGS_NCCL(ncclMemAlloc(&buf, need));
  bytes = need;
  RUNGS_NCCL(ncclCommWindowRegister(comm, buf, need, &win, NCCL_WIN_COLL_SYMMETRIC));
  return true;
}

CeWindow& ce_window(Workspace& ws, ncclComm_t parent, int rank, size_t bytes) {
  std::unique_ptr<RungState>& held = ws.rung_state(kKey);
  if (!held) held = std::make_unique<CeWindow>();
  CeWindow& w = static_cast<CeWindow&>(*held);
  w.ensure(parent, rank, bytes);
  return w;
}

#endif

}  // namespace rungs::dist::detail
