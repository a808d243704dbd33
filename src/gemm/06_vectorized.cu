// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::vectorized {
void run(const Args&) { detail::unsupported("vectorized", "not written yet"); }
}
