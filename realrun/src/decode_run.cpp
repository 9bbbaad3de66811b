// The cpu backend's execution of a plan (decode_run.hpp): per algorithm, the plan's phases in order.
#include "treering/realrun/decode_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "deployed_combines.hpp"
#include "ring_collectives.hpp"
#include "treering/realrun/input_hash.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {

using detail::CountingLink;
using detail::ReduceOp;

AttentionShape shape_of(const model::Workload& w) {
  if (model::has_latent_attention(w)) {
    throw topologies::InputError(w.name +
                                 " has multi-head latent attention: it runs as MLA (treering-realrun decode "
                                 "--backend cpu --algo a2a, ag-rs or a tree), not as grouped-query attention "
                                 "over separate K and V");
  }
  AttentionShape shape{w.batch, w.query_heads, w.kv_heads, w.head_dim};
  check_shape(shape);
  return shape;
}

Dtype dtype_of(const model::Workload& w) {
  if (w.dtype_bytes != 2) throw topologies::InputError("the real run takes 16-bit workloads (bf16 or fp16)");
  return w.dtype == "fp16" ? Dtype::fp16 : Dtype::bf16;
}

namespace {

std::vector<std::uint16_t> hashed(Dtype dtype, std::uint64_t stream, std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint16_t> values(count);
  for (std::uint64_t i = 0; i < count; ++i) values[i] = to_half(dtype, hashed_value(stream, first + i));
  return values;
}

}  // namespace

Inputs make_inputs(const AttentionShape& shape, Dtype dtype, long long first, long long count, std::uint64_t seed) {
  const auto per_token = static_cast<std::uint64_t>(shape.kv_values_per_token());
  return {hashed(dtype, q_stream(seed), 0, static_cast<std::uint64_t>(shape.q_values())),
          hashed(dtype, k_stream(seed), static_cast<std::uint64_t>(first) * per_token,
                 static_cast<std::uint64_t>(count) * per_token),
          hashed(dtype, v_stream(seed), static_cast<std::uint64_t>(first) * per_token,
                 static_cast<std::uint64_t>(count) * per_token)};
}

std::vector<long long> sampled_states(const AttentionShape& shape) {
  const int group = shape.query_heads / shape.kv_heads;
  const long long last = shape.states() - 1;
  std::vector<long long> states{0, group / 2, last, last - group / 2};
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());
  return states;
}

namespace {

// One state's online softmax in double: the running max, the sum of weights, and o's numerator.
struct ReferenceState {
  long long index = 0;
  std::vector<double> q, acc;
  double top = -std::numeric_limits<double>::infinity(), sum = 0;
  void add(double score, const std::vector<double>& v) {
    if (score > top) {  // rescale to the new max
      const double rescale = std::exp(top - score);
      sum *= rescale;
      for (double& a : acc) a *= rescale;
      top = score;
    }
    const double weight = std::exp(score - top);
    sum += weight;
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += weight * v[i];
  }
};

}  // namespace

std::vector<double> hashed_reference(const AttentionShape& shape, Dtype dtype, std::uint64_t seed, long long tokens,
                                     const std::vector<long long>& states) {
  check_shape(shape);
  const int d = shape.head_dim, group = shape.query_heads / shape.kv_heads;
  const auto per_token = static_cast<std::uint64_t>(shape.kv_values_per_token());
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  auto values = [dtype, d](std::uint64_t stream, std::uint64_t first, std::vector<double>& out) {
    for (int i = 0; i < d; ++i)
      out[static_cast<size_t>(i)] =
          from_half(dtype, to_half(dtype, hashed_value(stream, first + static_cast<std::uint64_t>(i))));
  };
  std::vector<double> o(states.size() * static_cast<size_t>(d), 0.0);
  std::vector<bool> done(states.size(), false);
  std::vector<double> k(static_cast<size_t>(d)), v(static_cast<size_t>(d));
  for (size_t n = 0; n < states.size(); ++n) {
    if (states[n] < 0 || states[n] >= shape.states())
      throw std::logic_error("hashed_reference: no state " + std::to_string(states[n]));
    if (done[n]) continue;
    const long long kv_row = states[n] / shape.query_heads * shape.kv_heads + states[n] % shape.query_heads / group;
    std::vector<std::pair<size_t, ReferenceState>> sharing;  // the states of this KV row: its values hashed once
    for (size_t m = n; m < states.size(); ++m) {
      if (states[m] / shape.query_heads * shape.kv_heads + states[m] % shape.query_heads / group != kv_row) continue;
      ReferenceState state{states[m], std::vector<double>(static_cast<size_t>(d)),
                           std::vector<double>(static_cast<size_t>(d), 0.0)};
      values(q_stream(seed), static_cast<std::uint64_t>(states[m] * d), state.q);
      sharing.emplace_back(m, std::move(state));
      done[m] = true;
    }
    const auto offset = static_cast<std::uint64_t>(kv_row * d);
    for (long long t = 0; t < tokens; ++t) {
      values(k_stream(seed), static_cast<std::uint64_t>(t) * per_token + offset, k);
      values(v_stream(seed), static_cast<std::uint64_t>(t) * per_token + offset, v);
      for (auto& [m, state] : sharing) {
        double score = 0;
        for (int i = 0; i < d; ++i) score += state.q[static_cast<size_t>(i)] * k[static_cast<size_t>(i)];
        state.add(score * scale, v);
      }
    }
    for (const auto& [m, state] : sharing) {
      for (int i = 0; i < d; ++i)
        o[m * static_cast<size_t>(d) + static_cast<size_t>(i)] =
            tokens > 0 ? state.acc[static_cast<size_t>(i)] / state.sum : 0.0;
    }
  }
  return o;
}

