// The `rungs` commands (info, list, bench, verify, tune, profile) and the top level that maps errors
// to one line on stderr and an exit code.
#pragma once

#include "check/gemm_check.hpp"
#include "cli/args.hpp"
#include "cli/results.hpp"

#include <rungs/rungs.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace rungs::cli {

// The whole program: args without the program name. Returns the exit code:
// 0 success, 1 a rung failed verification, 2 usage / no GPU / not enough device memory,
// 3 a CUDA or cuBLAS failure.
int run_main(const std::vector<std::string>& args, const std::string& argv0, std::ostream& out, std::ostream& err);

// --variant: names or numbers against a ladder, in ladder order, without duplicates
// (empty = all). Throws CliError naming an unknown rung. Pure.
std::vector<VariantInfo> select_variants(const std::vector<VariantInfo>& ladder, const std::vector<std::string>& wanted,
                                         const std::string& op, const std::string& flag = "--variant");

// "gemv" -> Op::gemv, "reduce" -> Op::reduce, "allgather_gemm" and "gemm_reducescatter" -> theirs,
// anything else -> Op::gemm.
Op op_from_name(const std::string& name);
// A case as the progress lines and notes name it: "4096x4096x4096 nn bf16", "16384x16384 n", "i64 n=16777216".
std::string case_name(const std::string& op, const Case& c);

// The gemm problem of a case: its shape and transposes, the run's alpha and beta, tight ld's.
check::GemmShape gemm_shape(const Args& a, const Case& c);

// The rungs bench times on the decode workload's cases when no --variant is given: those named
// decode_*, the run's baseline, auto, and the Hopper tensor-core rungs (min_sm 90 and up); the
// other rungs that do bf16 are left out to keep the default bench short. Pure.
bool decode_rung(const VariantInfo& v, const std::string& baseline);

// A timed row's rates from its median_ms: TFLOP/s and % peak (of the peak of the units its type
// runs on), GB/s = bytes / median and % DRAM (of d.dram_read_gbs), and for gemm the arithmetic
// intensity, the ridge point and whether the row is below it (memory_bound). Pure.
void set_rates(Result& r, double bytes, const DeviceInfo& d);

// The exit code for a finished run: 1 if any result failed its check or errored, else 0.
int exit_code(const std::vector<Result>& rows);

}  // namespace rungs::cli
