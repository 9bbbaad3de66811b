// pass-q, a2a and ag-rs on the cpu backend (deployed_combines.hpp).
#include "deployed_combines.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "treering/realrun/merge.hpp"

namespace treering::realrun::detail {
namespace {

constexpr float kNoTokens = -std::numeric_limits<float>::infinity();

size_t sequence_values(const AttentionShape& s) {
  return static_cast<size_t>(s.query_heads) * static_cast<size_t>(s.head_dim);
}

void check_bytes(double bytes, double planned, const char* what) {
  if (bytes != planned) throw std::logic_error(std::string(what) + ": size differs from the plan's");
}

// The packed states [o of each state | lse of each state] of `count` (sequence, head) states given by `index`.
template <typename Index>
std::vector<float> pack(const RankView& view, size_t count, Index index) {
  const auto d = static_cast<size_t>(view.shape.head_dim);
  std::vector<float> packed(count * (d + 1));
  for (size_t i = 0; i < count; ++i) {
    const size_t state = index(i);
    std::copy_n(view.o.begin() + static_cast<std::ptrdiff_t>(state * d), d,
                packed.begin() + static_cast<std::ptrdiff_t>(i * d));
    packed[count * d + i] = view.lse[state];
  }
  return packed;
}

// Sends each owner its states, receives this rank's from every other rank and merges them in (the plan's
// transfers phase `phase`: sends and sizes checked against it).
template <typename StatesOf>
void exchange_and_merge(RankView& view, size_t phase, StatesOf states_of) {
  const auto d = static_cast<size_t>(view.shape.head_dim);
  const int tag = static_cast<int>(phase) + 1;
  std::vector<std::vector<float>> outgoing(static_cast<size_t>(view.ranks)), incoming;
  std::vector<Transport::Request> sends, receives;
  const std::vector<size_t> my_states = states_of(view.rank);
  for (const model::Transfer& t : view.plan.phases.at(phase).sends) {
    if (t.from == view.rank) {
      const std::vector<size_t> theirs = states_of(t.to);
      auto& packed = outgoing[static_cast<size_t>(t.to)];
      packed = pack(view, theirs.size(), [&](size_t i) { return theirs[i]; });
      check_bytes(static_cast<double>(packed.size() * 4), t.bytes, "all-to-all");
      sends.push_back(view.link.isend(packed.data(), packed.size() * 4, t.to, tag));
    }
    if (t.to == view.rank) {
      incoming.emplace_back(my_states.size() * (d + 1));
      receives.push_back(view.link.irecv(incoming.back().data(), incoming.back().size() * 4, t.from, tag));
    }
  }
  for (size_t i = 0; i < receives.size(); ++i) {
    view.link.wait(receives[i]);
    const std::vector<float>& got = incoming[i];
    for (size_t j = 0; j < my_states.size(); ++j) {
      const size_t state = my_states[j];
      merge_state(view.o.data() + state * d, view.lse[state], got.data() + j * d, got[my_states.size() * d + j],
                  view.shape.head_dim);
    }
  }
  for (Transport::Request request : sends) view.link.wait(request);
}

std::vector<size_t> states_of_sequences(const RankView& view, int owner) {
  const model::Shard sequences = model::owned_sequences(view.shape.batch, view.ranks, owner);
  std::vector<size_t> states;
  for (long long s = sequences.first; s < sequences.first + sequences.count; ++s) {
    for (int h = 0; h < view.shape.query_heads; ++h)
      states.push_back(static_cast<size_t>(s) * static_cast<size_t>(view.shape.query_heads) + static_cast<size_t>(h));
  }
  return states;
}

}  // namespace

// Zero every value of o outside the rank's part (model::output_held).
void keep_held(const RankView& view) {
  std::vector<float> held(view.o.size(), 0.0f);
  for (const model::ValueSpan& span : model::output_held(view.plan, view.rank)) {
    std::copy_n(view.o.begin() + span.first, span.count, held.begin() + span.first);
  }
  view.o.swap(held);
}

PassQInputs pass_q_inputs(const RankView& view) {
  PassQInputs inputs;
  const size_t per_sequence_kv = static_cast<size_t>(view.shape.kv_heads) * static_cast<size_t>(view.shape.head_dim);
  const size_t row = per_sequence_kv * static_cast<size_t>(view.shape.batch);
  const long long tokens = view.plan.shards[static_cast<size_t>(view.rank)].count;
  for (int owner = 0; owner < view.ranks; ++owner) {
    const model::Shard sequences = model::owned_sequences(view.shape.batch, view.ranks, owner);
    const auto first = static_cast<size_t>(sequences.first), count = static_cast<size_t>(sequences.count);
    inputs.q.emplace_back(
        view.mine.q.begin() + static_cast<std::ptrdiff_t>(first * sequence_values(view.shape)),
        view.mine.q.begin() + static_cast<std::ptrdiff_t>((first + count) * sequence_values(view.shape)));
    std::vector<std::uint16_t> k(static_cast<size_t>(tokens) * count * per_sequence_kv), v(k.size());
    for (size_t t = 0; t < static_cast<size_t>(tokens) && count > 0; ++t) {
      std::memcpy(k.data() + t * count * per_sequence_kv, view.mine.k.data() + t * row + first * per_sequence_kv,
                  count * per_sequence_kv * 2);
      std::memcpy(v.data() + t * count * per_sequence_kv, view.mine.v.data() + t * row + first * per_sequence_kv,
                  count * per_sequence_kv * 2);
    }
    inputs.k.push_back(std::move(k));
    inputs.v.push_back(std::move(v));
  }
  return inputs;
}

// Round r: attend the held query block (owner (rank - r) mod p) to the shard, pass it to rank + 1 (after the
// attention: the cpu backend's plans do not overlap), take the next from rank - 1.
void run_q_ring(RankView& view, const PassQInputs& inputs, size_t phase) {
  const int p = view.ranks;
  const int tag = static_cast<int>(phase) + 1;
  const long long tokens = view.plan.shards[static_cast<size_t>(view.rank)].count;
  const double q_per_sequence = view.plan.sizes.q_bytes / view.shape.batch;
  std::vector<std::uint16_t> held = inputs.q[static_cast<size_t>(view.rank)], next;
  std::fill(view.o.begin(), view.o.end(), 0.0f);
  std::fill(view.lse.begin(), view.lse.end(), kNoTokens);
  for (int round = 0; round < p; ++round) {
    const int owner = ((view.rank - round) % p + p) % p;
    const model::Shard sequences = model::owned_sequences(view.shape.batch, p, owner);
    if (sequences.count > 0) {
      AttentionShape part = view.shape;
      part.batch = static_cast<int>(sequences.count);
      const size_t state = static_cast<size_t>(sequences.first) * static_cast<size_t>(view.shape.query_heads);
      partial_attention(part, view.dtype, held.data(), inputs.k[static_cast<size_t>(owner)].data(),
                        inputs.v[static_cast<size_t>(owner)].data(), tokens,
                        view.o.data() + state * static_cast<size_t>(view.shape.head_dim), view.lse.data() + state);
    }
    if (round == p - 1) break;
    Transport::Request sent = -1, received = -1;
    if (sequences.count > 0) {
      check_bytes(static_cast<double>(held.size() * 2), static_cast<double>(sequences.count) * q_per_sequence,
                  "query block");
      sent = view.link.isend(held.data(), held.size() * 2, (view.rank + 1) % p, tag);
    }
    const model::Shard coming = model::owned_sequences(view.shape.batch, p, (owner - 1 + p) % p);
    next.assign(static_cast<size_t>(coming.count) * sequence_values(view.shape), 0);
    if (coming.count > 0) received = view.link.irecv(next.data(), next.size() * 2, (view.rank + p - 1) % p, tag);
    view.link.wait(received);
    view.link.wait(sent);
    held.swap(next);
  }
}

// Then the all-to-all home: each sequence's partial states to its owner, merged there.
void exchange_with_sequence_owners(RankView& view, size_t phase) {
  exchange_and_merge(view, phase, [&](int owner) { return states_of_sequences(view, owner); });
}

void exchange_with_head_owners(RankView& view, size_t phase) {
  exchange_and_merge(view, phase, [&](int owner) {
    const model::Shard heads = model::owned_heads(view.shape.query_heads, view.ranks, owner);
    std::vector<size_t> states;
    for (int s = 0; s < view.shape.batch; ++s) {
      for (long long h = heads.first; h < heads.first + heads.count; ++h) {
        states.push_back(static_cast<size_t>(s) * static_cast<size_t>(view.shape.query_heads) + static_cast<size_t>(h));
      }
    }
    return states;
  });
}

// ag-rs: the global lse of each state from every rank's (all-gathered), each o weighted by exp(lse - global),
// summed by a ring reduce-scatter that leaves chunk r of the buffer on rank r.
std::vector<float> gather_lse(RankView& view, size_t phase) {
  const size_t states = view.lse.size();
  check_bytes(static_cast<double>(states * 4 * static_cast<size_t>(view.ranks)), view.plan.phases.at(phase).bytes,
              "all-gather of lse");
  return view.ranks > 1 ? ring_allgather(view.link, view.lse.data(), states, static_cast<int>(phase) + 1) : view.lse;
}

void rescale_to_global(RankView& view, const std::vector<float>& all) {
  const size_t states = view.lse.size();
  const auto d = static_cast<size_t>(view.shape.head_dim);
  for (size_t s = 0; s < states; ++s) {
    float top = kNoTokens;
    for (int r = 0; r < view.ranks; ++r) top = std::max(top, all[static_cast<size_t>(r) * states + s]);
    float sum = 0;
    for (int r = 0; r < view.ranks && top != kNoTokens; ++r)
      sum += std::exp(all[static_cast<size_t>(r) * states + s] - top);
    const float weight = top == kNoTokens ? 0.0f : std::exp(view.lse[s] - (top + std::log(sum)));
    for (size_t i = 0; i < d; ++i) view.o[s * d + i] *= weight;
  }
}

void reduce_scatter_o(RankView& view, size_t phase) {
  check_bytes(static_cast<double>(view.o.size() * 4), view.plan.phases.at(phase).bytes, "reduce-scatter");
  if (view.ranks > 1) ring_reduce_scatter(view.link, view.o.data(), view.o.size(), static_cast<int>(phase) + 1);
}

}  // namespace treering::realrun::detail
