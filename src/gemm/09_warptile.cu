// STUB: to be written.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
namespace rungs::sgemm::warptile {
void run(const Args&) { detail::unsupported("warptile", "not written yet"); }
}
