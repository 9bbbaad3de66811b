// decode_step.hpp: the algorithms, each enqueued for all local ranks phase by phase (a phase's exchange needs every
// rank's part of it), over a Fabric.
#include "decode_step.hpp"
#include "treering/model/decode_algorithms.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "decode_kernels.hpp"
#include "device_memory.hpp"
#include "device_inputs.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/realrun/input_hash.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda::detail {
namespace {

// Everything one rank holds on the device.
struct Rank {
  int rank = 0;
  Stream compute, transfer;
  Event joined, done;
  std::vector<Event> attended, received;  // the ring's hand-overs, one per round
  SplitKvAttention kernel;                // its own workspace: ranks attend at once on one GPU
  Device<std::uint16_t> q, own;           // q; this rank's [K | V]
  Device<std::uint16_t> ping, pong;       // the ring's incoming blocks
  Device<float> o, lse, part_o, part_lse, top, packed, mine, all;
  std::vector<Device<float>> incoming;  // tree-lse: the states one phase brings
  Rank(int r, int rounds) : rank(r), attended(static_cast<size_t>(rounds)), received(static_cast<size_t>(rounds)) {}
};

// The most states one rank receives in one transfers phase (tree-lse), and the largest transfer's floats.
std::pair<size_t, size_t> most_incoming(const model::DecodePlan& plan, int rank) {
  size_t most = 0, floats = 0;
  for (const model::Phase& phase : plan.phases) {
    size_t here = 0;
    for (const model::Transfer& t : phase.sends) {
      floats = std::max(floats, static_cast<size_t>(t.bytes / 4));
      here += t.to == rank ? 1 : 0;
    }
    most = std::max(most, here);
  }
  return {most, floats};
}

}  // namespace

void check_cuda_plan(const model::DecodePlan& plan) {
  if (model::algorithm_info(plan).output_split != model::OutputSplit::replicated) {
    throw topologies::InputError(std::string("--backend cuda does not run ") + model::algorithm_info(plan).name +
                                 " yet (ring, tree, tree-fused, tree-lse, allgather-merge); the cpu backend runs it");
  }
  const AttentionShape shape = shape_of(plan.workload);
  if (plan.sizes.o_bytes != static_cast<double>(shape.q_values() * 4) ||
      plan.sizes.stats_bytes != static_cast<double>(shape.states() * 4)) {
    throw topologies::InputError(
        "the cuda backend runs plans made with realrun::plan_options(Backend::cuda) (fp32 partial states)");
  }
  for (const model::Phase& phase : plan.phases) {
    const double state = static_cast<double>(shape.q_values() * 4) +
                         (phase.merge_states > 0 ? static_cast<double>(shape.states() * 4) : 0.0);
    for (const model::Transfer& t : phase.sends) {
      if (t.bytes != state) throw std::logic_error("the plan's transfer size differs from a state's");
      if (t.from == t.to) throw std::logic_error("the plan sends from a rank to itself");
    }
  }
}

struct DecodeStep::Impl {
  const model::DecodePlan& plan;
  Fabric& fabric;
  int ranks;
  AttentionShape shape;
  Dtype dtype;
  Event fork;
  std::vector<std::unique_ptr<Rank>> local;

  int states() const { return static_cast<int>(shape.states()); }
  int d() const { return shape.head_dim; }
  size_t o_floats() const { return static_cast<size_t>(states() * d()); }
  size_t per_token() const { return static_cast<size_t>(shape.kv_values_per_token()); }
  long long block(int index) const { return plan.shards[static_cast<size_t>((index % ranks + ranks) % ranks)].count; }
  size_t block_bytes(long long tokens) const {
    return 2 * per_token() * static_cast<size_t>(tokens) * 2;
  }  // K and V, 16-bit

  Impl(const model::DecodePlan& p, Fabric& f, std::uint64_t seed)
      : plan(p),
        fabric(f),
        ranks(static_cast<int>(p.gpus.size())),
        shape(shape_of(p.workload)),
        dtype(dtype_of(p.workload)) {
    long long largest = 0;
    for (const model::Shard& s : plan.shards) largest = std::max(largest, s.count);
    for (int r : fabric.local_ranks()) local.push_back(make_rank(r, seed, largest));
    fabric.reserve((o_floats() + static_cast<size_t>(states())) / static_cast<size_t>(ranks) + 1);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the inputs are made
  }

