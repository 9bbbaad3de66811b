// Executing a decode plan for real, rank by rank, on the CPU: the plan's attention on each rank's shard, its
// ring passes, point-to-point transfers and collectives (rings, as the plan is made for: see plan_options()),
// with the bytes each rank sends counted as they go. The inputs are made up the same way on every rank
// (a hash of their position), so that each rank builds only its shard and any rank can build the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/model/realrun_plans.hpp"
#include "treering/realrun/attention.hpp"
#include "treering/realrun/transport.hpp"

namespace treering::realrun {

// The backends and the plan options they run (model/realrun_plans.hpp: fp32 partial states, ring collectives,
// the ring overlapped on cuda only), under realrun's names.
using Backend = model::RealrunBackend;
inline Backend parse_backend(const std::string& name) { return model::parse_realrun_backend(name); }
inline model::PlanOptions plan_options(Backend backend) { return model::realrun_plan_options(backend); }

AttentionShape shape_of(const model::Workload& workload);
Dtype dtype_of(const model::Workload& workload);  // throws std::invalid_argument unless 2-byte elements

// Deterministic inputs in [-1, 1): q, and K and V for tokens [first, first + count), in attention.hpp's layout.
struct Inputs {
  std::vector<std::uint16_t> q, k, v;
};
Inputs make_inputs(const AttentionShape& shape, Dtype dtype, long long first, long long count, std::uint64_t seed);

// The double-precision reference of make_inputs' attention over [0, tokens) for some states only ((sequence, query
// head) indices, [b][n_h] order), computed from the inputs' hash one token at a time: nothing of the context is
// stored, so a million-token check costs seconds and no memory. Returns states.size() x head_dim values.
std::vector<double> hashed_reference(const AttentionShape& shape, Dtype dtype, std::uint64_t seed, long long tokens,
                                     const std::vector<long long>& states);
// The states such a check samples: the first and the last, and in each one's KV head the query head half a group
// away (the KV head's values are hashed once for both). Example: b 1, n_h 32, n_kv 8 (g 4): 0, 2, 31, 29.
std::vector<long long> sampled_states(const AttentionShape& shape);

// The values of the output rank `rank` holds at the end (model::output_held), as (first, count) pairs for
// max_relative_error; every value is held by some rank.
std::vector<std::pair<long long, long long>> held_output(const model::DecodePlan& plan, int rank);

struct RankResult {
  std::vector<float> o;   // the rank's final output, [b][n_h][d]: its part (held_output) filled, the rest 0
  double bytes_sent = 0;  // what it handed to the transport while running the plan
  double elapsed_s = 0;   // from the barrier before to its own end
};

// The ring's two block buffers. A caller that runs a plan again and again passes the same ones every time, as an
// engine allocates its buffers once at start-up: fresh pages on every run made Open MPI's single-copy (CMA)
// transfers 4-5x slower on a 2-core VM (8,192,000 B: 6.6 ms into new pages, 1.4 ms into reused ones).
struct RingBuffers {
  std::vector<std::uint16_t> held, next;
};

// Runs `plan` (made with plan_options()) as rank transport.rank() of transport.ranks() (which must equal the
// plan's GPUs), with `buffers` for the ring (none: its own, new). Throws std::invalid_argument for a plan it
// cannot run.
RankResult run_plan(const model::DecodePlan& plan, Transport& transport, std::uint64_t seed,
                    RingBuffers* buffers = nullptr);

}  // namespace treering::realrun
