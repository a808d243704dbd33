// rungs::dist: tensor-parallel gemm over NCCL, one GPU per rank. Built when CMake finds NCCL
// (docs/dist.md says how to enable it); link rungs::dist.
//
// Every rank calls with its own GPU's pointers, its communicator and its Options::stream; ranks may
// be threads of one process or processes on one or several hosts. The current device must be the
// communicator's. Row-major, bf16 or f16 (the same overloads for __half), fp32 accumulation, alpha
// and beta in fp32; beta == 0 means C is not read. Asynchronous on Options::stream like gemm, apart
// from the agreement check below. Options::variant picks a rung of variants(Op::allgather_gemm) /
// variants(Op::gemm_reducescatter), or "auto"; every rank must name the same one.
//
// Errors: rungs::Error naming the argument. Each rank first checks its own arguments before any
// communication (negative sizes, ld too small, null pointers, an unknown variant, Options::math not
// fp32, m not a multiple of the world size). A null communicator, or a current device other than
// the communicator's, throws at once: such a rank cannot take part in a collective. Then every
// call checks collectively that the ranks agree (set_collective_check below; on by default): one
// ncclAllReduce of a few int64 on Options::stream and a wait for it. When a rank rejected its own
// arguments, or the ranks passed different sizes, element types or variants, every rank throws
// rungs::Error (the rank at fault naming its argument, the others naming that rank or the sizes
// that differ) instead of hanging in a collective whose sizes do not match; alpha, beta, pointers
// and strides may differ between ranks. A failed call leaves no NCCL group open and enqueues
// nothing after the failure; a CUDA or NCCL failure inside a collective may leave the peers
// waiting in it, as with any NCCL call (abort the communicator there). Not capturable into a CUDA
// graph (rungs::Unsupported). docs/dist.md has the details.
#pragma once

#include <rungs/rungs.hpp>

#include <nccl.h>

#include <cstdint>

namespace rungs::dist {

// allgather_gemm: rank r holds rows [r*m_local, (r+1)*m_local) of A (m_local x k, row stride lda)
// and its own B_r (k x n_local); it gets C_r = A * B_r with all world*m_local rows
// (C: world*m_local x n_local, row stride ldc): C_r = alpha * A * B_r + beta * C_r.
void allgather_gemm(int64_t m_local, int64_t n_local, int64_t k, float alpha, const __nv_bfloat16* A_local,
                    int64_t lda, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
                    ncclComm_t comm, const Options& opts = {});
void allgather_gemm(int64_t m_local, int64_t n_local, int64_t k, float alpha, const __half* A_local, int64_t lda,
                    const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, ncclComm_t comm,
                    const Options& opts = {});

// gemm_reducescatter: rank r holds A_r (m x k_local) and B_r (k_local x n); it gets rows
// [r*m/world, (r+1)*m/world) of the sum over ranks of A_r * B_r (C_local: m/world x n):
// C_local = alpha * (sum_r A_r * B_r)[its rows] + beta * C_local. m must be a multiple of the
// world size, else rungs::Error.
void gemm_reducescatter(int64_t m, int64_t n, int64_t k_local, float alpha, const __nv_bfloat16* A, int64_t lda,
                        const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C_local, int64_t ldc,
                        ncclComm_t comm, const Options& opts = {});
void gemm_reducescatter(int64_t m, int64_t n, int64_t k_local, float alpha, const __half* A, int64_t lda,
                        const __half* B, int64_t ldb, float beta, __half* C_local, int64_t ldc, ncclComm_t comm,
                        const Options& opts = {});

// The agreement check of every call on `comm` (on by default): one ncclAllReduce of 15 int64 on
// Options::stream and a wait for the stream, so the call returns only after the work enqueued
// before it on that stream has run. Turn it off (on every rank alike) where the ranks are known to
// agree and the call must stay asynchronous; then a rank's own argument errors are thrown on that
// rank only, and ranks that disagree on the sizes hang or fail inside NCCL as plain NCCL calls do.
void set_collective_check(ncclComm_t comm, bool on);

// The library keeps device workspace per communicator (the gathered A, the fp32 partial sums),
// grown as needed and reused by the next calls, and the overlapping rungs' side streams and events.
// release(comm) frees the workspace of `comm` (call it before ncclCommDestroy; it waits for the
// work using it), its side streams and events included. Thread-safe; a no-op for a
// communicator without workspace. workspace_bytes(comm): the bytes held for it now.
void release(ncclComm_t comm);
size_t workspace_bytes(ncclComm_t comm);

}  // namespace rungs::dist
