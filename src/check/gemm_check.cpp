#include "check/gemm_check.hpp"
