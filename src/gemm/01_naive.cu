// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::naive {
void run(const Args&) { detail::unsupported("naive", "not written yet"); }
}
