// step_device.hpp: allocation and random filling of a rank, the part marks, the enqueue of a step.
#include "step_device.hpp"

#include <cmath>
#include <stdexcept>

#include "step_kernels.hpp"

namespace treering::realrun::cuda::detail {
namespace {

std::size_t size_of(long long count) { return static_cast<std::size_t>(count); }
std::size_t aligned(std::size_t count) { return (count + 127) / 128 * 128; }  // 256 B steps

// Parameters one layer holds, in the order RankState lays them out.
std::array<std::size_t, 6> layer_sizes(const StepShape& s) {
  const std::size_t h = size_of(s.hidden);
  return {h, size_of(s.qkv_rows()) * h,       h * size_of(s.attention_width()),
          h, 2 * size_of(s.intermediate) * h, h * size_of(s.intermediate)};
}
// The fan-in of each: a matrix's values are uniform with variance 1 / fan-in; a norm's (0) in [-1, 1).
std::array<std::size_t, 6> layer_fan_in(const StepShape& s) {
  return {0, size_of(s.hidden), size_of(s.attention_width()), 0, size_of(s.hidden), size_of(s.intermediate)};
}

}  // namespace

RankState::RankState(const StepShape& s, std::uint64_t seed, int rank) {
  const auto sizes = layer_sizes(s);
  const auto fan_in = layer_fan_in(s);
  std::size_t per_layer = 0;
  for (std::size_t n : sizes) per_layer += aligned(n);
  const std::size_t hidden = size_of(s.hidden), head = size_of(s.vocab) * hidden;
  weights = Device<std::uint16_t>(s.layers * per_layer + aligned(hidden) + aligned(head));
  const std::size_t cache_each = size_of((s.seq_len + 1) * s.batch * s.kv_heads * s.head_dim);
  cache = Device<std::uint16_t>(2 * s.layers * aligned(cache_each));
  std::uint64_t stream_id = step_rank_stream(seed, rank);
  std::size_t at = 0;
  auto take = [&](std::size_t count, std::size_t fan) {
    std::uint16_t* p = weights.data + at;
    fill_uniform(p, count, stream_id++, step_scale(static_cast<long long>(fan)), nullptr);
    at += aligned(count);
    return p;
  };
  for (int l = 0; l < s.layers; ++l) {
    LayerTensors t;
    const std::uint16_t** slots[6] = {&t.attention_norm, &t.qkv, &t.o, &t.mlp_norm, &t.gate_up, &t.down};
    for (int i = 0; i < 6; ++i)
      *slots[i] = take(sizes[static_cast<std::size_t>(i)], fan_in[static_cast<std::size_t>(i)]);
    t.k_cache = cache.data + (2 * static_cast<std::size_t>(l)) * aligned(cache_each);
    t.v_cache = t.k_cache + aligned(cache_each);
    fill_uniform(t.k_cache, cache_each, stream_id++, 1.0f, nullptr);
    fill_uniform(t.v_cache, cache_each, stream_id++, 1.0f, nullptr);
    layers.push_back(t);
  }
  final_norm = take(hidden, 0);
  lm_head = take(head, hidden);
  const std::size_t rows = size_of(s.batch);
  x = Device<std::uint16_t>(rows * hidden);
  h = Device<std::uint16_t>(rows * hidden);
  qkv = Device<std::uint16_t>(rows * size_of(s.qkv_rows()));
  q = Device<std::uint16_t>(rows * size_of(s.attention_width()));
  attended = Device<std::uint16_t>(rows * size_of(s.attention_width()));
  partial = Device<std::uint16_t>(rows * hidden);
  gate_up = Device<std::uint16_t>(rows * 2 * size_of(s.intermediate));
  activated = Device<std::uint16_t>(rows * size_of(s.intermediate));
  logits = Device<std::uint16_t>(rows * size_of(s.vocab));
  o = Device<float>(rows * size_of(s.attention_width()));
  lse = Device<float>(rows * size_of(s.query_heads));
  check(cudaDeviceSynchronize(), "filling the step's weights");
}

PartMarks::~PartMarks() {
  for (cudaEvent_t event : events_) cudaEventDestroy(event);
}

void PartMarks::mark(StepPart part, cudaStream_t stream) {
  const int index = static_cast<int>(part);
  if (index == current_) return;
  cudaEvent_t event = nullptr;
  check(cudaEventCreate(&event), "cudaEventCreate");
  events_.push_back(event);
  parts_.push_back(index);
  current_ = index;
  check(external_ ? cudaEventRecordWithFlags(event, stream, cudaEventRecordExternal) : cudaEventRecord(event, stream),
        "cudaEventRecord (part mark)");
}

void PartMarks::finish(cudaStream_t stream) {
  current_ = -2;
  mark(static_cast<StepPart>(-1), stream);
  parts_.back() = -1;
}

std::array<double, kStepParts> PartMarks::read(double& whole_s) const {
  std::array<double, kStepParts> seconds{};
  whole_s = 0;
  for (std::size_t i = 0; i + 1 < events_.size(); ++i) {
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, events_[i], events_[i + 1]), "cudaEventElapsedTime (part marks)");
    seconds[static_cast<std::size_t>(parts_[i])] += milliseconds * 1e-3;
    whole_s += milliseconds * 1e-3;
  }
  return seconds;
}

std::array<int, kStepParts> PartMarks::intervals() const {
  std::array<int, kStepParts> counts{};
  for (std::size_t i = 0; i + 1 < parts_.size(); ++i) ++counts[static_cast<std::size_t>(parts_[i])];
  return counts;
}

}  // namespace treering::realrun::cuda::detail
