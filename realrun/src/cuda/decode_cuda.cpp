// The cuda backend's execution of a plan (cuda_decode.hpp). Every buffer is made before the timed run: the ring
// alternates two blocks of the largest shard's size; the other algorithms' scratch is sized from the plan.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "decode_kernels.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"

namespace treering::realrun::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

template <typename T>
struct Device {  // a device array freed when it goes
  T* data = nullptr;
  size_t size = 0;
  explicit Device(size_t count = 0) : size(count) {
    if (count > 0) check(cudaMalloc(reinterpret_cast<void**>(&data), count * sizeof(T)), "cudaMalloc");
  }
  ~Device() { cudaFree(data); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&& other) noexcept : data(std::exchange(other.data, nullptr)), size(std::exchange(other.size, 0)) {}
  Device& operator=(Device&& other) noexcept {  // swap: the old array goes with `other`
    std::swap(data, other.data);
    std::swap(size, other.size);
    return *this;
  }
  void upload(const std::vector<T>& values) {
    if (!values.empty()) check(cudaMemcpy(data, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
};

struct Stream {  // a non-blocking stream destroyed when it goes
  cudaStream_t handle = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(handle); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// The most states one rank receives in one transfers phase (tree-lse), and the largest transfer's floats.
std::pair<size_t, size_t> incoming(const model::DecodePlan& plan, int rank) {
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

struct GpuDecode::Impl {
  const model::DecodePlan& plan;
  int rank, ranks;
  ncclComm_t comm;
  AttentionShape shape;
  Dtype dtype;
  Stream compute, transfer;
  Device<std::uint16_t> q, own;                // q; this rank's [K | V]
  Device<std::uint16_t> ping, pong;            // the ring's held and incoming blocks
  Device<float> o, lse, empty_lse, part_o, part_lse, top, packed, mine, all;
  std::vector<Device<float>> received;
  double bytes_sent = 0;

  int states() const { return static_cast<int>(shape.states()); }
  int d() const { return shape.head_dim; }
  size_t o_floats() const { return static_cast<size_t>(states() * d()); }
  size_t per_token() const { return static_cast<size_t>(shape.kv_values_per_token()); }
  long long block(int index) const { return plan.shards[static_cast<size_t>((index % ranks + ranks) % ranks)].count; }

  Impl(const model::DecodePlan& p, int r, void* c, std::uint64_t seed)
      : plan(p), rank(r), ranks(static_cast<int>(p.gpus.size())), comm(static_cast<ncclComm_t>(c)), shape(shape_of(p.workload)),
        dtype(dtype_of(p.workload)) {
    const model::Shard& shard = plan.shards[static_cast<size_t>(rank)];
    const Inputs inputs = make_inputs(shape, dtype, shard.first, shard.count, seed);
    q = Device<std::uint16_t>(inputs.q.size());
    q.upload(inputs.q);
    std::vector<std::uint16_t> packed_kv(inputs.k);
    packed_kv.insert(packed_kv.end(), inputs.v.begin(), inputs.v.end());
    own = Device<std::uint16_t>(packed_kv.size());
    own.upload(packed_kv);
    long long largest = 0;
    for (const model::Shard& s : plan.shards) largest = std::max(largest, s.count);
    if (plan.algorithm == model::DecodeAlgorithm::ring) {
      ping = Device<std::uint16_t>(2 * per_token() * static_cast<size_t>(largest));
      pong = Device<std::uint16_t>(2 * per_token() * static_cast<size_t>(largest));
    }
    o = Device<float>(o_floats());
    lse = Device<float>(static_cast<size_t>(states()));
    empty_lse = Device<float>(static_cast<size_t>(states()));
    empty_lse.upload(std::vector<float>(static_cast<size_t>(states()), -std::numeric_limits<float>::infinity()));
    part_o = Device<float>(o_floats());
    part_lse = Device<float>(static_cast<size_t>(states()));
    top = Device<float>(static_cast<size_t>(states()));
    packed = Device<float>(o_floats() + static_cast<size_t>(states()));
    mine = Device<float>(o_floats() + static_cast<size_t>(states()));
    if (plan.algorithm == model::DecodeAlgorithm::allgather_merge) all = Device<float>(mine.size * static_cast<size_t>(ranks));
    const auto [most, floats] = incoming(plan, rank);
    for (size_t i = 0; i < most; ++i) received.emplace_back(floats);
  }

  void attend(const std::uint16_t* kv, long long tokens, float* out_o, float* out_lse) {
    cuda::partial_attention(shape, dtype, q.data, kv, kv + per_token() * static_cast<size_t>(tokens), tokens, out_o,
                            out_lse, 0, compute.handle);
  }

  void send(const void* data, size_t bytes, int to) {
    bytes_sent += static_cast<double>(bytes);
    check(ncclSend(data, bytes, ncclUint8, to, comm, transfer.handle), "ncclSend");
  }

  void copy(float* to, const float* from, size_t floats) {
    check(cudaMemcpyAsync(to, from, floats * sizeof(float), cudaMemcpyDeviceToDevice, compute.handle), "cudaMemcpyAsync");
  }

  // Before the clock: the ring's first held block is this rank's own; the running state empty.
  void reset() {
    if (plan.algorithm == model::DecodeAlgorithm::ring) {
      check(cudaMemcpy(ping.data, own.data, own.size * 2, cudaMemcpyDeviceToDevice), "cudaMemcpy");
      check(cudaMemset(o.data, 0, o.size * sizeof(float)), "cudaMemset");
      check(cudaMemcpy(lse.data, empty_lse.data, lse.size * sizeof(float), cudaMemcpyDeviceToDevice), "cudaMemcpy");
    }
    bytes_sent = 0;
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  // The held block leaves on the transfer stream while the compute stream attends to it (both only read it).
  void ring_pass() {
    std::uint16_t* held = ping.data;
    std::uint16_t* next = pong.data;
    for (int round = 0; round < ranks; ++round) {
      const long long tokens = block(rank - round);
      const long long coming = round < ranks - 1 ? block(rank - round - 1) : 0;
      check(ncclGroupStart(), "ncclGroupStart");
      if (round < ranks - 1 && tokens > 0) send(held, 2 * per_token() * static_cast<size_t>(tokens) * 2, (rank + 1) % ranks);
      if (coming > 0) {
        check(ncclRecv(next, 2 * per_token() * static_cast<size_t>(coming) * 2, ncclUint8, (rank + ranks - 1) % ranks, comm,
                       transfer.handle), "ncclRecv");
      }
      check(ncclGroupEnd(), "ncclGroupEnd");
      attend(held, tokens, part_o.data, part_lse.data);
      detail::merge_into(o.data, lse.data, part_o.data, part_lse.data, states(), d(), compute.handle);
      check(cudaStreamSynchronize(transfer.handle), "cudaStreamSynchronize");
      check(cudaStreamSynchronize(compute.handle), "cudaStreamSynchronize");
      std::swap(held, next);
    }
  }

  void allreduce(float* values, size_t count, ncclRedOp_t op) {
    if (ranks == 1) return;  // nothing to reduce (and no communicator)
    check(ncclAllReduce(values, values, count, ncclFloat, op, comm, compute.handle), "ncclAllReduce");
  }

  // NCCL's all-reduces, as the paper's tree: max of lse, then the sums (fused: one over [numerator | denominator]).
  void tree(bool fused) {
    copy(top.data, lse.data, top.size);
    allreduce(top.data, top.size, ncclMax);
    float* numerator = packed.data;
    float* denominator = packed.data + o_floats();
    detail::numerators(o.data, lse.data, top.data, states(), d(), numerator, denominator, compute.handle);
    if (fused) {
      allreduce(packed.data, packed.size, ncclSum);
    } else {
      allreduce(numerator, o_floats(), ncclSum);
      allreduce(denominator, static_cast<size_t>(states()), ncclSum);
    }
    detail::divide(numerator, denominator, states(), d(), o.data, compute.handle);
  }

  // tree-lse: the plan's point-to-point tree; received states merged on the device (broadcasts replace o).
  void transfers(const model::Phase& phase) {
    const bool reduce = phase.merge_states > 0;
    const size_t floats = o_floats() + (reduce ? static_cast<size_t>(states()) : 0);
    copy(mine.data, o.data, o_floats());
    if (reduce) copy(mine.data + o_floats(), lse.data, static_cast<size_t>(states()));
    check(cudaStreamSynchronize(compute.handle), "cudaStreamSynchronize");
    size_t next = 0;
    check(ncclGroupStart(), "ncclGroupStart");
    for (const model::Transfer& t : phase.sends) {
      if (t.from == rank) send(mine.data, floats * 4, t.to);
      if (t.to == rank) {
        check(ncclRecv(received.at(next++).data, floats * 4, ncclUint8, t.from, comm, transfer.handle), "ncclRecv");
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    check(cudaStreamSynchronize(transfer.handle), "cudaStreamSynchronize");
    for (size_t i = 0; i < next; ++i) {
      if (reduce) detail::merge_into(o.data, lse.data, received[i].data, received[i].data + o_floats(), states(), d(), compute.handle);
      else copy(o.data, received[i].data, o_floats());
    }
  }

  void allgather_merge() {
    copy(mine.data, o.data, o_floats());
    copy(mine.data + o_floats(), lse.data, static_cast<size_t>(states()));
    if (ranks == 1) copy(all.data, mine.data, mine.size);
    else check(ncclAllGather(mine.data, all.data, mine.size, ncclFloat, comm, compute.handle), "ncclAllGather");
    detail::gathered_merge(all.data, ranks, states(), d(), o.data, compute.handle);
  }

  void execute() {
    if (plan.algorithm == model::DecodeAlgorithm::ring) return ring_pass();
    attend(own.data, plan.shards[static_cast<size_t>(rank)].count, o.data, lse.data);
    switch (plan.algorithm) {
      case model::DecodeAlgorithm::tree: return tree(false);
      case model::DecodeAlgorithm::tree_fused: return tree(true);
      case model::DecodeAlgorithm::allgather_merge: return allgather_merge();
      case model::DecodeAlgorithm::tree_lse:
        for (size_t phase = 1; phase < plan.phases.size(); ++phase) transfers(plan.phases[phase]);
        return;
      case model::DecodeAlgorithm::ring:
      case model::DecodeAlgorithm::pass_q:
      case model::DecodeAlgorithm::a2a:
      case model::DecodeAlgorithm::ag_rs: return;  // refused by GpuDecode's constructor
    }
  }
};

GpuDecode::GpuDecode(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed) {
  const int ranks = static_cast<int>(plan.gpus.size());
  if (model::output_split(plan.algorithm) != model::OutputSplit::replicated) {
    throw std::invalid_argument(std::string("--backend cuda does not run ") + model::to_string(plan.algorithm) +
                                " yet (ring, tree, tree-fused, tree-lse, allgather-merge); the cpu backend runs it");
  }
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("no rank " + std::to_string(rank) + " in the plan");
  if (ranks > 1) {
    int members = 0;
    if (nccl_comm == nullptr || ncclCommCount(static_cast<ncclComm_t>(nccl_comm), &members) != ncclSuccess || members != ranks) {
      throw std::invalid_argument("a plan over " + std::to_string(ranks) + " GPUs needs an NCCL communicator of as many");
    }
  }
  const AttentionShape shape = shape_of(plan.workload);
  if (plan.sizes.o_bytes != static_cast<double>(shape.q_values() * 4) || plan.sizes.stats_bytes != static_cast<double>(shape.states() * 4)) {
    throw std::invalid_argument("the cuda backend runs plans made with realrun::plan_options(Backend::cuda) (fp32 partial states)");
  }
  for (const model::Phase& phase : plan.phases) {  // checked before any NCCL group is opened
    const double state = static_cast<double>(shape.q_values() * 4) + (phase.merge_states > 0 ? static_cast<double>(shape.states() * 4) : 0.0);
    for (const model::Transfer& t : phase.sends) {
      if (t.bytes != state) throw std::invalid_argument("the plan's transfer size differs from a state's");
    }
  }
  impl_ = std::make_unique<Impl>(plan, rank, nccl_comm, seed);
}

GpuDecode::~GpuDecode() = default;

GpuRankResult GpuDecode::run() {
  Impl& r = *impl_;
  r.reset();
  const auto start = std::chrono::steady_clock::now();
  r.execute();
  check(cudaStreamSynchronize(r.compute.handle), "cudaStreamSynchronize");
  check(cudaStreamSynchronize(r.transfer.handle), "cudaStreamSynchronize");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool nccl_collectives = r.ranks > 1 && (r.plan.algorithm == model::DecodeAlgorithm::tree ||
                                                r.plan.algorithm == model::DecodeAlgorithm::tree_fused ||
                                                r.plan.algorithm == model::DecodeAlgorithm::allgather_merge);
  GpuRankResult result{std::vector<float>(r.o_floats()), r.bytes_sent, !nccl_collectives, elapsed};
  check(cudaMemcpy(result.o.data(), r.o.data, result.o.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}

bool decode_available(std::string& why) { return available(why); }

GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed) {
  return GpuDecode(plan, rank, nccl_comm, seed).run();
}

}  // namespace treering::realrun::cuda
