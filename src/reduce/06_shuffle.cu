// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::shuffle {
void run(const Args&) { detail::unsupported("shuffle", "not written yet"); }
}
