// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::vectorized {
void run(const Args&) { detail::unsupported("vectorized", "not written yet"); }
}
