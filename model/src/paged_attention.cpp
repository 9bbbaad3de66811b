// vLLM's PagedAttention decode kernels' reads and time (paged_attention.hpp).
#include "treering/model/paged_attention.hpp"

#include <algorithm>
#include <cmath>

#include "treering/topologies/input_error.hpp"

namespace treering::model {

PagedAttentionReads paged_attention_reads(const Workload& slice, long long context, long long captured_tokens) {
  if (has_latent_attention(slice)) {
    throw topologies::InputError(
        "engine_step.paged_attention: vLLM's PagedAttention kernels decode grouped-query "
        "attention; " +
        slice.name + " has latent attention");
  }
  const double sequence_heads = static_cast<double>(slice.batch) * slice.query_heads;
  const double bytes =
      sequence_heads * static_cast<double>(context) * 2.0 * slice.head_dim * static_cast<double>(slice.kv_cache_bytes);
  // A replayed graph keeps the kernel chosen at capture, for captured_tokens; longer contexts run eagerly.
  const long long chosen_for = context <= captured_tokens ? captured_tokens : context;
  const bool one_partition = chosen_for <= kPagedAttentionPartitionTokens;
  const bool v1 = chosen_for <= kPagedAttentionV1MaxContext &&
                  (one_partition || sequence_heads >= static_cast<double>(kPagedAttentionV1MinSequenceHeads));
  PagedAttentionReads reads;
  (v1 ? reads.v1_bytes : reads.v2_bytes) = bytes;
  return reads;
}

namespace {

double v1_blocks_per_multiprocessor(double shared_memory_bytes, long long captured_tokens) {
  constexpr long long kBlockTokens = 16;  // vLLM's default KV block
  const long long padded = (captured_tokens + kBlockTokens - 1) / kBlockTokens * kBlockTokens;
  return std::max(1.0, std::floor(shared_memory_bytes / (4.0 * static_cast<double>(padded))));
}

}  // namespace

long long paged_attention_captured_tokens(const Workload& workload, const topologies::PagedAttention& kernels) {
  const long long capture = kernels.max_seq_len_to_capture;
  return std::min(workload.max_position_embeddings > 0 ? workload.max_position_embeddings : capture, capture);
}

double paged_v1_occupancy_scale(const Workload& workload, const topologies::PagedAttention& kernels) {
  if (kernels.v1_shared_memory_per_multiprocessor_bytes <= 0) return 1.0;
  const double shared = kernels.v1_shared_memory_per_multiprocessor_bytes;
  return v1_blocks_per_multiprocessor(shared, topologies::kDefaultMaxSeqLenToCapture) /
         v1_blocks_per_multiprocessor(shared, paged_attention_captured_tokens(workload, kernels));
}

double paged_attention_s(const PagedAttentionReads& reads, const topologies::PagedAttention& kernels,
                         double hbm_rated_Bps) {
  return reads.v1_bytes * reads.v1_occupancy_scale / (kernels.v1_bandwidth_efficiency * hbm_rated_Bps) +
         reads.v2_bytes / (kernels.v2_bandwidth_efficiency * hbm_rated_Bps);
}

}  // namespace treering::model
