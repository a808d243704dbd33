// NVTX ranges of the public entry points (core/nvtx.hpp). NVTX v3 is header-only (the CUDA
// toolkit's include/nvtx3); it loads a tool's injection library with dlopen only when one is set
// (NVTX_INJECTION64_PATH, as nsys and ncu set it), at the first NVTX call.
#include "core/nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rungs::detail {

namespace {

// Null without a tool: NVTX's calls then return at once, and the ranges are skipped altogether.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("rungs");
  return d;
}

uint32_t color_of(const char* op) {  // ARGB, one per op on the timeline
  if (std::strcmp(op, "gemm") == 0) return 0xFF3B78C3u;
  if (std::strcmp(op, "gemv") == 0) return 0xFF3BA55Cu;
  if (std::strcmp(op, "reduce") == 0) return 0xFFE08A1Eu;
  return 0xFF8E5AC8u;  // gemm_host
}

struct Name {
  const char* op;
  std::string rung;
  nvtxStringHandle_t handle;
  uint32_t color;
};

// The registered "rungs::<op>/<rung>", per thread: no lock on the call path. A name is registered
// at most once per thread (a tool maps equal strings to one name).
const Name& registered(nvtxDomainHandle_t d, const char* op, const char* rung) {
  thread_local std::vector<Name> names;
  thread_local size_t last = 0;  // the previous call's entry: repeated calls hit it first
  if (last < names.size() && names[last].op == op && names[last].rung == rung) return names[last];
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i].op == op && names[i].rung == rung) {
      last = i;
      return names[i];
    }
  const std::string text = std::string("rungs::") + op + "/" + rung;
  names.push_back({op, rung, nvtxDomainRegisterStringA(d, text.c_str()), color_of(op)});
  last = names.size() - 1;
  return names.back();
}

}  // namespace

bool NvtxRange::push(const char* op, const char* rung) noexcept {
  const nvtxDomainHandle_t d = domain();
  if (d == nullptr) return false;
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  try {
    const Name& n = registered(d, op, rung);
    a.colorType = NVTX_COLOR_ARGB;
    a.color = n.color;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = n.handle;
  } catch (...) {  // out of memory caching the name: the range goes unnamed (push and pop stay paired)
    a.messageType = NVTX_MESSAGE_UNKNOWN;
  }
  nvtxDomainRangePushEx(d, &a);
  return true;
}

void NvtxRange::pop() noexcept { nvtxDomainRangePop(domain()); }

}  // namespace rungs::detail
