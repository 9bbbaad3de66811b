// The prompt's prefill inside a timed generation: the generic estimate, or the implementation's own schedule.
#include <algorithm>

#include "treering/model/decode.hpp"

namespace treering::model {

double DecodeModel::prefill_s(const Workload& workload, long long seq_len, const PlanOptions& options) const {
  if (options.impl && options.impl->prefill) {
    return ring_causal_skip_prefill_s(workload, seq_len, options.impl->prefill->attention_efficiency,
                                      options.impl->kv_expansion);
  }
  const double n = static_cast<double>(seq_len);
  const double flops = workload.batch * (2.0 * workload.parameters * n +
                                         2.0 * workload.layers * n * n * workload.query_heads * workload.head_dim);
  return flops / (static_cast<double>(rates_.size()) * slowest_.peak_flops * kPrefillEfficiency);
}

double DecodeModel::ring_causal_skip_prefill_s(const Workload& workload, long long seq_len, double attention_efficiency,
                                               bool kv_expansion) const {
  const int p = static_cast<int>(rates_.size());
  const double block_tokens = static_cast<double>(seq_len) / p;
  const double b = workload.batch;
  const double weights_s = b * 2.0 * workload.parameters * block_tokens / (slowest_.peak_flops * kPrefillEfficiency);
  const ComputeRates& last = rates_.back();
  const double full_block_s = 4.0 * b * block_tokens * block_tokens * workload.query_heads * workload.head_dim /
                              (last.peak_flops * attention_efficiency);
  const int heads = kv_expansion ? workload.query_heads : workload.kv_heads;
  const double block_bytes = b * block_tokens * 2.0 * heads * workload.head_dim * workload.dtype_bytes;
  double transfer_s = 0;  // one GPU: no ring
  for (int rank = 0; p > 1 && rank < p; ++rank)
    transfer_s = std::max(transfer_s, p2p(rank, (rank + 1) % p).time_s(block_bytes));
  // Step 0: the diagonal block while the first block travels; steps 1 .. p-2: a full block each while the next
  // travels; step p-1: the last full block.
  double layer_s = std::max(full_block_s / 2.0, transfer_s);
  for (int step = 1; step < p; ++step) layer_s += step + 1 < p ? std::max(full_block_s, transfer_s) : full_block_s;
  return weights_s + workload.layers * layer_s;
}

}  // namespace treering::model
