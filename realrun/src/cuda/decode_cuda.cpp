// The cuda backend's execution of a plan (cuda_decode.hpp).
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <limits>
#include <utility>
#include <stdexcept>
#include <string>

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
  Device(Device&& other) noexcept : data(other.data), size(other.size) { other.data = nullptr; other.size = 0; }
  Device& operator=(Device&& other) noexcept {
    std::swap(data, other.data);
    std::swap(size, other.size);
    return *this;
  }
  void upload(const std::vector<T>& values) {
    if (!values.empty()) check(cudaMemcpy(data, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
};

struct GpuRun {
  const model::DecodePlan& plan;
  int rank, ranks;
  ncclComm_t comm;
  AttentionShape shape;
  Dtype dtype;
  cudaStream_t compute = nullptr, transfer = nullptr;
  Device<std::uint16_t> q, kv;  // kv: this rank's [K | V]
  Device<float> o, lse;
  double bytes_sent = 0;
  bool collectives_inside_nccl = false;

  int states() const { return static_cast<int>(shape.states()); }
  int d() const { return shape.head_dim; }
  size_t per_token() const { return static_cast<size_t>(shape.kv_values_per_token()); }
  long long block(int index) const { return plan.shards[static_cast<size_t>((index % ranks + ranks) % ranks)].count; }

  void attend(const std::uint16_t* packed, long long tokens, float* out_o, float* out_lse) {
    cuda::partial_attention(shape, dtype, q.data, packed, packed + per_token() * static_cast<size_t>(tokens), tokens, out_o, out_lse, 0, compute);
  }

  void send(const void* data, size_t bytes, int to, cudaStream_t stream) {
    bytes_sent += static_cast<double>(bytes);
    check(ncclSend(data, bytes, ncclUint8, to, comm, stream), "ncclSend");
  }

  // The ring: the held block leaves on the transfer stream while the compute stream attends to it.
  void ring_pass() {
    Device<std::uint16_t> held(std::move(kv)), next;
    Device<float> part_o(static_cast<size_t>(states() * d())), part_lse(static_cast<size_t>(states()));
    std::vector<float> empty_lse(static_cast<size_t>(states()), -std::numeric_limits<float>::infinity());
    check(cudaMemset(o.data, 0, o.size * sizeof(float)), "cudaMemset");
    lse.upload(empty_lse);
    for (int round = 0; round < ranks; ++round) {
      const long long tokens = block(rank - round);
      const long long coming = round < ranks - 1 ? block(rank - round - 1) : 0;
      next = Device<std::uint16_t>(2 * per_token() * static_cast<size_t>(coming));
      check(ncclGroupStart(), "ncclGroupStart");
      if (round < ranks - 1 && tokens > 0) send(held.data, held.size * 2, (rank + 1) % ranks, transfer);
      if (coming > 0) check(ncclRecv(next.data, next.size * 2, ncclUint8, (rank + ranks - 1) % ranks, comm, transfer), "ncclRecv");
      check(ncclGroupEnd(), "ncclGroupEnd");
      attend(held.data, tokens, part_o.data, part_lse.data);
      detail::merge_into(o.data, lse.data, part_o.data, part_lse.data, states(), d(), compute);
      check(cudaStreamSynchronize(transfer), "cudaStreamSynchronize");
      check(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
      held = std::move(next);
    }
  }

  void allreduce(float* values, size_t count, ncclRedOp_t op) {
    if (ranks == 1) return;  // nothing to reduce (and no communicator)
    check(ncclAllReduce(values, values, count, ncclFloat, op, comm, compute), "ncclAllReduce");
  }

  // NCCL's all-reduces, as the paper's tree: max of lse, then the sums (fused: one over [numerator | denominator]).
  void tree(bool fused) {
    collectives_inside_nccl = ranks > 1;
    Device<float> top(static_cast<size_t>(states())), packed(static_cast<size_t>(states() * d() + states()));
    check(cudaMemcpyAsync(top.data, lse.data, top.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    allreduce(top.data, top.size, ncclMax);
    float* numerator = packed.data;
    float* denominator = packed.data + states() * d();
    detail::numerators(o.data, lse.data, top.data, states(), d(), numerator, denominator, compute);
    if (fused) {
      allreduce(packed.data, packed.size, ncclSum);
    } else {
      allreduce(numerator, static_cast<size_t>(states() * d()), ncclSum);
      allreduce(denominator, static_cast<size_t>(states()), ncclSum);
    }
    detail::divide(numerator, denominator, states(), d(), o.data, compute);
  }

  // tree-lse: the plan's point-to-point tree; received states merged on the device (broadcasts replace o).
  void transfers(const model::Phase& phase) {
    const bool reduce = phase.merge_states > 0;
    const size_t floats = static_cast<size_t>(states() * d() + (reduce ? states() : 0));
    Device<float> mine(floats);
    check(cudaMemcpyAsync(mine.data, o.data, o.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    if (reduce) check(cudaMemcpyAsync(mine.data + o.size, lse.data, lse.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
    std::vector<Device<float>> received;
    check(ncclGroupStart(), "ncclGroupStart");
    for (const model::Transfer& t : phase.sends) {
      if (static_cast<double>(floats * 4) != t.bytes) throw std::invalid_argument("transfer size differs from the plan's");
      if (t.from == rank) send(mine.data, floats * 4, t.to, transfer);
      if (t.to == rank) {
        received.emplace_back(floats);
        check(ncclRecv(received.back().data, floats * 4, ncclUint8, t.from, comm, transfer), "ncclRecv");
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    check(cudaStreamSynchronize(transfer), "cudaStreamSynchronize");
    for (const Device<float>& state : received) {
      if (reduce) detail::merge_into(o.data, lse.data, state.data, state.data + o.size, states(), d(), compute);
      else check(cudaMemcpyAsync(o.data, state.data, o.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    }
  }

  void allgather_merge() {
    collectives_inside_nccl = ranks > 1;
    const size_t block = static_cast<size_t>(states() * d() + states());
    Device<float> mine(block), all(block * static_cast<size_t>(ranks));
    check(cudaMemcpyAsync(mine.data, o.data, o.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(mine.data + o.size, lse.data, lse.size * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    if (ranks == 1) check(cudaMemcpyAsync(all.data, mine.data, block * sizeof(float), cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    else check(ncclAllGather(mine.data, all.data, block, ncclFloat, comm, compute), "ncclAllGather");
    detail::gathered_merge(all.data, ranks, states(), d(), o.data, compute);
  }

  void execute() {
    if (plan.algorithm == model::DecodeAlgorithm::ring) return ring_pass();
    attend(kv.data, plan.shards[static_cast<size_t>(rank)].count, o.data, lse.data);
    switch (plan.algorithm) {
      case model::DecodeAlgorithm::tree: return tree(false);
      case model::DecodeAlgorithm::tree_fused: return tree(true);
      case model::DecodeAlgorithm::allgather_merge: return allgather_merge();
      case model::DecodeAlgorithm::tree_lse:
        for (size_t phase = 1; phase < plan.phases.size(); ++phase) transfers(plan.phases[phase]);
        return;
      case model::DecodeAlgorithm::ring: return;
    }
  }
};

}  // namespace

bool decode_available(std::string& why) { return available(why); }

GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed) {
  const int ranks = static_cast<int>(plan.gpus.size());
  if (ranks > 1 && nccl_comm == nullptr) throw std::invalid_argument("a plan over several GPUs needs an NCCL communicator");
  const AttentionShape shape = shape_of(plan.workload);
  if (plan.sizes.o_bytes != static_cast<double>(shape.q_values() * 4)) {
    throw std::invalid_argument("the cuda backend runs plans made with realrun::plan_options() (fp32 partial states)");
  }
  const model::Shard& shard = plan.shards[static_cast<size_t>(rank)];
  const Inputs inputs = make_inputs(shape, dtype_of(plan.workload), shard.first, shard.count, seed);
  GpuRun run{plan, rank, ranks, static_cast<ncclComm_t>(nccl_comm), shape, dtype_of(plan.workload), nullptr, nullptr,
             Device<std::uint16_t>(inputs.q.size()), Device<std::uint16_t>(inputs.k.size() + inputs.v.size()),
             Device<float>(static_cast<size_t>(shape.q_values())), Device<float>(static_cast<size_t>(shape.states()))};
  run.q.upload(inputs.q);
  std::vector<std::uint16_t> packed(inputs.k);
  packed.insert(packed.end(), inputs.v.begin(), inputs.v.end());
  run.kv.upload(packed);
  check(cudaStreamCreate(&run.compute), "cudaStreamCreate");
  check(cudaStreamCreate(&run.transfer), "cudaStreamCreate");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto start = std::chrono::steady_clock::now();
  run.execute();
  check(cudaStreamSynchronize(run.compute), "cudaStreamSynchronize");
  check(cudaStreamSynchronize(run.transfer), "cudaStreamSynchronize");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  GpuRankResult result{std::vector<float>(static_cast<size_t>(shape.q_values())), run.bytes_sent, !run.collectives_inside_nccl, elapsed};
  check(cudaMemcpy(result.o.data(), run.o.data, result.o.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaStreamDestroy(run.compute);
  cudaStreamDestroy(run.transfer);
  return result;
}

}  // namespace treering::realrun::cuda