  std::unique_ptr<Rank> make_rank(int r, std::uint64_t seed, long long largest) {
    auto rank = std::make_unique<Rank>(r, ranks);
    const model::Shard& shard = plan.shards[static_cast<size_t>(r)];
    const size_t kv = per_token() * static_cast<size_t>(shard.count);
    rank->q = Device<std::uint16_t>(static_cast<size_t>(shape.q_values()));
    rank->own = Device<std::uint16_t>(2 * kv);
    const auto first = static_cast<std::uint64_t>(shard.first) * per_token();
    fill_hashed(rank->q.data, rank->q.size, q_stream(seed), 0, dtype, rank->compute.handle);
    fill_hashed(rank->own.data, kv, k_stream(seed), first, dtype, rank->compute.handle);
    fill_hashed(rank->own.data + kv, kv, v_stream(seed), first, dtype, rank->compute.handle);
    if (model::has_phase(plan, model::PhaseRole::kv_ring)) {
      rank->ping = Device<std::uint16_t>(2 * per_token() * static_cast<size_t>(largest));
      rank->pong = Device<std::uint16_t>(2 * per_token() * static_cast<size_t>(largest));
    }
    for (Device<float>* state : {&rank->o, &rank->part_o}) *state = Device<float>(o_floats());
    for (Device<float>* stats : {&rank->lse, &rank->part_lse, &rank->top})
      *stats = Device<float>(static_cast<size_t>(states()));
    rank->packed = Device<float>(o_floats() + static_cast<size_t>(states()));
    rank->mine = Device<float>(o_floats() + static_cast<size_t>(states()));
    if (model::has_phase(plan, model::PhaseRole::state_gather))
      rank->all = Device<float>(rank->mine.size * static_cast<size_t>(ranks));
    const auto [most, floats] = most_incoming(plan, r);
    for (size_t i = 0; i < most; ++i) rank->incoming.emplace_back(floats);
    return rank;
  }

  void attend(Rank& r, const std::uint16_t* kv, long long tokens, float* out_o, float* out_lse) {
    r.kernel.run(shape, dtype, r.q.data, kv, kv + per_token() * static_cast<size_t>(tokens), tokens, out_o, out_lse, 0,
                 r.compute.handle);
  }
  void copy(Rank& r, float* to, const float* from, size_t floats) {
    check(cudaMemcpyAsync(to, from, floats * sizeof(float), cudaMemcpyDeviceToDevice, r.compute.handle),
          "cudaMemcpyAsync");
  }
  std::vector<RankBuffer> buffers(Device<float> Rank::*member, size_t offset) {
    std::vector<RankBuffer> out;
    for (auto& r : local) out.push_back({r->rank, ((*r).*member).data + offset, r->compute.handle});
    return out;
  }

  // Round r: each rank's held block (its own at round 0, then the one received the round before) leaves on its
  // transfer stream while its compute stream attends to it; the receive into the other block waits until that block
  // was attended (round r - 1); the attention waits until its block arrived. Round 0 writes o directly.
  void ring_pass() {
    auto held = [](Rank& r, int round) { return round == 0 ? r.own.data : round % 2 == 1 ? r.ping.data : r.pong.data; };
    auto next = [](Rank& r, int round) { return round % 2 == 0 ? r.ping.data : r.pong.data; };
    for (int round = 0; round < ranks; ++round) {
      const auto at = static_cast<size_t>(round);
      std::vector<PointOp> ops;
      for (auto& r : local) {
        const long long tokens = block(r->rank - round), coming = round < ranks - 1 ? block(r->rank - round - 1) : 0;
        if (round > 0) wait(r->transfer.handle, r->attended[at - 1]);
        if (round < ranks - 1 && tokens > 0)
          ops.push_back(
              {r->rank, true, (r->rank + 1) % ranks, held(*r, round), block_bytes(tokens), r->transfer.handle});
        if (coming > 0)
          ops.push_back({r->rank, false, (r->rank + ranks - 1) % ranks, next(*r, round), block_bytes(coming),
                         r->transfer.handle});
      }
      fabric.exchange(ops);
      for (auto& r : local) {
        record(r->received[at], r->transfer.handle);
        if (round > 0) wait(r->compute.handle, r->received[at - 1]);
        const long long tokens = block(r->rank - round);
        if (round == 0) {
          attend(*r, held(*r, 0), tokens, r->o.data, r->lse.data);
        } else {
          attend(*r, held(*r, round), tokens, r->part_o.data, r->part_lse.data);
          merge_into(r->o.data, r->lse.data, r->part_o.data, r->part_lse.data, states(), d(), r->compute.handle);
        }
        record(r->attended[at], r->compute.handle);
      }
    }
  }

  // The paper's tree by its phases: the max of lse, the numerators and denominators, their sums (tree-fused: one
  // all-reduce over [numerator | denominator]), the division.
  void lse_max() {
    for (auto& r : local) copy(*r, r->top.data, r->lse.data, static_cast<size_t>(states()));
    fabric.allreduce(buffers(&Rank::top, 0), static_cast<size_t>(states()), Reduce::max);
  }
  void rescale() {
    for (auto& r : local) {
      numerators(r->o.data, r->lse.data, r->top.data, states(), d(), r->packed.data, r->packed.data + o_floats(),
                 r->compute.handle);
    }
  }
  void sum(size_t offset, size_t floats) { fabric.allreduce(buffers(&Rank::packed, offset), floats, Reduce::sum); }
  void divide_all() {
    for (auto& r : local)
      divide(r->packed.data, r->packed.data + o_floats(), states(), d(), r->o.data, r->compute.handle);
  }

