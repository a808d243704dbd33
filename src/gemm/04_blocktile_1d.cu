// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::blocktile_1d {
void run(const Args&) { detail::unsupported("blocktile_1d", "not written yet"); }
}
