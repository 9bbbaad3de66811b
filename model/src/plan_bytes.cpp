// bytes_sent_per_rank (plan.hpp): what each rank sends, exactly, when every collective runs as a ring.
#include <stdexcept>
#include <string>

#include "treering/model/plan.hpp"
#include "treering/model/ring_chunks.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
namespace {

// Elements in chunk `index` of `total` cut into `parts`, as the rings cut them (ring_chunks.hpp).
long long chunk(long long total, int parts, int index) {
  return static_cast<long long>(ring_chunk(static_cast<std::size_t>(total), parts, index).count);
}

// Reduce-scatter steps send chunks r, r-1, ..., r-(n-2); all-gather steps chunks r+1, r, ..., r+1-(n-2).
void ring_allreduce(const Phase& phase, std::vector<double>& sent) {
  const int n = static_cast<int>(sent.size());
  if (phase.element_bytes <= 0)
    throw topologies::InputError("'" + phase.label + "': an all-reduce of mixed element sizes");
  const auto elements = static_cast<long long>(phase.bytes) / phase.element_bytes;
  for (int r = 0; r < n; ++r) {
    long long values = 0;
    for (int step = 0; step < n - 1; ++step)
      values += chunk(elements, n, ring_wrap(r - step, n)) + chunk(elements, n, ring_wrap(r + 1 - step, n));
    sent[static_cast<size_t>(r)] += static_cast<double>(values) * phase.element_bytes;
  }
}

// A ring reduce-scatter that leaves chunk r on rank r: rank r sends every chunk but its own, once.
void ring_reduce_scatter(const Phase& phase, std::vector<double>& sent) {
  const int n = static_cast<int>(sent.size());
  if (phase.element_bytes <= 0)
    throw topologies::InputError("'" + phase.label + "': a reduce-scatter of mixed element sizes");
  const auto elements = static_cast<long long>(phase.bytes) / phase.element_bytes;
  for (int r = 0; r < n; ++r) {
    sent[static_cast<size_t>(r)] += static_cast<double>(elements - chunk(elements, n, r)) * phase.element_bytes;
  }
}

}  // namespace

std::vector<double> bytes_sent_per_rank(const DecodePlan& plan) {
  const int n = static_cast<int>(plan.gpus.size());
  std::vector<double> sent(static_cast<size_t>(n), 0.0);
  long long tokens = 0;
  for (const Shard& shard : plan.shards) tokens += shard.count;
  for (const Phase& phase : plan.phases) {
    switch (phase.kind) {
      case PhaseKind::ring_pass:  // every block but the successor's own: sum of blocks - block(r + 1)
        for (int r = 0; r < n && n > 1; ++r) {
          sent[static_cast<size_t>(r)] +=
              static_cast<double>(tokens - plan.shards[static_cast<size_t>((r + 1) % n)].count) *
              plan.sizes.kv_bytes_per_token;
        }
        break;
      case PhaseKind::q_ring:  // every owner's query block but the successor's
        for (int r = 0; r < n && n > 1; ++r) {
          const long long held = plan.workload.batch - owned_sequences(plan.workload.batch, n, (r + 1) % n).count;
          sent[static_cast<size_t>(r)] += static_cast<double>(held) * plan.sizes.q_bytes / plan.workload.batch;
        }
        break;
      case PhaseKind::transfers:
        for (const Transfer& t : phase.sends) sent[static_cast<size_t>(t.from)] += t.bytes;
        break;
      case PhaseKind::collective:
        if (n < 2) break;
        if (phase.algorithm != CollectiveAlgorithm::ring) {
          throw topologies::InputError("'" + phase.label + "': per-rank bytes are known for ring collectives only");
        }
        if (phase.op == CollectiveOp::allreduce)
          ring_allreduce(phase, sent);
        else if (phase.op == CollectiveOp::allgather) {
          for (double& bytes : sent) bytes += phase.bytes * (n - 1) / n;  // n - 1 blocks of bytes / n
        } else if (phase.op == CollectiveOp::reduce_scatter) {
          ring_reduce_scatter(phase, sent);
        } else {
          throw topologies::InputError("'" + phase.label + "': per-rank bytes of this collective are not worked out");
        }
        break;
      default: break;
    }
  }
  return sent;
}

}  // namespace treering::model
