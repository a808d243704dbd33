// The dist ladder: the one list of rungs of allgather_gemm and gemm_reducescatter, in order. The
// registry (variants), the dispatcher, the CLI and the tests read it; adding a rung is one line here
// plus its file. A rung's number is its index + 1, and its file carries that number as prefix.
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail {

const std::vector<Rung>& ladder() {
  static const std::vector<Rung> rungs = {
      {"nccl_then_gemm", "",
       "ncclAllGather of A into the workspace, then the best single-GPU gemm (auto); for reduce-scatter the local "
       "product into fp32 partials, ncclReduceScatter in fp32, then alpha/beta and one rounding: the baseline, "
       "what users write today",
       80, true, nccl_then_gemm::allgather_gemm_bf16, nccl_then_gemm::allgather_gemm_f16,
       nccl_then_gemm::gemm_reducescatter_bf16, nccl_then_gemm::gemm_reducescatter_f16, true},
      {"chunked_overlap", "nccl_then_gemm",
       "the transfer cut into chunks on a communication stream, each chunk's product started on a compute stream "
       "as soon as it lands (events, no host wait): allgather_gemm multiplies its own rows first while pairwise "
       "ncclSend/ncclRecv bring the others'; gemm_reducescatter reduce-scatters each stripe of fp32 partials while "
       "the next stripe is multiplied",
       80, false, chunked_overlap::allgather_gemm_bf16, chunked_overlap::allgather_gemm_f16,
       chunked_overlap::gemm_reducescatter_bf16, chunked_overlap::gemm_reducescatter_f16, false},
      {"ring", "chunked_overlap",
       "collective matmul over a ring of ncclSend/ncclRecv to the neighbours, world-1 steps: the chunk in hand is "
       "multiplied while the next one moves (two slots); gemm_reducescatter adds each block's fp32 partial into the "
       "running sum received (the gemm's beta = 1) and sends it on, piece by piece",
       80, false, ring::allgather_gemm_bf16, ring::allgather_gemm_f16, ring::gemm_reducescatter_bf16,
       ring::gemm_reducescatter_f16, false},
      {"copy_engine", "chunked_overlap",
       "the transfer on the copy engines, on a communicator split with CTAPolicy = NCCL_CTA_POLICY_ZERO and an "
       "ncclMemAlloc buffer registered as a symmetric window, so the product keeps every SM: allgather_gemm gathers "
       "each piece (ncclAllGather), the own rows' product first, each piece's others' as it lands; "
       "gemm_reducescatter sends each stripe of fp32 partials by ncclAlltoAll and a kernel adds them in rank order "
       "(one rounding)",
       80, false, copy_engine::allgather_gemm_bf16, copy_engine::allgather_gemm_f16,
       copy_engine::gemm_reducescatter_bf16, copy_engine::gemm_reducescatter_f16, false},
      {"narrow_partials", "chunked_overlap",
       "gemm_reducescatter as rung 2 with each stripe's partial products rounded to bf16 by the product and "
       "reduce-scattered in bf16: half the bytes on the wire and in the workspace, the sums written straight into C "
       "when alpha = 1 and beta = 0; 2*world roundings instead of one (PyTorch's numerics), bf16 only",
       80, false, nullptr, nullptr, narrow_partials::gemm_reducescatter_bf16, nullptr, false},
      {"narrow_copy_engine", "copy_engine",
       "gemm_reducescatter as rung 4 (the partials by ncclAlltoAll on the copy engines, added in rank order in "
       "fp32 by a kernel) with rung 5's bf16 partials: half of rung 4's bytes on the wire; world+1 roundings, bf16 "
       "only",
       80, false, nullptr, nullptr, narrow_copy_engine::gemm_reducescatter_bf16, nullptr, false},
      {"one_sided", "copy_engine",
       "rung 4's copy engines driven one-sided: each piece copied straight into the peers' symmetric windows "
       "(one cudaMemcpyBatchAsync per piece to the addresses NCCL maps), then a flag the peer's stream waits for "
       "(cuStreamWaitValue32): no collective, and no wait for every rank, per piece; allgather_gemm multiplies each "
       "piece once its sources' flags are there, gemm_reducescatter adds each stripe's fp32 partials in rank order "
       "(one rounding)",
       80, false, one_sided::allgather_gemm_bf16, one_sided::allgather_gemm_f16, one_sided::gemm_reducescatter_bf16,
       one_sided::gemm_reducescatter_f16, false},
      {"own_last", "one_sided",
       "rung 7's copies one peer per step (shifted), each product one peer's whole block: gemm_reducescatter "
       "multiplies in the order of the destinations, each block copied piece by piece while the next is multiplied, "
       "its own block last, its pieces summed with the peers' partials (rank order, one rounding) as they are "
       "multiplied; allgather_gemm multiplies its own rows first, then each source's rows as they land",
       80, false, own_last::allgather_gemm_bf16, own_last::allgather_gemm_f16, own_last::gemm_reducescatter_bf16,
       own_last::gemm_reducescatter_f16, false},
      {"narrow_own_last", "own_last",
       "gemm_reducescatter as rung 8 (destination order, each piece copied while the next is multiplied, the own "
       "block last and summed as it is multiplied) with rung 6's bf16 partials: half of rung 8's bytes on the copy "
       "engines; world+1 roundings, bf16 only",
       80, false, nullptr, nullptr, narrow_own_last::gemm_reducescatter_bf16, nullptr, false},
  };
  return rungs;
}

std::vector<VariantInfo> variants(Op op) {
  std::vector<VariantInfo> out;
  const auto& l = ladder();
  for (size_t i = 0; i < l.size(); ++i) {
    const Rung& r = l[i];
    const bool ag = op == Op::allgather_gemm, rs = op == Op::gemm_reducescatter;
    const bool bf16 = (ag && r.allgather_gemm_bf16) || (rs && r.gemm_reducescatter_bf16);
    const bool f16 = (ag && r.allgather_gemm_f16) || (rs && r.gemm_reducescatter_f16);
    if (!bf16 && !f16) continue;
    std::string types = f16 ? "f16" : "";
    if (bf16) types += types.empty() ? "bf16" : " bf16";
    out.push_back({r.name, r.summary, static_cast<int>(i) + 1, r.min_sm, r.baseline, types, r.parent});
  }
  return out;
}

}  // namespace rungs::dist::detail
