// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::coalesced {
void run(const Args&) { detail::unsupported("coalesced", "not written yet"); }
}
