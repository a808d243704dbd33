// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::double_buffer {
void run(const Args&) { detail::unsupported("double_buffer", "not written yet"); }
}
