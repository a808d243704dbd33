// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::smem_tiling {
void run(const Args&) { detail::unsupported("smem_tiling", "not written yet"); }
}