namespace {

struct Run {
  const model::DecodePlan& plan;
  CountingLink link;
  AttentionShape shape;
  Dtype dtype;
  std::uint64_t seed;
  int rank, ranks;
  const detail::OwnAttention* own;  // none: the plan's attention over `mine`; else this instead (MLA)
  Inputs mine;                      // q and this rank's shard
  std::vector<float> o, lse;        // the rank's state
  std::vector<float> numerator, denominator, top;
  std::vector<float> gathered;  // allgather-merge: every rank's (o, lse); ag-rs: every rank's lse

  size_t o_values() const { return static_cast<size_t>(shape.q_values()); }
  size_t states() const { return static_cast<size_t>(shape.states()); }
  int tag(size_t phase) const { return static_cast<int>(phase) + 1; }

  void attend(const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v, long long tokens) {
    partial_attention(shape, dtype, mine.q.data(), k.data(), v.data(), tokens, o.data(), lse.data());
  }

  void merge_into(const float* other_o, const float* other_lse) {
    for (size_t s = 0; s < states(); ++s) {
      merge_state(o.data() + s * static_cast<size_t>(shape.head_dim), lse[s],
                  other_o + s * static_cast<size_t>(shape.head_dim), other_lse[s], shape.head_dim);
    }
  }

  long long block(int index) const { return plan.shards[static_cast<size_t>((index % ranks + ranks) % ranks)].count; }

  // p rounds: attend to the held block; it travels on to the next rank and the next block comes in (during the
  // attention when the plan overlaps them, after it when not).
  // Before the clock: the ring's two buffers of the largest block, [K | V] each, allocated and touched (page
  // faults are not the algorithm's), the first holding this rank's own block.
  std::vector<std::uint16_t>& held;  // RingBuffers: kept across runs by a caller that repeats the plan
  std::vector<std::uint16_t>& next;
  detail::PassQInputs pass_q;  // pass-q: each owner's q and K/V, laid out before the clock
  detail::RankView view() { return {plan, link, shape, dtype, rank, ranks, mine, o, lse}; }

  void prepare() {
    if (model::has_phase(plan, model::PhaseRole::q_ring)) pass_q = detail::pass_q_inputs(view());
    if (!model::has_phase(plan, model::PhaseRole::kv_ring)) return;
    long long largest = 0;
    for (const model::Shard& shard : plan.shards) largest = std::max(largest, shard.count);
    held.assign(2 * static_cast<size_t>(shape.kv_values_per_token()) * static_cast<size_t>(largest), 0);
    next.assign(held.size(), 0);
    if (mine.k.empty()) return;  // an empty shard (more ranks than tokens): nothing to copy (memcpy needs pointers)
    std::memcpy(held.data(), mine.k.data(), mine.k.size() * 2);
    std::memcpy(held.data() + mine.k.size(), mine.v.data(), mine.v.size() * 2);
  }

  // The two buffers swap every round (no copies, no allocation).
  void ring_pass(size_t phase) {
    const size_t per_token = static_cast<size_t>(shape.kv_values_per_token());
    std::vector<float> part_o(o_values()), part_lse(states());
    std::fill(o.begin(), o.end(), 0.0f);
    std::fill(lse.begin(), lse.end(), -std::numeric_limits<float>::infinity());
    for (int round = 0; round < ranks; ++round) {
      const long long tokens = block(rank - round);
      const long long coming = round < ranks - 1 ? block(rank - round - 1) : 0;
      const size_t bytes = 2 * per_token * static_cast<size_t>(tokens) * 2;
      Transport::Request sent = -1, received = -1;
      auto post = [&] {
        if (round < ranks - 1 && tokens > 0) sent = link.isend(held.data(), bytes, (rank + 1) % ranks, tag(phase));
        if (coming > 0)
          received = link.irecv(next.data(), 2 * per_token * static_cast<size_t>(coming) * 2,
                                (rank + ranks - 1) % ranks, tag(phase));
      };
      // As the plan's steps say: with overlap, the transfers are in flight during the attention; without (the
      // cpu backend: the cores that attend also copy), they start after it and end before the next round.
      // Posting them early anyway gains nothing there and made Open MPI's single-copy path 3-10x slower.
      if (plan.ring_overlap) post();
      partial_attention(shape, dtype, mine.q.data(), held.data(), held.data() + per_token * static_cast<size_t>(tokens),
                        tokens, part_o.data(), part_lse.data());
      merge_into(part_o.data(), part_lse.data());
      if (!plan.ring_overlap) post();
      link.wait(received);
      link.wait(sent);
      held.swap(next);
    }
  }

