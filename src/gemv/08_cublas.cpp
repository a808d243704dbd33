// PLACEHOLDER
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::cublas {
void run(const Args&) { detail::unsupported("cublas", "not written yet"); }
}
