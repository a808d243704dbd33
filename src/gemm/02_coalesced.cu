// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::coalesced {
void run(const Args&) { detail::unsupported("coalesced", "not written yet"); }
}