  // tree-lse: send this rank's state (reduce) or o (broadcast) where the plan says, then merge what came in.
  void transfers(size_t phase_index) {
    const model::Phase& phase = plan.phases.at(phase_index);
    const bool reduce = phase.merge_states > 0;
    std::vector<float> packed(o);
    if (reduce) packed.insert(packed.end(), lse.begin(), lse.end());
    std::vector<Transport::Request> sends;
    std::vector<std::vector<float>> received;
    std::vector<Transport::Request> receives;
    for (const model::Transfer& t : phase.sends) {
      if (static_cast<double>(packed.size() * 4) != t.bytes)
        throw std::logic_error("transfer size differs from the plan's");
      if (t.from == rank) sends.push_back(link.isend(packed.data(), packed.size() * 4, t.to, tag(phase_index)));
      if (t.to == rank) {
        received.emplace_back(packed.size());
        receives.push_back(link.irecv(received.back().data(), packed.size() * 4, t.from, tag(phase_index)));
      }
    }
    for (size_t i = 0; i < receives.size(); ++i) {
      link.wait(receives[i]);
      if (reduce)
        merge_into(received[i].data(), received[i].data() + o_values());
      else
        std::memcpy(o.data(), received[i].data(), o_values() * 4);
    }
    for (Transport::Request request : sends) link.wait(request);
  }

  void allreduce(size_t phase, std::vector<float>& values, ReduceOp op) {
    if (static_cast<double>(values.size() * 4) != plan.phases.at(phase).bytes)
      throw std::logic_error("all-reduce size differs from the plan's");
    detail::ring_allreduce(link, values.data(), values.size(), op, tag(phase));
  }

  // The tree's rescale: numerators o e^(lse-m) and denominators e^(lse-m), m the all-reduced max (top).
  void rescale_to_max() {
    numerator.assign(o_values(), 0.0f);
    denominator.assign(states(), 0.0f);
    for (size_t s = 0; s < states(); ++s) {
      denominator[s] = std::exp(lse[s] - top[s]);
      for (int i = 0; i < shape.head_dim; ++i)
        numerator[s * shape.head_dim + i] = o[s * shape.head_dim + i] * denominator[s];
    }
  }

  // tree-fused: one all-reduce over [numerator | denominator].
  void sum_rescaled(size_t phase) {
    numerator.insert(numerator.end(), denominator.begin(), denominator.end());
    allreduce(phase, numerator, ReduceOp::sum);
    denominator.assign(numerator.begin() + static_cast<std::ptrdiff_t>(o_values()), numerator.end());
    numerator.resize(o_values());
  }

  void divide() {
    for (size_t s = 0; s < states(); ++s) {
      for (int i = 0; i < shape.head_dim; ++i)
        o[s * shape.head_dim + i] = numerator[s * shape.head_dim + i] / denominator[s];
    }
  }

  void gather_states(size_t phase) {
    std::vector<float> state(o);
    state.insert(state.end(), lse.begin(), lse.end());
    if (static_cast<double>(state.size() * 4 * static_cast<size_t>(ranks)) != plan.phases.at(phase).bytes) {
      throw std::logic_error("all-gather size differs from the plan's");
    }
    gathered = detail::ring_allgather(link, state.data(), state.size(), tag(phase));
  }

  void merge_gathered() {
    const size_t state = o_values() + states();
    std::fill(o.begin(), o.end(), 0.0f);
    std::fill(lse.begin(), lse.end(), -std::numeric_limits<float>::infinity());
    for (int r = 0; r < ranks; ++r) {
      const float* other = gathered.data() + static_cast<size_t>(r) * state;
      merge_into(other, other + o_values());
    }
  }

