// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::outer_product {
void run(const Args&) { detail::unsupported("outer_product", "not written yet"); }
}
