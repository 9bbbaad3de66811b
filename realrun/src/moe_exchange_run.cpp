// run_moe_layer (moe_run.hpp): dispatch, experts and combine over the transport's ranks.
#include <algorithm>
#include <set>
#include <string>

#include "treering/realrun/moe_run.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {
namespace {

constexpr int kCountTag = 41, kExpertTag = 42, kStatesTag = 43, kOutputTag = 44;

// What a rank sends one peer in the dispatch: its copies' tokens and slots (kept to place the outputs), the
// experts and the states (sent).
struct Outgoing {
  std::vector<int> token, slot, expert;
  std::vector<float> states;
};

// What it receives from one peer: the experts and states, then the outputs it computes for them.
struct Incoming {
  int count = 0;
  std::vector<int> expert;
  std::vector<float> states, outputs;
};

std::vector<Outgoing> sort_copies(const MoeShape& shape, const std::vector<Routing>& routings,
                                  const std::vector<float>& states, int ranks, MoeRankResult& result) {
  const int per_rank = shape.experts / ranks;
  std::vector<Outgoing> out(static_cast<std::size_t>(ranks));
  double destinations = 0;
  for (std::size_t t = 0; t < routings.size(); ++t) {
    std::set<int> reached;
    for (std::size_t slot = 0; slot < routings[t].experts.size(); ++slot) {
      const int expert = routings[t].experts[slot];
      Outgoing& to = out[static_cast<std::size_t>(expert / per_rank)];
      reached.insert(expert / per_rank);
      to.token.push_back(static_cast<int>(t));
      to.slot.push_back(static_cast<int>(slot));
      to.expert.push_back(expert);
      const float* x = states.data() + t * static_cast<std::size_t>(shape.hidden);
      to.states.insert(to.states.end(), x, x + shape.hidden);
      ++result.copies_sent;
    }
    destinations += static_cast<double>(reached.size());
  }
  result.destination_ranks_per_token = routings.empty() ? 0.0 : destinations / static_cast<double>(routings.size());
  return out;
}

void wait_all(Transport& transport, std::vector<Transport::Request>& requests) {
  for (Transport::Request request : requests) transport.wait(request);
  requests.clear();
}

// The counts, then the experts and states, to every other rank; a rank's copies to itself stay.
std::vector<Incoming> dispatch(Transport& transport, const MoeShape& shape, std::vector<Outgoing>& out,
                               MoeRankResult& result) {
  const int ranks = transport.ranks(), me = transport.rank();
  std::vector<Incoming> in(static_cast<std::size_t>(ranks));
  std::vector<int> sent_counts(static_cast<std::size_t>(ranks));
  std::vector<Transport::Request> requests;
  for (int peer = 0; peer < ranks; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    sent_counts[p] = static_cast<int>(out[p].expert.size());
    if (peer == me) continue;
    requests.push_back(transport.irecv(&in[p].count, sizeof(int), peer, kCountTag));
    requests.push_back(transport.isend(&sent_counts[p], sizeof(int), peer, kCountTag));
  }
  wait_all(transport, requests);
  in[static_cast<std::size_t>(me)] = {sent_counts[static_cast<std::size_t>(me)],
                                      out[static_cast<std::size_t>(me)].expert,
                                      out[static_cast<std::size_t>(me)].states,
                                      {}};
  const std::size_t hidden = static_cast<std::size_t>(shape.hidden);
  for (int peer = 0; peer < ranks; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    if (peer == me) continue;
    in[p].expert.resize(static_cast<std::size_t>(in[p].count));
    in[p].states.resize(static_cast<std::size_t>(in[p].count) * hidden);
    if (in[p].count > 0) {
      requests.push_back(transport.irecv(in[p].expert.data(), in[p].expert.size() * sizeof(int), peer, kExpertTag));
      requests.push_back(transport.irecv(in[p].states.data(), in[p].states.size() * sizeof(float), peer, kStatesTag));
    }
    if (!out[p].expert.empty()) {
      requests.push_back(transport.isend(out[p].expert.data(), out[p].expert.size() * sizeof(int), peer, kExpertTag));
      requests.push_back(transport.isend(out[p].states.data(), out[p].states.size() * sizeof(float), peer, kStatesTag));
      result.dispatch_bytes +=
          static_cast<double>(out[p].expert.size() * sizeof(int) + out[p].states.size() * sizeof(float));
    }
  }
  wait_all(transport, requests);
  return in;
}

// The combine: each peer's outputs back in the order its copies came, placed at their tokens' slots.
std::vector<std::vector<std::vector<float>>> combine(Transport& transport, const MoeShape& shape,
                                                     const std::vector<Routing>& routings,
                                                     const std::vector<Outgoing>& out, std::vector<Incoming>& in,
                                                     MoeRankResult& result) {
  const int ranks = transport.ranks(), me = transport.rank();
  const std::size_t hidden = static_cast<std::size_t>(shape.hidden);
  std::vector<std::vector<float>> returned(static_cast<std::size_t>(ranks));
  std::vector<Transport::Request> requests;
  for (int peer = 0; peer < ranks; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    if (peer == me) {
      returned[p] = in[p].outputs;
      continue;
    }
    returned[p].resize(out[p].expert.size() * hidden);
    if (!returned[p].empty())
      requests.push_back(transport.irecv(returned[p].data(), returned[p].size() * sizeof(float), peer, kOutputTag));
    if (!in[p].outputs.empty()) {
      requests.push_back(transport.isend(in[p].outputs.data(), in[p].outputs.size() * sizeof(float), peer, kOutputTag));
      result.combine_bytes += static_cast<double>(in[p].outputs.size() * sizeof(float));
    }
  }
  wait_all(transport, requests);
  std::vector<std::vector<std::vector<float>>> slots(routings.size());
  for (std::size_t t = 0; t < slots.size(); ++t) slots[t].resize(routings[t].experts.size());
  for (int peer = 0; peer < ranks; ++peer) {
    const Outgoing& sent = out[static_cast<std::size_t>(peer)];
    for (std::size_t c = 0; c < sent.expert.size(); ++c) {
      const float* y = returned[static_cast<std::size_t>(peer)].data() + c * hidden;
      slots[static_cast<std::size_t>(sent.token[c])][static_cast<std::size_t>(sent.slot[c])].assign(y, y + hidden);
    }
  }
  return slots;
}

}  // namespace

