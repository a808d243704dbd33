// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::kahan {
void run(const Args&) { detail::unsupported("kahan", "not written yet"); }
}
