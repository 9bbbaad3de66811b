// The cuda backend's execution of a plan (cuda_decode.hpp) over a DeviceComm (NCCL or loopback). Every buffer and
// event is made before the timed run: the ring alternates two blocks of the largest shard's size and hands them
// between its two streams with events; the other algorithms run on one stream; scratch is sized from the plan.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "decode_kernels.hpp"
#include "device_comm.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"

namespace treering::realrun::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
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

struct TimingEvent {  // destroyed when it goes
  cudaEvent_t handle = nullptr;
  explicit TimingEvent(bool timing = false) {
    check(cudaEventCreateWithFlags(&handle, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  }
  ~TimingEvent() { cudaEventDestroy(handle); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
};

struct Stream {  // a non-blocking stream destroyed when it goes
  cudaStream_t handle = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(handle); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
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

struct GpuDecode::Impl {
  const model::DecodePlan& plan;
  int rank, ranks;
  std::unique_ptr<detail::DeviceComm> comm;
  double timeout_s;
  AttentionShape shape;
  Dtype dtype;
  SplitKvAttention kernel;
  Stream compute, transfer;
  TimingEvent start{true}, stop{true}, joined;
  std::vector<TimingEvent> attended, received;  // the ring's hand-overs, one per round
  Device<std::uint16_t> q, own;                // q; this rank's [K | V]
  Device<std::uint16_t> ping, pong;            // the ring's held and incoming blocks
  Device<float> o, lse, empty_lse, part_o, part_lse, top, packed, mine, all;
  std::vector<Device<float>> incoming;         // tree-lse: the states one phase brings

  int states() const { return static_cast<int>(shape.states()); }
  int d() const { return shape.head_dim; }
  size_t o_floats() const { return static_cast<size_t>(states() * d()); }
  size_t per_token() const { return static_cast<size_t>(shape.kv_values_per_token()); }
  long long block(int index) const { return plan.shards[static_cast<size_t>((index % ranks + ranks) % ranks)].count; }
  size_t block_bytes(long long tokens) const { return 2 * per_token() * static_cast<size_t>(tokens) * 2; }  // K and V, 16-bit

  Impl(const model::DecodePlan& p, int r, std::unique_ptr<detail::DeviceComm> c, std::uint64_t seed, double timeout)
      : plan(p), rank(r), ranks(static_cast<int>(p.gpus.size())), comm(std::move(c)), timeout_s(timeout), shape(shape_of(p.workload)),
        dtype(dtype_of(p.workload)), attended(static_cast<size_t>(ranks)), received(static_cast<size_t>(ranks)) {
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
    const auto [most, floats] = most_incoming(plan, rank);
    for (size_t i = 0; i < most; ++i) incoming.emplace_back(floats);
  }

  void attend(const std::uint16_t* kv, long long tokens, float* out_o, float* out_lse) {
    kernel.run(shape, dtype, q.data, kv, kv + per_token() * static_cast<size_t>(tokens), tokens, out_o, out_lse, 0, compute.handle);
  }

  void copy(float* to, const float* from, size_t floats) {
    check(cudaMemcpyAsync(to, from, floats * sizeof(float), cudaMemcpyDeviceToDevice, compute.handle), "cudaMemcpyAsync");
  }

  // Before the barrier and the clock: the ring's first held block is this rank's own; the running state empty.
  void reset() {
    if (plan.algorithm == model::DecodeAlgorithm::ring) {
      check(cudaMemcpyAsync(ping.data, own.data, own.size * 2, cudaMemcpyDeviceToDevice, compute.handle), "cudaMemcpyAsync");
      check(cudaMemsetAsync(o.data, 0, o.size * sizeof(float), compute.handle), "cudaMemsetAsync");
      copy(lse.data, empty_lse.data, lse.size);
    }
    comm->take_bytes_sent();
    wait_for(compute.handle, "its reset");
  }

  // Polls the stream until done or the deadline (a hung peer would block cudaStreamSynchronize forever).
  void wait_for(cudaStream_t stream, const std::string& what) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream);
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady) check(status, "cudaStreamQuery");
      if (std::chrono::steady_clock::now() > deadline) {
        throw GpuHang("rank " + std::to_string(rank) + ": " + what + " did not finish within " + std::to_string(timeout_s) + " s (" +
                      waiting_for() + ")");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  std::string waiting_for() const {
    if (ranks == 1) return "one rank: a device fault or a kernel that does not end";
    if (plan.algorithm == model::DecodeAlgorithm::ring) {
      return "waiting for rank " + std::to_string((rank + ranks - 1) % ranks) + "'s K/V block or rank " + std::to_string((rank + 1) % ranks) +
             " to take this one's";
    }
    return "waiting in a collective or transfer with the other " + std::to_string(ranks - 1) + " ranks: one of them stalled";
  }

  // Round r: the held block leaves on the transfer stream while the compute stream attends to it. The receive into
  // the other block waits until the compute stream has attended to it (round r - 1); the attention waits until the
  // block it reads has arrived (round r - 1). Events, no host synchronisation.
  void ring_pass() {
    std::uint16_t* held = ping.data;
    std::uint16_t* next = pong.data;
    for (int round = 0; round < ranks; ++round) {
      const long long tokens = block(rank - round);
      const long long coming = round < ranks - 1 ? block(rank - round - 1) : 0;
      const auto r = static_cast<size_t>(round);
      if (round > 0) check(cudaStreamWaitEvent(transfer.handle, attended[r - 1].handle, 0), "cudaStreamWaitEvent");
      comm->group_start();
      if (round < ranks - 1 && tokens > 0) comm->send(held, block_bytes(tokens), (rank + 1) % ranks, transfer.handle);
      if (coming > 0) comm->recv(next, block_bytes(coming), (rank + ranks - 1) % ranks, transfer.handle);
      comm->group_end();
      check(cudaEventRecord(received[r].handle, transfer.handle), "cudaEventRecord");
      if (round > 0) check(cudaStreamWaitEvent(compute.handle, received[r - 1].handle, 0), "cudaStreamWaitEvent");
      attend(held, tokens, part_o.data, part_lse.data);
      detail::merge_into(o.data, lse.data, part_o.data, part_lse.data, states(), d(), compute.handle);
      check(cudaEventRecord(attended[r].handle, compute.handle), "cudaEventRecord");
      std::swap(held, next);
    }
  }

  // As the paper's tree: the max of lse, then the sums (fused: one all-reduce over [numerator | denominator]).
  void tree(bool fused) {
    copy(top.data, lse.data, top.size);
    comm->allreduce(top.data, top.size, detail::Reduce::max, compute.handle);
    float* numerator = packed.data;
    float* denominator = packed.data + o_floats();
    detail::numerators(o.data, lse.data, top.data, states(), d(), numerator, denominator, compute.handle);
    if (fused) {
      comm->allreduce(packed.data, packed.size, detail::Reduce::sum, compute.handle);
    } else {
      comm->allreduce(numerator, o_floats(), detail::Reduce::sum, compute.handle);
      comm->allreduce(denominator, static_cast<size_t>(states()), detail::Reduce::sum, compute.handle);
    }
    detail::divide(numerator, denominator, states(), d(), o.data, compute.handle);
  }

  // tree-lse: one phase of the plan's point-to-point tree, on the compute stream (each phase needs the last one's
  // merges); received states merged on the device (broadcasts replace o).
  void transfers(const model::Phase& phase) {
    const bool reduce = phase.merge_states > 0;
    const size_t floats = o_floats() + (reduce ? static_cast<size_t>(states()) : 0);
    copy(mine.data, o.data, o_floats());
    if (reduce) copy(mine.data + o_floats(), lse.data, static_cast<size_t>(states()));
    size_t count = 0;
    comm->group_start();
    for (const model::Transfer& t : phase.sends) {
      if (t.from == rank) comm->send(mine.data, floats * 4, t.to, compute.handle);
      if (t.to == rank) comm->recv(incoming.at(count++).data, floats * 4, t.from, compute.handle);
    }
    comm->group_end();
    for (size_t i = 0; i < count; ++i) {
      if (reduce) detail::merge_into(o.data, lse.data, incoming[i].data, incoming[i].data + o_floats(), states(), d(), compute.handle);
      else copy(o.data, incoming[i].data, o_floats());
    }
  }

  void allgather_merge() {
    copy(mine.data, o.data, o_floats());
    copy(mine.data + o_floats(), lse.data, static_cast<size_t>(states()));
    comm->allgather(mine.data, all.data, mine.size, compute.handle);
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

  // Reset, the ranks' barrier, then the clock: events on the compute stream around the plan, the transfer stream
  // joined into it at the end.
  GpuRankResult run() {
    reset();
    comm->barrier();
    check(cudaEventRecord(start.handle, compute.handle), "cudaEventRecord");
    execute();
    check(cudaEventRecord(joined.handle, transfer.handle), "cudaEventRecord");
    check(cudaStreamWaitEvent(compute.handle, joined.handle, 0), "cudaStreamWaitEvent");
    check(cudaEventRecord(stop.handle, compute.handle), "cudaEventRecord");
    wait_for(compute.handle, "the decode step");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start.handle, stop.handle), "cudaEventElapsedTime");
    GpuRankResult result{std::vector<float>(o_floats()), comm->take_bytes_sent(), comm->collective_bytes_observed() || ranks == 1 ||
                         plan.algorithm == model::DecodeAlgorithm::ring || plan.algorithm == model::DecodeAlgorithm::tree_lse,
                         1e-3 * milliseconds};
    check(cudaMemcpy(result.o.data(), o.data, result.o.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return result;
  }
};

namespace {

void check_plan(const model::DecodePlan& plan, int rank) {
  const int ranks = static_cast<int>(plan.gpus.size());
  if (model::output_split(plan.algorithm) != model::OutputSplit::replicated) {
    throw std::invalid_argument(std::string("--backend cuda does not run ") + model::to_string(plan.algorithm) +
                                " yet (ring, tree, tree-fused, tree-lse, allgather-merge); the cpu backend runs it");
  }
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("no rank " + std::to_string(rank) + " in the plan");
  const AttentionShape shape = shape_of(plan.workload);
  if (plan.sizes.o_bytes != static_cast<double>(shape.q_values() * 4) || plan.sizes.stats_bytes != static_cast<double>(shape.states() * 4)) {
    throw std::invalid_argument("the cuda backend runs plans made with realrun::plan_options(Backend::cuda) (fp32 partial states)");
  }
  for (const model::Phase& phase : plan.phases) {  // checked before any group is opened
    const double state = static_cast<double>(shape.q_values() * 4) + (phase.merge_states > 0 ? static_cast<double>(shape.states() * 4) : 0.0);
    for (const model::Transfer& t : phase.sends) {
      if (t.bytes != state) throw std::invalid_argument("the plan's transfer size differs from a state's");
    }
  }
}

}  // namespace

GpuDecode::GpuDecode(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed, std::function<void()> barrier,
                     double timeout_s) {
  check_plan(plan, rank);
  const int ranks = static_cast<int>(plan.gpus.size());
  if (ranks > 1) {
    int members = 0;
    if (nccl_comm == nullptr || ncclCommCount(static_cast<ncclComm_t>(nccl_comm), &members) != ncclSuccess || members != ranks) {
      throw std::invalid_argument("a plan over " + std::to_string(ranks) + " GPUs needs an NCCL communicator of as many");
    }
  }
  impl_ = std::make_unique<Impl>(plan, rank, detail::nccl_comm(nccl_comm, rank, ranks, std::move(barrier)), seed, timeout_s);
}

GpuDecode::GpuDecode(const model::DecodePlan& plan, int rank, std::unique_ptr<detail::DeviceComm> comm, std::uint64_t seed, double timeout_s) {
  check_plan(plan, rank);
  if (!comm || comm->ranks() != static_cast<int>(plan.gpus.size())) throw std::invalid_argument("the communicator's ranks differ from the plan's");
  impl_ = std::make_unique<Impl>(plan, rank, std::move(comm), seed, timeout_s);
}

GpuDecode::~GpuDecode() = default;

GpuRankResult GpuDecode::run() { return impl_->run(); }

bool decode_available(std::string& why) { return available(why); }

GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed) {
  return GpuDecode(plan, rank, nccl_comm, seed).run();
}

}  // namespace treering::realrun::cuda
