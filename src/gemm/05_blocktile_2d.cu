// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::blocktile_2d {
void run(const Args&) { detail::unsupported("blocktile_2d", "not written yet"); }
}
