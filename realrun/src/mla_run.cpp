// MLA decode with decode context parallelism on the cpu backend (mla_run.hpp): the query all-gather and the
// absorbed kernel in place of the plan's attention; the plan's combine as decode_run.cpp runs it for any workload.
#include "treering/realrun/mla_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "deployed_combines.hpp"
#include "ring_collectives.hpp"
#include "treering/model/workload.hpp"
#include "treering/realrun/input_hash.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {

MlaShape mla_shape_of(const model::Workload& w) {
  if (!model::has_latent_attention(w)) {
    throw topologies::InputError(w.name +
                                 " has no multi-head latent attention (kv_lora_rank 0): the MLA decode "
                                 "runs DeepSeek-style workloads such as deepseek-v2-lite");
  }
  return {w.batch, w.query_heads, w.kv_lora_rank, w.qk_rope_head_dim, w.qk_nope_head_dim, w.v_head_dim};
}

AttentionShape absorbed_shape(const MlaShape& s) {
  AttentionShape shape{s.batch, s.heads, 1, s.latent()};
  shape.value_dim = s.kv_lora_rank;
  shape.scale_dim = s.nope_dim + s.rope_dim;
  check_shape(shape);
  return shape;
}

model::Workload combine_workload(const model::Workload& mla) {
  const MlaShape s = mla_shape_of(mla);
  model::Workload w = mla;
  w.name = mla.name + " (MLA combine: states of kv_lora_rank values)";
  w.kv_heads = 1;
  w.head_dim = s.kv_lora_rank;
  w.hidden_size = s.heads * s.kv_lora_rank;
  w.kv_lora_rank = w.qk_rope_head_dim = w.qk_nope_head_dim = w.v_head_dim = w.q_lora_rank = 0;
  w.kv_cache_dtype = w.dtype;
  w.kv_cache_bytes = w.dtype_bytes;
  return w;
}

namespace {

std::vector<std::uint16_t> hashed(Dtype dtype, std::uint64_t stream, std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint16_t> values(count);
  for (std::uint64_t i = 0; i < count; ++i) values[i] = to_half(dtype, hashed_value(stream, first + i));
  return values;
}

size_t largest_head_slice(const MlaShape& s, int ranks) {
  return static_cast<size_t>(model::owned_heads(s.heads, ranks, 0).count);  // the first ranks own one more
}

// Each rank's head slice of q_abs to every rank: a ring all-gather (ring_collectives.hpp) of equal blocks of
// floats, each the largest slice's 16-bit values padded and packed two to a float (copied as bytes, never
// computed on); then unpacked into [b][n_h][latent].
std::vector<std::uint16_t> gather_queries(detail::CountingLink& link, const MlaShape& s,
                                          const std::vector<std::uint16_t>& mine, int tag) {
  const int ranks = link.ranks();
  const auto latent = static_cast<size_t>(s.latent()), batch = static_cast<size_t>(s.batch);
  const size_t block_values = batch * largest_head_slice(s, ranks) * latent;
  std::vector<float> block((block_values + 1) / 2, 0.0f);
  if (!mine.empty()) std::memcpy(block.data(), mine.data(), mine.size() * 2);
  const std::vector<float> all = ranks > 1 ? detail::ring_allgather(link, block.data(), block.size(), tag) : block;
  std::vector<std::uint16_t> q(batch * static_cast<size_t>(s.heads) * latent);
  for (int r = 0; r < ranks; ++r) {
    const model::Shard heads = model::owned_heads(s.heads, ranks, r);
    const auto* from = reinterpret_cast<const std::uint16_t*>(all.data() + static_cast<size_t>(r) * block.size());
    const size_t row = static_cast<size_t>(heads.count) * latent;  // one sequence's heads of that slice
    for (size_t b = 0; b < batch && row > 0; ++b) {
      std::memcpy(q.data() + (b * static_cast<size_t>(s.heads) + static_cast<size_t>(heads.first)) * latent,
                  from + b * row, row * 2);
    }
  }
  return q;
}

}  // namespace

std::vector<std::uint16_t> mla_queries(const MlaShape& s, Dtype dtype, model::Shard heads, std::uint64_t seed) {
  const auto latent = static_cast<std::uint64_t>(s.latent());
  std::vector<std::uint16_t> q;
  for (std::uint64_t b = 0; b < static_cast<std::uint64_t>(s.batch); ++b) {
    const std::uint64_t first =
        (b * static_cast<std::uint64_t>(s.heads) + static_cast<std::uint64_t>(heads.first)) * latent;
    const std::vector<std::uint16_t> row =
        hashed(dtype, q_stream(seed), first, static_cast<std::uint64_t>(heads.count) * latent);
    q.insert(q.end(), row.begin(), row.end());
  }
  return q;
}

std::vector<std::uint16_t> mla_latents(const MlaShape& s, Dtype dtype, long long first, long long count,
                                       std::uint64_t seed) {
  const auto per_token = static_cast<std::uint64_t>(s.batch) * static_cast<std::uint64_t>(s.latent());
  return hashed(dtype, k_stream(seed), static_cast<std::uint64_t>(first) * per_token,
                static_cast<std::uint64_t>(count) * per_token);
}

std::vector<double> mla_reference(const MlaShape& s, Dtype dtype, std::uint64_t seed, long long tokens) {
  const std::vector<std::uint16_t> q = mla_queries(s, dtype, {0, s.heads}, seed);
  const std::vector<std::uint16_t> latent = mla_latents(s, dtype, 0, tokens, seed);
  return reference_attention(absorbed_shape(s), dtype, q.data(), latent.data(), latent.data(), tokens);
}

double mla_query_gather_bytes(const MlaShape& s, int ranks) {
  const double block_values =
      static_cast<double>(s.batch) * static_cast<double>(largest_head_slice(s, ranks)) * s.latent();
  return ranks > 1 ? (ranks - 1) * 4.0 * std::ceil(block_values / 2) : 0.0;
}

RankResult run_mla_plan(const model::DecodePlan& plan, const MlaShape& s, Dtype dtype, Transport& transport,
                        std::uint64_t seed) {
  const AttentionShape shape = absorbed_shape(s);
  if (plan.workload.batch != s.batch || plan.workload.query_heads != s.heads ||
      plan.workload.head_dim != s.kv_lora_rank) {
    throw topologies::InputError(
        "run_mla_plan: the plan is not for the combine of this MLA shape "
        "(combine_workload: its batch, query heads and head_dim kv_lora_rank)");
  }
  const int rank = transport.rank(), ranks = transport.ranks();
  const model::Shard shard = plan.shards.at(static_cast<size_t>(rank));
  const std::vector<std::uint16_t> latent = mla_latents(s, dtype, shard.first, shard.count, seed);
  const std::vector<std::uint16_t> mine = mla_queries(s, dtype, model::owned_heads(s.heads, ranks, rank), seed);
  const int tag = static_cast<int>(plan.phases.size()) + 1;  // after every phase's (index + 1)
  const detail::OwnAttention attend = [&](detail::CountingLink& link, std::vector<float>& o, std::vector<float>& lse) {
    const std::vector<std::uint16_t> q = gather_queries(link, s, mine, tag);
    partial_attention(shape, dtype, q.data(), latent.data(), latent.data(), shard.count, o.data(), lse.data());
  };
  return detail::run_plan_with(plan, transport, seed, nullptr, &attend);
}

}  // namespace treering::realrun
