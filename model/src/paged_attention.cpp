// vLLM's PagedAttention decode kernels' reads and time (paged_attention.hpp).
#include "treering/model/paged_attention.hpp"

#include "treering/topologies/input_error.hpp"

namespace treering::model {

PagedAttentionReads paged_attention_reads(const Workload& slice, long long context) {
  if (has_latent_attention(slice)) {
    throw topologies::InputError(
        "engine_step.paged_attention: vLLM's PagedAttention kernels decode grouped-query "
        "attention; " +
        slice.name + " has latent attention");
  }
  const double sequence_heads = static_cast<double>(slice.batch) * slice.query_heads;
  const double bytes =
      sequence_heads * static_cast<double>(context) * 2.0 * slice.head_dim * static_cast<double>(slice.kv_cache_bytes);
  const bool one_partition = context <= kPagedAttentionPartitionTokens;
  const bool v1 = context <= kPagedAttentionV1MaxContext &&
                  (one_partition || sequence_heads >= static_cast<double>(kPagedAttentionV1MinSequenceHeads));
  PagedAttentionReads reads;
  (v1 ? reads.v1_bytes : reads.v2_bytes) = bytes;
  return reads;
}

double paged_attention_s(const PagedAttentionReads& reads, const topologies::PagedAttention& kernels,
                         double hbm_rated_Bps) {
  return reads.v1_bytes / (kernels.v1_bandwidth_efficiency * hbm_rated_Bps) +
         reads.v2_bytes / (kernels.v2_bandwidth_efficiency * hbm_rated_Bps);
}

}  // namespace treering::model