  // One phase, by its role (model::PhaseRole): the plan's order is the run's.
  void run_phase(size_t index) {
    using model::PhaseRole;
    detail::RankView rank_view = view();
    switch (plan.phases.at(index).role) {
      case PhaseRole::attention:
        if (own != nullptr) return (*own)(link, o, lse);
        return attend(mine.k, mine.v, plan.shards[static_cast<size_t>(rank)].count);
      case PhaseRole::kv_ring: return ring_pass(index);
      case PhaseRole::q_ring: return detail::run_q_ring(rank_view, pass_q, index);
      case PhaseRole::normalise: return;  // the ring's merges keep o normalised
      case PhaseRole::lse_max: top = lse; return allreduce(index, top, ReduceOp::max);
      case PhaseRole::rescale: return rescale_to_max();
      case PhaseRole::numerator_sum: return allreduce(index, numerator, ReduceOp::sum);
      case PhaseRole::denominator_sum: return allreduce(index, denominator, ReduceOp::sum);
      case PhaseRole::rescaled_sum: return sum_rescaled(index);
      case PhaseRole::divide: return divide();
      case PhaseRole::state_reduce:
      case PhaseRole::output_broadcast: return transfers(index);
      case PhaseRole::state_gather: return gather_states(index);
      case PhaseRole::merge_gathered: return merge_gathered();
      case PhaseRole::states_to_sequence_owners: return detail::exchange_with_sequence_owners(rank_view, index);
      case PhaseRole::states_to_head_owners: return detail::exchange_with_head_owners(rank_view, index);
      case PhaseRole::lse_gather: gathered = detail::gather_lse(rank_view, index); return;
      case PhaseRole::rescale_to_global: return detail::rescale_to_global(rank_view, gathered);
      case PhaseRole::rescaled_reduce_scatter: return detail::reduce_scatter_o(rank_view, index);
      case PhaseRole::query_gather:  // realrun's ranks start with every query (realrun_plans never gather them)
        throw std::logic_error("realrun: a plan that gathers the queries (decode context parallelism) is not run here");
      case PhaseRole::implementation: return;  // an implementation profile's own work: time, not data
    }
  }

  void execute() {
    for (size_t index = 0; index < plan.phases.size(); ++index) run_phase(index);
    if (model::algorithm_info(plan).output_split != model::OutputSplit::replicated) detail::keep_held(view());
  }
};

}  // namespace

std::vector<std::pair<long long, long long>> held_output(const model::DecodePlan& plan, int rank) {
  std::vector<std::pair<long long, long long>> spans;
  for (const model::ValueSpan& span : model::output_held(plan, rank)) spans.emplace_back(span.first, span.count);
  return spans;
}

RankResult run_plan(const model::DecodePlan& plan, Transport& transport, std::uint64_t seed, RingBuffers* buffers) {
  return detail::run_plan_with(plan, transport, seed, buffers, nullptr);
}

namespace detail {

RankResult run_plan_with(const model::DecodePlan& plan, Transport& transport, std::uint64_t seed, RingBuffers* buffers,
                         const OwnAttention* own) {
  RingBuffers mine;
  RingBuffers& ring = buffers != nullptr ? *buffers : mine;
  if (own != nullptr &&
      (plan.algorithm == model::DecodeAlgorithm::ring || plan.algorithm == model::DecodeAlgorithm::pass_q)) {
    throw topologies::InputError(std::string(model::to_string(plan.algorithm)) +
                                 " moves K/V or queries between ranks, which a rank's own attention does not");
  }
  if (static_cast<int>(plan.gpus.size()) != transport.ranks()) {
    throw topologies::InputError("the plan is for " + std::to_string(plan.gpus.size()) + " ranks, the run has " +
                                 std::to_string(transport.ranks()));
  }
  const AttentionShape shape = shape_of(plan.workload);
  if (plan.sizes.o_bytes != static_cast<double>(shape.q_values() * 4) ||
      plan.sizes.stats_bytes != static_cast<double>(shape.states() * 4)) {
    throw topologies::InputError(
        "the cpu backend runs plans made with realrun::plan_options(Backend::cpu) (fp32 partial states)");
  }
  const int rank = transport.rank();
  const model::Shard& shard = plan.shards[static_cast<size_t>(rank)];
  Run run{plan,
          {transport, 0.0},
          shape,
          dtype_of(plan.workload),
          seed,
          rank,
          transport.ranks(),
          own,
          own != nullptr ? Inputs{} : make_inputs(shape, dtype_of(plan.workload), shard.first, shard.count, seed),
          std::vector<float>(static_cast<size_t>(shape.q_values())),
          std::vector<float>(static_cast<size_t>(shape.states())),
          {},
          {},
          {},
          {},
          ring.held,
          ring.next,
          {}};
  run.prepare();
  transport.barrier();
  const double start = transport.now_s();
  run.execute();
  return {std::move(run.o), run.link.bytes_sent, transport.now_s() - start};
}

}  // namespace detail

}  // namespace treering::realrun
