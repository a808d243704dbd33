// PLACEHOLDER
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce {
std::string auto_variant(DType, int64_t, int) { return "cub"; }
}