  // tree-lse: one phase of the plan's point-to-point tree; received states merged on the device (broadcasts replace o).
  void transfers(const model::Phase& phase) {
    const bool reduce = phase.merge_states > 0;
    const size_t floats = o_floats() + (reduce ? static_cast<size_t>(states()) : 0);
    std::vector<PointOp> ops;
    std::vector<size_t> received(local.size(), 0);
    for (size_t i = 0; i < local.size(); ++i) {
      Rank& r = *local[i];
      copy(r, r.mine.data, r.o.data, o_floats());
      if (reduce) copy(r, r.mine.data + o_floats(), r.lse.data, static_cast<size_t>(states()));
      for (const model::Transfer& t : phase.sends) {
        if (t.from == r.rank) ops.push_back({r.rank, true, t.to, r.mine.data, floats * 4, r.compute.handle});
        if (t.to == r.rank)
          ops.push_back({r.rank, false, t.from, r.incoming.at(received[i]++).data, floats * 4, r.compute.handle});
      }
    }
    fabric.exchange(ops);
    for (size_t i = 0; i < local.size(); ++i) {
      Rank& r = *local[i];
      for (size_t k = 0; k < received[i]; ++k) {
        if (reduce)
          merge_into(r.o.data, r.lse.data, r.incoming[k].data, r.incoming[k].data + o_floats(), states(), d(),
                     r.compute.handle);
        else
          copy(r, r.o.data, r.incoming[k].data, o_floats());
      }
    }
  }

  void gather_states() {
    std::vector<float*> all;
    for (auto& r : local) {
      copy(*r, r->mine.data, r->o.data, o_floats());
      copy(*r, r->mine.data + o_floats(), r->lse.data, static_cast<size_t>(states()));
      all.push_back(r->all.data);
    }
    fabric.allgather(buffers(&Rank::mine, 0), all, o_floats() + static_cast<size_t>(states()));
  }
  void merge_gathered() {
    for (auto& r : local) gathered_merge(r->all.data, ranks, states(), d(), r->o.data, r->compute.handle);
  }

  // One phase, by its role (model::PhaseRole), in the plan's order.
  void run_phase(const model::Phase& phase) {
    using model::PhaseRole;
    const auto all_states = static_cast<size_t>(states());
    switch (phase.role) {
      case PhaseRole::attention:
        for (auto& r : local)
          attend(*r, r->own.data, plan.shards[static_cast<size_t>(r->rank)].count, r->o.data, r->lse.data);
        return;
      case PhaseRole::kv_ring: return ring_pass();
      case PhaseRole::normalise: return;  // the ring's merges keep o normalised
      case PhaseRole::lse_max: return lse_max();
      case PhaseRole::rescale: return rescale();
      case PhaseRole::numerator_sum: return sum(0, o_floats());
      case PhaseRole::denominator_sum: return sum(o_floats(), all_states);
      case PhaseRole::rescaled_sum: return sum(0, o_floats() + all_states);
      case PhaseRole::divide: return divide_all();
      case PhaseRole::state_reduce:
      case PhaseRole::output_broadcast: return transfers(phase);
      case PhaseRole::state_gather: return gather_states();
      case PhaseRole::merge_gathered: return merge_gathered();
      case PhaseRole::query_gather:  // realrun's ranks start with every query (realrun_plans never gather them)
        throw std::logic_error("realrun: a plan that gathers the queries (decode context parallelism) is not run here");
      case PhaseRole::implementation: return;  // an implementation profile's own work: time, not data
      default:
        throw std::logic_error(std::string("the cuda backend has no kernels for a ") + model::to_string(phase.role) +
                               " phase");
    }
  }

  void execute() {
    for (const model::Phase& phase : plan.phases) run_phase(phase);
  }
};

DecodeStep::DecodeStep(const model::DecodePlan& plan, Fabric& fabric, std::uint64_t seed) {
  check_cuda_plan(plan);
  if (fabric.ranks() != static_cast<int>(plan.gpus.size()))
    throw topologies::InputError("the fabric's ranks differ from the plan's");
  impl_ = std::make_unique<Impl>(plan, fabric, seed);
}

DecodeStep::~DecodeStep() = default;

void DecodeStep::enqueue(cudaStream_t main) {
  Impl& s = *impl_;
  record(s.fork, main);
  for (auto& r : s.local) {
    wait(r->compute.handle, s.fork);
    wait(r->transfer.handle, s.fork);
  }
  s.execute();
  for (auto& r : s.local) {
    record(r->joined, r->transfer.handle);
    wait(r->compute.handle, r->joined);
    record(r->done, r->compute.handle);
    wait(main, r->done);
  }
}

std::vector<float> DecodeStep::output(int local) const {
  const Rank& r = *impl_->local.at(static_cast<size_t>(local));
  std::vector<float> o(r.o.size);
  check(cudaMemcpy(o.data(), r.o.data, o.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return o;
}

int DecodeStep::local_count() const { return static_cast<int>(impl_->local.size()); }
int DecodeStep::rank_of(int local) const { return impl_->local.at(static_cast<size_t>(local))->rank; }

}  // namespace treering::realrun::cuda::detail