MoeRankResult run_moe_layer(Transport& transport, const MoeShape& shape, int tokens_per_rank, std::uint64_t seed) {
  const int ranks = transport.ranks(), me = transport.rank();
  if (shape.experts % ranks != 0)
    throw topologies::InputError(std::to_string(ranks) + " ranks do not split the " + std::to_string(shape.experts) +
                                 " routed experts evenly");
  if (tokens_per_rank < 0) throw topologies::InputError("--batch must be at least 0");
  MoeRankResult result;
  result.tokens = tokens_per_rank;
  const std::size_t hidden = static_cast<std::size_t>(shape.hidden);
  const std::vector<float> states = token_states(shape, me, tokens_per_rank, seed);
  std::vector<Routing> routings;
  for (int t = 0; t < tokens_per_rank; ++t)
    routings.push_back(route(shape, router_scores(shape, states.data() + static_cast<std::size_t>(t) * hidden, seed)));
  std::vector<ExpertWeights> local;  // this rank's experts, made before the clock starts
  const int per_rank = shape.experts / ranks;
  for (int e = 0; e < per_rank; ++e) local.push_back(expert_weights(shape, me * per_rank + e, seed));
  transport.barrier();
  double start_s = transport.now_s();
  std::vector<Outgoing> out = sort_copies(shape, routings, states, ranks, result);
  std::vector<Incoming> in = dispatch(transport, shape, out, result);
  result.dispatch_s = transport.now_s() - start_s;
  start_s = transport.now_s();
  for (Incoming& from : in) {
    for (int c = 0; c < from.count; ++c) {
      const std::vector<float> y = expert_forward(
          shape, local[static_cast<std::size_t>(from.expert[static_cast<std::size_t>(c)] - me * per_rank)],
          from.states.data() + static_cast<std::size_t>(c) * hidden);
      from.outputs.insert(from.outputs.end(), y.begin(), y.end());
    }
  }
  result.experts_s = transport.now_s() - start_s;
  start_s = transport.now_s();
  const std::vector<std::vector<std::vector<float>>> slots = combine(transport, shape, routings, out, in, result);
  result.combine_s = transport.now_s() - start_s;
  // the layer's output, then the one-rank reference of it
  const std::vector<float> want = reference_layer(shape, states, tokens_per_rank, seed);
  const std::vector<ExpertWeights> shared = shared_weights(shape, seed);
  for (int t = 0; t < tokens_per_rank; ++t) {
    const std::size_t at = static_cast<std::size_t>(t) * hidden;
    const std::vector<float> got = combine_token(shape, routings[static_cast<std::size_t>(t)],
                                                 slots[static_cast<std::size_t>(t)], states.data() + at, shared);
    const std::vector<float> expected(want.begin() + static_cast<long>(at),
                                      want.begin() + static_cast<long>(at + hidden));
    result.max_relative_error = std::max(result.max_relative_error, moe_relative_error(got, expected));
  }
  return result;
}

}  // namespace treering::realrun
